"""OSWorld tasks on a cua sandbox: per-task reset + set-up (+ evaluator) time, against OSWorld's procedure.

Runs OSWorld's own tasks (tasks/osworld, status `ok` here) with `--max-steps 0` on one sandbox and
times each phase. OSWorld's harness (lib_run_single.py) does the same set-up work and then pauses a
fixed 60 s after reset + set-up ("wait for the environment to be ready") and 20 s before evaluating
("wait for the environment to settle"), on top of reverting a VM snapshot. The baseline is that
procedure's lower bound measured in this run: our own measured phase times plus those fixed pauses
(the snapshot revert, which a VM needs and a sandbox does not, is left out, in OSWorld's favour).
Usage: python benchmarks/osworld_bench.py [--quick] [--out bench-results/osworld.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from benchmarks._results import BenchRun, row  # noqa: E402
from cua.eval.osworld.check import check_task  # noqa: E402
from cua.eval.osworld.spec import OSWorldTask  # noqa: E402
from cua.eval.runner import EvalConfig, close_worker_envs, run_eval  # noqa: E402
from cua.eval.task import osworld_index_tasks  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OSWORLD_PAUSE_AFTER_RESET = 60.0  # lib_run_single.py: time.sleep(60) after env.reset(task_config)
OSWORLD_PAUSE_BEFORE_EVAL = 20.0  # lib_run_single.py: time.sleep(20) before env.evaluate()
QUICK = ["94d95f96-9699-4208-98ba-3c3119edf9c2"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="1 os task instead of every runnable os/chrome task")
    ap.add_argument("--domains", default="os,chrome")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    run = BenchRun("osworld", args.quick, args.out)
    tasks = osworld_index_tasks(ROOT / "tasks/osworld/test_all.json", args.domains.split(","))
    runnable = [t for t in tasks if check_task(OSWorldTask.model_validate(t.osworld)).kind == "ok"]
    if args.quick:
        runnable = [t for t in runnable if t.id in QUICK]
    with tempfile.TemporaryDirectory() as d:
        try:
            results = run_eval(runnable, EvalConfig(out=d, max_steps=0))
        finally:
            close_worker_envs()
    per = [{"task": r.task_id, "domain": r.domain, "outcome": r.outcome, "score": r.score, **r.seconds}
           for r in results]
    ran = [p for p in per if p["outcome"] in ("success", "failure")]
    if not ran:
        raise SystemExit(f"no task ran: {[(r.task_id, r.outcome, r.error) for r in results]}")
    setup = statistics.median(p["reset"] + p["setup"] for p in ran)
    total = statistics.median(p["reset"] + p["setup"] + p["check"] for p in ran)
    table = Table(title=f"osworld bench: {len(ran)} OSWorld tasks ({args.domains}), --max-steps 0, one sandbox")
    for c in ("phase (median per task)", "cua s", "OSWorld procedure s", "speed-up"):
        table.add_column(c)
    base_setup, base_total = setup + OSWORLD_PAUSE_AFTER_RESET, total + OSWORLD_PAUSE_AFTER_RESET + OSWORLD_PAUSE_BEFORE_EVAL
    table.add_row("reset + set-up", f"{setup:.2f}", f"{base_setup:.2f}", f"{base_setup / setup:.1f}x")
    table.add_row("reset + set-up + evaluator", f"{total:.2f}", f"{base_total:.2f}", f"{base_total / total:.1f}x")
    Console().print(table)
    errors = [p for p in per if p["outcome"] == "error"]
    note = f"{len(ran)} tasks, {len(errors)} errors, no-op scores: {sum(p['score'] or 0 for p in ran):g}"
    summary = [row("OSWorld task reset + set-up (median)", setup, base_setup, "OSWorld: same work + 60 s pause",
                   unit="s", note=note),
               row("OSWorld task reset + set-up + evaluator (median)", total, base_total,
                   "OSWorld: same work + 60 s + 20 s pauses", unit="s", note=note)]
    print(run.write({"tasks": per, "pauses_s": [OSWORLD_PAUSE_AFTER_RESET, OSWORLD_PAUSE_BEFORE_EVAL]}, summary))


if __name__ == "__main__":
    main()
