"""GUI-DFS coverage on sandbox mousepad vs a random-click baseline, plus the explorer on MiniWoB++ pages.

Coverage = share of mousepad's menu entries (ground truth: its full AT-SPI menu tree, read here by a
separate walker, not by the explorer) that became verified skills. Both runs get the same budgets
(actions, minutes). The explorer's action budget counts exploratory actions (one per candidate tried);
its backtracking and verification replays are reported apart. The baseline (DroidBot's random mode:
random clicks on visible controls, an occasional Escape as "back") is credited with every menu entry
it activated (the screen changed), without having to verify anything.

    python benchmarks/explore_bench.py --quick
    python benchmarks/explore_bench.py --out bench-results/explore.json
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

MENU_ROLES = ("menu", "menu item", "check menu item", "radio menu item")
WALKER = r"""
import json, sys
import pyatspi
want = sys.argv[1]
ROLES = {"menu", "menu item", "check menu item", "radio menu item"}
out = []
def walk(acc, path, depth):
    if depth > 30:
        return
    for i in range(acc.childCount):
        c = acc.getChildAtIndex(i)
        if c is None:
            continue
        role, name = c.getRoleName(), " ".join((c.name or "").split())
        if role in ROLES and name:
            st = c.getState()
            out.append({"path": path + [name], "role": role,
                        "sensitive": bool(st.contains(pyatspi.STATE_SENSITIVE))})
            walk(c, path + [name] if role == "menu" else path, depth + 1)
        else:
            walk(c, path, depth + 1)
for app in pyatspi.Registry.getDesktop(0):
    if app is not None and want in (app.name or "").lower():
        walk(app, [], 0)
        break
