"""Exploration coverage on four apps of different shapes, against two baselines, at equal total budgets.

Apps: mousepad (GTK3 editor), galculator (GTK3 keypad), featherpad (Qt5 editor, AT-SPI through the Qt
bridge) and a local dialog-heavy web app in Chromium (benchmarks/apps/notes.html). Ground truth: every
actionable control reachable from the start state, by role, from benchmarks/explore_truth.py (an
independent AT-SPI / DOM walker that shares no code with the explorer). The explorer uses the DEFAULT
profile (no per-app tuning).

Coverage = share of ground-truth controls that became effect-verified skills, for all three runs.
Baselines, same total action budget and time: random clicks (DroidBot random) and a breadth-first
crawler (Crawljax/DroidBot BFS: reset + replay the path to each state, try each control once); they
choose what to click differently and nothing else differs: their clicks that showed an effect become
skills and are verified by the explorer's own code (benchmarks/explore_baselines.py). Every action
counts for every run: exploration, backtracking, verification replays, negative controls, probes,
resets. "Effect seen" is the looser share: controls whose skill was made, verified or not.
False-verified rate: verified skills whose postcondition also holds after their negative control,
re-run here after exploration.

    python benchmarks/explore_bench.py --quick
    python benchmarks/explore_bench.py --minutes 5 --actions 400 --out bench-results/explore.json
    python benchmarks/explore_bench.py --apps featherpad --minutes 30 --actions 0 --strategies explorer

`--actions 0` means no action cap (the time budget alone ends the run). `--strategies explorer` leaves the
baselines out (their numbers at equal actions come from a run that has them).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

from benchmarks._results import BenchRun
from benchmarks._results import row as row_
from benchmarks.explore_truth import ROLE_CLASSES, atspi_truth, dom_truth, role_class

NO_CAP = 10**9  # --actions 0: the time budget alone ends each run
ROOT = Path(__file__).resolve().parents[1]
WEB_APP = ROOT / "benchmarks" / "apps" / "notes.html"
VERIFY_RUNS = 2  # replays from a fresh reset per skill (the standard), the same for all three runs
APPS = {"mousepad": "sandbox", "galculator": "sandbox", "featherpad": "sandbox", "notes-web": "browser"}


def open_env(app: str):
    from cua.env import make_env

    if APPS[app] == "browser":
        return make_env(f"browser:file://{WEB_APP}", sources="dom")
    return make_env(f"sandbox:{app}", sources="a11y")


def truth_for(app: str, env: Any) -> list[dict[str, Any]]:
    env.reset()
    return atspi_truth(env.sandbox.env, app)


def _clean(name: str) -> str:
    return " ".join((name or "").split())


def key_of(role: str, name: str, parent: str) -> tuple[str, str, str] | None:
    cls = role_class(role)
    return None if cls is None else (cls, _clean(name), _clean(parent) if cls == "menu" else "")


def covered(truth: list[dict[str, Any]], keys: set[tuple[str, str, str]], missed: bool = False) -> dict[str, Any]:
    """Truth controls matched by (class, name, parent menu); a menu item whose parent the run could not
    name is matched by name when exactly one truth item has that name. `missed`: also list the others."""
    by_name: dict[tuple[str, str], int] = {}
    for t in truth:
        by_name[(t["key"][0], t["key"][1])] = by_name.get((t["key"][0], t["key"][1]), 0) + 1
    loose = {(c, n) for c, n, _ in keys}
    per: dict[str, list[int]] = {c: [0, 0] for c in ROLE_CLASSES}
    lost: list[str] = []
    for t in truth:
        c, n, p = t["key"]
        hit = (c, n, p) in keys or ((c, n) in loose and by_name[(c, n)] == 1)
        per[c][0] += hit
        per[c][1] += 1
        if not hit:
            lost.append(f"{c}: {p + ' › ' if p else ''}{n}")
    got, total = sum(v[0] for v in per.values()), sum(v[1] for v in per.values())
    out = {"covered": got, "total": total, "share": got / total if total else 0.0,
           "by_role": {c: {"covered": v[0], "total": v[1]} for c, v in per.items() if v[1]}}
    return {**out, "missed": lost} if missed else out


# -- the explorer -------------------------------------------------------------------------------------
def skill_keys(skill: Any) -> set[tuple[str, str, str]]:
    """The ground-truth controls a skill operates: its last control; a drop-down and its option for a choice."""
    path = skill.extra.get("ui_path") or [skill.name]
    if skill.extra.get("kind") == "choose" and len(path) > 1:
        keys = {key_of(skill.extra.get("role", ""), path[-2], ""), key_of("option", path[-1], "")}
        return {k for k in keys if k is not None}
    name, role = path[-1], skill.extra.get("role", "")
    for prefix in ("type ", "right-click "):
        name = name[len(prefix):] if name.startswith(prefix) else name
    if re.search(rf"(^|/){re.escape(role)}:(#\d+)?$", skill.extra.get("target") or "x"):
        name = ""  # an unnamed control, which its UI path calls by its role ("document", "check box")
    key = key_of(role, name, path[-2] if len(path) > 1 else "")
    return {key} if key is not None else set()


def run_strategy(app: str, actions: int, minutes: float, db: Path, strategy: str = "explorer",
                 check_false: bool = False) -> tuple[dict[str, Any], list]:
    """One run of `strategy` (explorer | random | bfs): the same skill maker, verifier and action
    counting for all three (benchmarks/explore_baselines.py); the timeline of verified controls."""
    from benchmarks.explore_baselines import BreadthFirst, RandomWalk
    from skills.explorer import Budget, Explorer
    from skills.graph import UIGraph
    from skills.library import SkillLibrary
    from skills.profile import load_profile

    cls = {"explorer": Explorer, "random": RandomWalk, "bfs": BreadthFirst}[strategy]
    timeline: list[tuple[float, int, set]] = []
    env = open_env(app)
    lib, graph = SkillLibrary(db), UIGraph(db)
    t0 = time.monotonic()

    def snap(st: Any) -> None:
        keys = {k for s in lib.list(status="verified") for k in skill_keys(s)}
        timeline.append((time.monotonic() - t0, st.total_actions, keys))

    false_ok = checked = 0
    try:
        ex = cls(env, lib, graph, load_profile("default"), Budget(max_actions=actions, minutes=minutes),
                 app=app, verify_runs=VERIFY_RUNS, on_progress=snap)
        st = ex.run()
        snap(st)
        spent, resets = st.total_actions, st.resets  # the false-verified check below acts too, outside the budget
        if check_false:
            false_ok, checked = false_verified(ex, lib, limit=8)
    finally:
        env.close()
    seen = {k for s in lib.list() if s.postcondition.effects for k in skill_keys(s)}
    out = {"seen_keys": sorted(seen), "seconds": time.monotonic() - t0, "explore_actions": st.explore_actions,
           "total_actions": spent,
           "resets": resets, "states": graph.counts()["states"], "skills": len(lib),
           "verified": len(lib.list(status="verified")), "unverified": len(lib.list(status="unverified")),
           "failed": len(lib.list(status="failed")), "stopped": st.stopped, "effects": st.effects,
           "false_verified": false_ok, "false_verified_checked": checked,
           "examples": [f"{s.name}: {s.postcondition.describe()}" for s in lib.list(status="verified")[:12]],
           "notes": st.notes[:15]}
    graph.close()
    lib.close()
    return out, timeline


def false_verified(ex: Any, lib: Any, limit: int) -> tuple[int, int]:
    """Re-run the negative control of up to `limit` verified skills, spread evenly over the library; count
    those whose postcondition holds."""
    from skills.runner import run_skill
    from skills.verify import negative_control

    ex.budget.max_actions = ex.stats.total_actions + 40 * limit  # after exploration: not part of its budget
    ex.budget.minutes = 1e9
    bad = n = 0
    verified = lib.list(status="verified")
    for s in verified[::max(1, len(verified) // limit)][:limit]:  # spread over the run, not its first menu
        point = s.extra.get("neutral")
        ex.reset()
        res = run_skill(negative_control(s, int(s.extra.get("own_steps", 1)), tuple(point) if point else None),
                        ex.env, library=lib)
        bad += res.ok
        n += 1
    return bad, n


# -- report -------------------------------------------------------------------------------------------
def cell(row: dict[str, Any], k: str, f: Callable[[dict[str, Any]], str]) -> str:
    """One strategy's entry of a table row, or '-' when that strategy did not run."""
    return f(row[k]) if k in row else "-"


