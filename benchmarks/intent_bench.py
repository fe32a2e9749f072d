"""Understanding requests without a model: paraphrased requests per app, three boundaries, one run.

For each app: the skill library (a fresh exploration with --explore-minutes, else the given --libs
DIR/<app>.db); the fused boundary and the BM25-only one are calibrated on the app's development
split (tasks/paraphrases/<app>/dev) and stored with the library; then every request of every
split is decided by fused (calibrated), fused with the shipped default boundary (what a library
nobody calibrated gets), BM25-only and the earlier word-overlap heuristic (decision time measured
per request), and every decision that runs skills is executed on a sandbox through the eval runner
and scored by the request's checker (equal decisions share one episode). Held-out and sealed
requests are never used for calibration; the sealed split was written after the others and never
looked at while tuning; the fresh split was written by someone who saw only the apps' control lists
(not the matcher, not the other splits) and committed before the round that first measured it; fresh2,
fresh3, fresh4 and then fresh5 were written the same way, each at the start of a later round and before
its tuning, because the split before had by then been looked at.

    python benchmarks/intent_bench.py --libs /tmp/libs               # all three apps
    python benchmarks/intent_bench.py --explore-minutes 15           # explore each app afresh first
    python benchmarks/intent_bench.py --libs /tmp/libs --splits fresh5   # one split (dev still calibrates)
    python benchmarks/intent_bench.py --quick                        # smoke: mousepad decisions, fixture library
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._results import BenchRun, row  # noqa: E402
from cua.agent.boundary import DEFAULT_BOUNDARY, decide, decide_request, retrieve  # noqa: E402
from cua.agent.calibrate import DevRequest, calibrate, covered, verdict  # noqa: E402
from cua.eval.runner import EvalConfig, run_episode  # noqa: E402
from cua.eval.task import load_tasks  # noqa: E402
from skills.library import SkillLibrary  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
APPS = ("mousepad", "galculator", "featherpad")
METHODS = ("fused", "default", "bm25", "heuristic")
SPLITS = ("dev", "heldout", "sealed", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8",
          "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15", "fresh16", "fresh17", "fresh18")
FIXTURE = REPO / "tests" / "data" / "intent_mousepad_skills.json"
QUICK_GRID = {"weights": [0.6], "margins": [0.0, 0.04], "thresholds": [round(0.4 + 0.04 * i, 2) for i in range(8)]}


def dev_request(task: Any) -> DevRequest:
    return DevRequest(task.instruction, [t[len("expect:"):] for t in task.tags if t.startswith("expect:")])


def split_of(task: Any) -> str:
    """The split a request belongs to: its tag other than 'paraphrase', the app and expect:... (a split
    this file does not list yet stays apart from the others)."""
    return next((t for t in task.tags if t != "paraphrase" and t not in APPS and not t.startswith("expect:")),
                "heldout")


def decide_with(method: str, text: str, lib: SkillLibrary) -> tuple[Any, float, float]:
    """The decision, its wall time and its CPU time (all threads) in ms: on a shared, loaded machine the
    CPU time says what the decision costs, the wall time what this machine gave it."""
    t, c = time.perf_counter(), time.process_time()
    if method == "heuristic":
        d = decide(text, retrieve(lib, text, k=5), has_model=False)
    elif method == "default":
        d = decide_request(text, lib, has_model=False, method="fused", bound=dict(DEFAULT_BOUNDARY))
    else:
        d = decide_request(text, lib, has_model=False, method=method)
    return d, (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000


def calls_key(d: Any) -> str:
    if d.kind != "skill":
        return ""
    calls = d.calls or []
    if not calls:
        return json.dumps([[d.skill.name, d.args, None]], sort_keys=True, default=str)
    return json.dumps([[c.skill.name, c.args, c.polarity] for c in calls], sort_keys=True, default=str)


def explore(app: str, db: Path, minutes: float) -> None:
    cmd = [str(REPO / ".venv/bin/cua"), "explore", "--env", f"sandbox:{app}", "--skills", str(db),
           "--minutes", str(minutes)]  # the time is the budget (no action cap by default)
    subprocess.run(cmd, check=True, cwd=REPO, stdout=subprocess.DEVNULL, timeout=minutes * 60 + 600)


def bench_app(app: str, db: Path, tasks: list[Any], out: Path, execute: bool,
              grid: dict[str, Any] | None = None, splits: tuple[str, ...] = SPLITS) -> dict[str, Any]:
    from cua.env import make_env

    uncal = db.with_name(f"{db.stem}-uncalibrated.db")  # the default boundary's episodes run on a library
    lib = SkillLibrary(db)                               # nobody calibrated
    lib.db.execute(f"VACUUM INTO '{uncal}'")
    dev = [t for t in tasks if split_of(t) == "dev"]
    bounds = {m: calibrate(lib, [dev_request(t) for t in dev], m, source=f"tasks/paraphrases/{app}/dev "
                           f"({len(dev)} requests)", **(grid or {})) for m in ("fused", "bm25")}
    decide_with("fused", "warm up", lib)  # model load and skill vectors: once per library, not per request
    tasks = [t for t in tasks if split_of(t) in splits]  # calibration above always uses the dev split
    rows: dict[str, list[dict[str, Any]]] = {m: [] for m in METHODS}
    for m in METHODS:
        for t in tasks:
            d, ms, cpu = decide_with(m, t.instruction, lib)
            req = dev_request(t)
            rows[m].append({"id": t.id, "split": split_of(t), "text": t.instruction,
                            "covered": covered(req, lib), "decision": d.kind, "key": calls_key(d),
                            "verdict": verdict(req, d, lib), "ms": round(ms, 2), "cpu_ms": round(cpu, 2),
                            "reason": d.reason[:200]})
    episodes: dict[tuple[str, str], dict[str, Any]] = {}
    if execute:
        # one episode per decision, except that the heuristic runs its skill another way (the whole skill as
        # explored, no on/off or user's-text handling): its episode is its own, even for the same skill
        todo = {(r["id"], r["key"], m == "heuristic"): (m, r) for m in METHODS for r in rows[m] if r["key"]}
        by_id = {t.id: t for t in tasks}
        env = make_env(f"sandbox:{app}", sources="a11y")
        try:
            for n, ((tid, key, heur), (m, r)) in enumerate(sorted(todo.items())):
                cfg = EvalConfig(model="none", skills=str(uncal if m == "default" else db), out=str(out / app / m),
                                 retrieval="fused" if m == "default" else m)
                res = run_episode(by_id[tid], env, cfg)
                episodes[(tid, key, heur)] = {"outcome": res.outcome, "agent": res.agent_outcome, "error": res.error}
                print(f"  [{app} {n + 1}/{len(todo)}] {m}: {r['text'][:50]!r} -> agent {res.agent_outcome}, "
                      f"checker {res.outcome}", flush=True)
        finally:
            env.close()
    lib.close()
    for m in METHODS:
        for r in rows[m]:
            ep = episodes.get((r["id"], r["key"], m == "heuristic"))
            r["agent"] = ep["agent"] if ep else ("outside known skills" if not r["key"] else None)
            r["checker"] = ep["outcome"] if ep else None
    return {"bounds": {m: {k: v for k, v in b.items() if k != "curve"} for m, b in bounds.items()},
            "curves": {m: b["curve"] for m, b in bounds.items()}, "rows": rows}


def score(rows: list[dict[str, Any]], executed: bool) -> dict[str, Any]:
    cov = [r for r in rows if r["covered"]]
    unc = [r for r in rows if not r["covered"]]
    ms = [r["ms"] for r in rows]
    out = {"covered": len(cov), "uncovered": len(unc),
           "uncovered_refused": sum(r["decision"] != "skill" for r in unc),
           "right_decisions": sum(r["verdict"] == "right" for r in cov),
           "wrong_runs": sum(r["verdict"] == "wrong" for r in rows),
           "decision_ms_median": round(statistics.median(ms), 2) if ms else None,
           "decision_ms_p95": round(sorted(ms)[int(0.95 * (len(ms) - 1))], 2) if ms else None,
           "decision_cpu_ms_median": round(statistics.median([r["cpu_ms"] for r in rows]), 2) if rows else None}
    if executed:
        out["covered_passed"] = sum(r["checker"] == "success" and r["agent"] == "success" for r in cov)
        out["false_successes"] = sum(r["agent"] == "success" and r["checker"] != "success" for r in rows)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--libs", type=Path, help="Directory with <app>.db libraries (copied, never modified)")
    ap.add_argument("--explore-minutes", type=float, default=0, help="Explore each app afresh first")
    ap.add_argument("--no-exec", action="store_true", help="Decisions only (no sandbox episodes)")
    ap.add_argument("--quick", action="store_true", help="smoke run: mousepad decisions only, on the test "
                    "fixture library (20 explored skills), a small calibration grid")
    ap.add_argument("--splits", default=",".join(SPLITS), help="comma-separated splits to decide and run "
                    "(the dev split always calibrates)")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    splits = tuple(a.splits.split(","))
    if unknown := set(splits) - set(SPLITS):
        ap.error(f"unknown split(s) {', '.join(sorted(unknown))}; choose from {', '.join(SPLITS)}")
    apps = ["mousepad"] if a.quick else a.apps.split(",")
    run = BenchRun("intent_bench", a.quick, a.out)
    work = Path(tempfile.mkdtemp(prefix="cua-intent-"))
    results: dict[str, Any] = {"apps": {}}
    summary = []
    for app in apps:
        tasks = load_tasks([REPO / "tasks" / "paraphrases" / app])
        db = work / f"{app}.db"
        if a.quick:
            with SkillLibrary(db) as lib:
                lib.import_json(FIXTURE)
        elif a.libs and (a.libs / f"{app}.db").exists():
            src = SkillLibrary(a.libs / f"{app}.db")  # a consistent copy (WAL included), the original untouched
            src.db.execute(f"VACUUM INTO '{db}'")
            src.close()
        else:
            explore(app, db, a.explore_minutes or 15.0)
        print(f"{app}: {len(SkillLibrary(db))} skills, {len(tasks)} requests", flush=True)
        res = bench_app(app, db, tasks, work / "episodes", execute=not (a.no_exec or a.quick),
                        grid=QUICK_GRID if a.quick else None, splits=splits)
        with SkillLibrary(db) as lib:
            res["library_skills"] = len(lib)
            res["verified"] = sum(s.status == "verified" for s in lib.list())
        res["default_boundary"] = dict(DEFAULT_BOUNDARY)
        executed = not (a.no_exec or a.quick)
        res["scores"] = {m: {s: score([r for r in res["rows"][m] if r["split"] == s], executed)
                             for s in SPLITS} for m in METHODS}
        results["apps"][app] = res
        for s in splits:  # the splits decided and run (the others' scores are empty)
            f, d, b, h = (res["scores"][m][s] for m in METHODS)
            key = "covered_passed" if executed else "right_decisions"
            if f["covered"]:
                summary.append(row(f"{app} {s}: covered requests passed (fused)", f[key] / f["covered"],
                                   b[key] / b["covered"], "bm25 only", "share",
                                   note=f"{f[key]}/{f['covered']}; default boundary {d[key]}/{d['covered']}; "
                                   f"heuristic {h[key]}/{h['covered']}"))
            if f["uncovered"]:
                summary.append(row(f"{app} {s}: uncovered requests refused (fused)",
                                   f["uncovered_refused"] / f["uncovered"], b["uncovered_refused"] / b["uncovered"],
                                   "bm25 only", "share", note=f"{f['uncovered_refused']}/{f['uncovered']}; heuristic "
                                   f"{h['uncovered_refused']}/{h['uncovered']}"))
            if executed:
                summary.append(row(f"{app} {s}: false successes (fused)", f["false_successes"], b["false_successes"],
                                   "bm25 only", "requests", note=f"default boundary {d['false_successes']}; heuristic {h['false_successes']}"))
            summary.append(row(f"{app} {s}: decision time median (fused)", f["decision_ms_median"],
                               h["decision_ms_median"], "heuristic", "ms", note=f"p95 {f['decision_ms_p95']} ms; "
                               f"CPU {f['decision_cpu_ms_median']} ms (all threads)"))
    path = run.write(results, summary)
    print_table(results, not (a.no_exec or a.quick))
    print(f"wrote {path}")


def print_table(results: dict[str, Any], executed: bool) -> None:
    key = "covered_passed" if executed else "right_decisions"
    print("\n| app | split | method | covered passed | uncovered refused | false successes | wrong runs | "
          "decision ms (median / p95) | decision CPU ms |\n|---|---|---|---|---|---|---|---|---|")
    for app, res in results["apps"].items():
        for s in SPLITS:
            for m in METHODS:
                x = res["scores"][m][s]
                if not x["covered"] + x["uncovered"]:
                    continue
                fs = x.get("false_successes", "-")
                print(f"| {app} | {s} | {m} | {x[key]}/{x['covered']} | {x['uncovered_refused']}/{x['uncovered']} | "
                      f"{fs} | {x['wrong_runs']} | {x['decision_ms_median']} / {x['decision_ms_p95']} | "
                      f"{x['decision_cpu_ms_median']} |")
    for app, res in results["apps"].items():
        for m, b in res["bounds"].items():
            print(f"{app} {m}: threshold {b['threshold']}, margin {b['margin']}, weight {b['w']}; dev {b['dev']}")


if __name__ == "__main__":
    main()