print(json.dumps(out))
"""


def menu_truth(env: Any, app: str = "mousepad") -> list[dict[str, Any]]:
    """Every menu entry of the app from its AT-SPI tree (system python + pyatspi), with its path."""
    res = subprocess.run(["/usr/bin/python3", "-s", "-c", WALKER, app], env=env.sandbox.env, capture_output=True,
                         text=True, timeout=120, check=False)
    if res.returncode != 0:
        raise SystemExit(f"AT-SPI walker failed: {res.stderr[-500:]}")
    return json.loads(res.stdout)


def classify_truth(items: list[dict[str, Any]], profile: Any) -> None:
    """Mark entries denied (own or ancestor name on the deny-list) or out of scope (below a no-descend entry)."""
    for it in items:
        names = it["path"]
        it["denied"] = any(profile.denied(n) for n in names)
        it["no_descend"] = any(not profile.descend(n) for n in names[:-1])
        it["name"] = " › ".join(names)


def run_explorer(env: Any, actions: int, minutes: float, verify_runs: int, db: Path, app: str,
                 workers: int = 1) -> dict[str, Any]:
    from skills.explorer import Budget, Explorer
    from skills.graph import UIGraph
    from skills.library import SkillLibrary
    from skills.profile import load_profile

    budget = Budget(max_actions=actions, minutes=minutes)
    t = time.monotonic()
    if workers > 1:
        from cua.env import make_env
        from skills.workers import explore_parallel

        st = explore_parallel(lambda: make_env(f"sandbox:{app}", sources="a11y"), db, load_profile(app), budget,
                              app, workers=workers, verify_runs=verify_runs)
        lib, graph = SkillLibrary(db), UIGraph(db)
    else:
        lib, graph = SkillLibrary(db), UIGraph(db)
        st = Explorer(env, lib, graph, load_profile(app), budget, app=app, verify_runs=verify_runs).run()
    out = {"workers": workers, "seconds": time.monotonic() - t, "explore_actions": st.explore_actions,
           "total_actions": st.total_actions, "resets": st.resets, "escapes": st.escapes,
           "states": graph.counts()["states"], "skills": len(lib), "verified": [s.name for s in lib.list(status="verified")],
           "failed": [s.name for s in lib.list(status="failed")], "stopped": st.stopped, "effects": st.effects,
           "notes": st.notes[:20]}
    graph.close()
    lib.close()
    return out


def run_random(env: Any, actions: int, minutes: float, app: str, seed: int = 0) -> dict[str, Any]:
    """DroidBot-style random exploration; returns the menu paths it activated."""
    from cua.actions import Click, Key
    from skills.explorer import candidates
    from skills.graph import state_key
    from skills.profile import clean_name, load_profile

    prof = load_profile(app)
    rng = random.Random(seed)
    obs = env.reset()
    activated: set[str] = set()
    n, t0, resets = 0, time.monotonic(), 0
    while n < actions and time.monotonic() - t0 < minutes * 60:
        cands = [e for e in candidates(obs) if not prof.denied(e.name)]
        if not cands or rng.random() < 0.05:
            env.act(Key(key="esc"))
        else:
            el = rng.choice(cands)
            env.act(Click(x=el.center[0], y=el.center[1]))
            new = env.observe()
            if state_key(new) != state_key(obs) and el.role in MENU_ROLES:
                menus = [p.split(":", 1)[1] for p in el.path if p.startswith("menu:")]
                activated.add(" › ".join([*(clean_name(m) for m in menus), clean_name(el.name)]))
        n += 1
        obs = env.observe()
        if not obs.elements:
            obs, resets = env.reset(), resets + 1
    return {"seconds": time.monotonic() - t0, "actions": n, "resets": resets, "activated": sorted(activated)}


def coverage(names: list[str], truth: list[dict[str, Any]], scope: str) -> tuple[int, int]:
    pool = [t for t in truth if not t["denied"] and not t["no_descend"]]
    if scope == "enabled":
        pool = [t for t in pool if t["sensitive"]]
    got = set(names)
    return sum(t["name"] in got for t in pool), len(pool)


class MiniWoBEnv:
    """The browser env whose reset() starts a seeded MiniWoB++ episode (so the task page is live)."""

    def __init__(self, task: str, seed: int = 0) -> None:
        from cua.env import make_env
        from cua.eval.miniwob import MiniWoBTask

        self.task = MiniWoBTask(task, seed=seed)
        self.env = make_env("browser:about:blank", sources="dom", size=(400, 400))

    def reset(self):
        self.task.start(self.env)
        return self.env.observe()

    def observe(self):
        return self.env.observe()

    def act(self, action):
        return self.env.act(action)

    def close(self) -> None:
        self.env.close()


def run_miniwob(tasks: list[str], actions: int, minutes: float) -> list[dict[str, Any]]:
    from skills.explorer import Budget, Explorer
    from skills.graph import UIGraph
    from skills.library import SkillLibrary
    from skills.profile import Profile

    rows = []
    for name in tasks:
        with tempfile.TemporaryDirectory() as d:
            env = MiniWoBEnv(name)
            try:
                lib, graph = SkillLibrary(Path(d) / "lib.db"), UIGraph(Path(d) / "lib.db")
                ex = Explorer(env, lib, graph, Profile(app=name), Budget(max_actions=actions, minutes=minutes,
                                                                           max_depth=3), app=name, verify_runs=2)
                t = time.monotonic()
                st = ex.run()
                rows.append({"task": name, "states": graph.counts()["states"], "skills": len(lib),
                             "verified": len(lib.list(status="verified")), "explore_actions": st.explore_actions,
                             "seconds": time.monotonic() - t, "stopped": st.stopped})
                graph.close()
                lib.close()
            finally:
                env.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short budgets (60 actions, 4 minutes; 2 MiniWoB pages)")
    ap.add_argument("--actions", type=int, default=None, help="action budget for both runs (default 300)")
    ap.add_argument("--minutes", type=float, default=None, help="time budget for both runs (default 15)")
    ap.add_argument("--verify-runs", type=int, default=2)
    ap.add_argument("--skip-miniwob", action="store_true")
    ap.add_argument("--workers", type=int, default=1, help="parallel explorers (one sandbox each)")
    ap.add_argument("--out", type=Path, default=Path("bench-results/explore.json"))
    a = ap.parse_args()
    actions = a.actions or (60 if a.quick else 300)
    minutes = a.minutes or (4.0 if a.quick else 15.0)
    console = Console()
    from cua.env import make_env
    from skills.profile import load_profile

    result: dict[str, Any] = {"budget": {"actions": actions, "minutes": minutes}, "quick": a.quick}
    with make_env("sandbox:mousepad", sources="a11y") as env, tempfile.TemporaryDirectory() as d:
        truth = menu_truth(env)
        classify_truth(truth, load_profile("mousepad"))
        console.print(f"ground truth: {len(truth)} menu entries, {sum(not t['denied'] for t in truth)} not denied")
        console.print(f"explorer ({a.workers} worker(s)): {actions} actions / {minutes:g} min ...")
        ex = run_explorer(env, actions, minutes, a.verify_runs, Path(d) / "lib.db", "mousepad", a.workers)
        console.print(f"random baseline: {actions} actions / {minutes:g} min ...")
        rnd = run_random(env, actions, minutes, "mousepad")
    result["truth"] = {"entries": len(truth), "denied": sum(t["denied"] for t in truth),
                       "below_no_descend": sum(t["no_descend"] and not t["denied"] for t in truth),
                       "insensitive": sum(not t["sensitive"] for t in truth)}
    result["explorer"], result["random"] = ex, rnd
    table = Table(title=f"explore_bench: sandbox mousepad, budgets {actions} actions / {minutes:g} min")
    for col in ("run", "coverage (non-denied)", "coverage (non-denied, enabled)", "actions", "seconds", "states"):
        table.add_column(col)
    cov = {}
    for label, names, acts, secs, states in (
            ("GUI-DFS explorer (verified skills)", ex["verified"], f"{ex['explore_actions']} ({ex['total_actions']} total)",
             ex["seconds"], ex["states"]),
            ("random clicks (activated entries)", rnd["activated"], str(rnd["actions"]), rnd["seconds"], "-")):
        c_all, c_en = coverage(names, truth, "all"), coverage(names, truth, "enabled")
        cov[label] = (c_all[0] / max(1, c_all[1]), c_en[0] / max(1, c_en[1]))
        table.add_row(label, f"{c_all[0]}/{c_all[1]} = {cov[label][0]:.0%}", f"{c_en[0]}/{c_en[1]} = {cov[label][1]:.0%}",
                      acts, f"{secs:.0f}", str(states))
    (e_all, e_en), (r_all, r_en) = cov.values()
    result["coverage"] = {"explorer": e_all, "explorer_enabled": e_en, "random": r_all, "random_enabled": r_en,
                          "ratio_vs_random": e_all / r_all if r_all else None}
    result["targets"] = {"explorer_coverage>=0.9": e_all >= 0.9, "ratio>=3": bool(r_all and e_all / r_all >= 3)}
    console.print(table)
    if not a.skip_miniwob:
        tasks = ["click-dialog", "click-tab"] if a.quick else ["click-dialog", "click-tab", "click-collapsible",
                                                               "click-checkboxes", "enter-text"]
        rows = run_miniwob(tasks, 10 if a.quick else 20, 1.5 if a.quick else 3.0)
        result["miniwob"] = rows
        mt = Table(title="explorer on MiniWoB++ pages (browser env)")
        for col in ("task", "states", "skills", "verified", "actions", "seconds"):
            mt.add_column(col)
        for r in rows:
            mt.add_row(r["task"], str(r["states"]), str(r["skills"]), str(r["verified"]), str(r["explore_actions"]),
                       f"{r['seconds']:.0f}")
        console.print(mt)
    console.print(f"explorer/random coverage ratio: {result['coverage']['ratio_vs_random'] or float('nan'):.1f}x; "
                  f"targets: {result['targets']}")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=1))
    console.print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