def at(timeline: list, truth: list, seconds: float | None = None, actions: int | None = None) -> float:
    keys: set = set()
    for t, n, k in timeline:
        if (seconds is not None and t > seconds) or (actions is not None and n > actions):
            break
        keys = k
    return covered(truth, keys)["share"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="galculator only, 30 s / 40 actions per run")
    ap.add_argument("--apps", default=None, help=f"comma-separated subset of {','.join(APPS)}")
    ap.add_argument("--actions", type=int, default=None, help="total action budget per run (default 400)")
    ap.add_argument("--minutes", type=float, default=None, help="time budget per run (default 5)")
    ap.add_argument("--out", type=Path, default=None, help="result JSON (default bench-results/explore.json)")
    ap.add_argument("--strategies", default="explorer,random,bfs",
                    help="comma-separated subset of explorer,random,bfs (the explorer always runs)")
    a = ap.parse_args()
    actions = (40 if a.quick else 400) if a.actions is None else (a.actions or NO_CAP)
    runs = ["explorer", *(s for s in ("random", "bfs") if s in a.strategies.split(","))]
    minutes = a.minutes or (0.5 if a.quick else 5.0)
    apps = a.apps.split(",") if a.apps else (["galculator"] if a.quick else list(APPS))
    bench = BenchRun("explore", a.quick, a.out)
    summary: list[dict[str, Any]] = []
    bad = [x for x in apps if x not in APPS]
    if bad:
        raise SystemExit(f"unknown app(s) {bad}; choose from {', '.join(APPS)}")
    console = Console()
    result: dict[str, Any] = {"budget": {"actions": actions, "minutes": minutes}, "quick": a.quick,
                              "profile": "default", "apps": {}}
    checkpoints_t = [m * 60 for m in (0.5, 1, 2, 3, 5, 15, 30) if m <= minutes]
    checkpoints_n = [n for n in (25, 50, 100, 200, 400, 800, 1600, 3200, 6400) if n <= actions]
    for app in apps:
        with tempfile.TemporaryDirectory() as d:
            if APPS[app] == "browser":  # its own Playwright, before any env of this thread
                truth = dom_truth(f"file://{WEB_APP}")
            else:
                env = open_env(app)
                try:
                    truth = truth_for(app, env)
                finally:
                    env.close()
            console.print(f"[bold]{app}[/]: {len(truth)} actionable controls (ground truth); exploring ...")
            timelines: dict[str, list] = {}
            row: dict[str, Any] = {"truth": len(truth), "truth_enabled": sum(t["sensitive"] for t in truth)}
            for name in runs:
                console.print(f"  {name} ...")
                row[name], timelines[name] = run_strategy(app, actions, minutes, Path(d) / f"{name}.db", name,
                                                          check_false=name == "explorer")
        ex = row["explorer"]
        for name, tl in timelines.items():
            final = covered(truth, tl[-1][2] if tl else set(), missed=True)
            row[name]["coverage"] = final
            row[name]["at_minutes"] = {f"{t / 60:g}": at(tl, truth, seconds=t) for t in checkpoints_t}
            row[name]["at_actions"] = {str(n): at(tl, truth, actions=n) for n in checkpoints_n}
        ver = ex["verified"]
        for name in runs:  # skills made, verified or not: the effect was seen once
            row[name]["coverage_effect_seen"] = covered(truth, {tuple(k) for k in row[name].pop("seen_keys")})
        row["false_verified_rate"] = ex["false_verified"] / ex["false_verified_checked"] \
            if ex["false_verified_checked"] else None
        share = row["explorer"]["coverage"]["share"]
        r = row["random"]["coverage"]["share"] if "random" in row else None
        row["ratio_vs_random"] = share / r if r else None
        result["apps"][app] = row
        console.print(f"  explorer {share:.0%} ({ver} verified); "
                      + ", ".join(f"{k} {row[k]['coverage']['share']:.0%}" for k in runs[1:]))
        if "random" in row:
            summary.append(row_(f"{app}: controls in effect-verified skills", share, r,
                                "random clicks, same verification"))
        else:
            summary.append(row_(f"{app}: controls in effect-verified skills ({minutes:g} min)", share, None, ""))
        if "bfs" in row:
            summary.append(row_(f"{app}: vs breadth-first crawler", share, row["bfs"]["coverage"]["share"],
                                "breadth-first, same verification"))
        out = bench.write(json.loads(json.dumps(result, default=list)), summary)  # after every app: a kill keeps the rest
    table = Table(title=f"explore_bench: coverage of actionable controls, {actions} total actions / {minutes:g} min "
                        "per run, default profile")
    for col in ("app", "controls", "explorer (verified)", "random (verified)", "breadth-first (verified)",
                "x random", "effect seen (expl/rand/bfs)", "false-verified", "actions (expl/rand/bfs)"):
        table.add_column(col)
    for app, row in result["apps"].items():
        e = row["explorer"]["coverage"]
        table.add_row(app, str(row["truth"]), f"{e['covered']}/{e['total']} = {e['share']:.0%}",
                      *(cell(row, k, lambda r: f"{r['coverage']['share']:.0%}") for k in ("random", "bfs")),
                      f"{row['ratio_vs_random']:.1f}" if row["ratio_vs_random"] else "-",
                      " / ".join(cell(row, k, lambda r: f"{r['coverage_effect_seen']['share']:.0%}")
                                 for k in ("explorer", "random", "bfs")),
                      f"{row['explorer']['false_verified']}/{row['explorer']['false_verified_checked']}",
                      "/".join(cell(row, k, lambda r: str(r["total_actions"])) for k in ("explorer", "random", "bfs")))
    console.print(table)
    eq = Table(title="coverage at equal TOTAL actions (explorer / random / breadth-first) and at elapsed minutes")
    eq.add_column("app")
    for n in checkpoints_n:
        eq.add_column(f"@{n} act")
    for t in checkpoints_t:
        eq.add_column(f"@{t / 60:g} min")
    for app, row in result["apps"].items():
        cells = [" / ".join(cell(row, k, lambda r, n=n: f"{r['at_actions'][str(n)]:.0%}")
                            for k in ("explorer", "random", "bfs")) for n in checkpoints_n]
        cells += [" / ".join(cell(row, k, lambda r, t=t: f"{r['at_minutes'][f'{t / 60:g}']:.0%}")
                             for k in ("explorer", "random", "bfs")) for t in checkpoints_t]
        eq.add_row(app, *cells)
    console.print(eq)
    roles = Table(title="coverage by role at the end of each run: explorer (verified) / random / breadth-first, "
                        "of the ground truth")
    roles.add_column("app")
    for c in ROLE_CLASSES:
        roles.add_column(c)
    for app, row in result["apps"].items():
        brs = [row[k]["coverage"]["by_role"] for k in runs]
        roles.add_row(app, *(" / ".join(str(br[c]["covered"]) for br in brs) + f" of {brs[0][c]['total']}"
                             if c in brs[0] else "-" for c in ROLE_CLASSES))
    console.print(roles)
    console.print(f"wrote {out}")


if __name__ == "__main__":
    main()
