"""OSWorld tasks on a cua sandbox and a cua VM: per-task reset + set-up (+ evaluator) time, against OSWorld's
procedure.

Runs OSWorld's own tasks (tasks/osworld, status `ok` here) with `--max-steps 0` on one sandbox, then on
one VM of the `cua vm build --apps osworld` image (reset = restoring its post-boot snapshot; set-up and
evaluator run on the guest), and times each phase. OSWorld's harness (lib_run_single.py) does the same set-up work and then pauses a
fixed 60 s after reset + set-up ("wait for the environment to be ready") and 20 s before evaluating
("wait for the environment to settle"), on top of reverting a VM snapshot. The baseline is that
procedure's lower bound measured in this run: our own measured phase times plus those fixed pauses
(OSWorld's own snapshot revert is left out, in its favour; the VM rows include cua's).
Usage: python benchmarks/osworld_bench.py [--quick] [--vm IMAGE|none] [--out bench-results/osworld.json]
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


def measure(tasks: list, env: str | None) -> tuple[list[dict], float, float]:
    """Run `tasks` with --max-steps 0 on one env (None: the tasks' own sandbox); per-task phases and the
    medians of reset + set-up and of reset + set-up + evaluator over the tasks that ran."""
    with tempfile.TemporaryDirectory() as d:
        try:
            results = run_eval(tasks, EvalConfig(out=d, max_steps=0, env=env))
        finally:
            close_worker_envs()
    per = [{"task": r.task_id, "domain": r.domain, "outcome": r.outcome, "score": r.score, "error": r.error,
            **r.seconds} for r in results]
    ran = [p for p in per if p["outcome"] in ("success", "failure")]
    if not ran:
        raise SystemExit(f"no task ran on {env or 'the sandbox'}: {[(p['task'], p['outcome'], p['error']) for p in per]}")
    return (per, statistics.median(p["reset"] + p["setup"] for p in ran),
            statistics.median(p["reset"] + p["setup"] + p["check"] for p in ran))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="1 os task on the sandbox only")
    ap.add_argument("--domains", default="os,chrome")
    ap.add_argument("--vm", default="cua-osworld", help="the VM image of the VM column (`cua vm build --apps "
                    "osworld`, built here if missing); 'none' leaves the column out")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    run = BenchRun("osworld", args.quick, args.out)
    tasks = osworld_index_tasks(ROOT / "tasks/osworld/test_all.json", args.domains.split(","))
    runnable = [t for t in tasks if check_task(OSWorldTask.model_validate(t.osworld)).kind == "ok"]
    if args.quick:
        runnable = [t for t in runnable if t.id in QUICK]
    envs: dict[str, str | None] = {"sandbox": None}
    if not args.quick and args.vm != "none":
        from vm.image.build import build_image

        build_image(["osworld"], name=args.vm)
        envs["VM"] = f"vm:{args.vm}"
    table = Table(title=f"osworld bench: {len(runnable)} OSWorld tasks ({args.domains}), --max-steps 0")
    for c in ("env", "phase (median per task)", "cua s", "OSWorld procedure s", "speed-up"):
        table.add_column(c)
    summary, detail = [], {"pauses_s": [OSWORLD_PAUSE_AFTER_RESET, OSWORLD_PAUSE_BEFORE_EVAL]}
    for label, env in envs.items():
        per, setup, total = measure(runnable, env)
        ran = [p for p in per if p["outcome"] in ("success", "failure")]
        base_setup = setup + OSWORLD_PAUSE_AFTER_RESET
        base_total = total + OSWORLD_PAUSE_AFTER_RESET + OSWORLD_PAUSE_BEFORE_EVAL
        table.add_row(label, "reset + set-up", f"{setup:.2f}", f"{base_setup:.2f}", f"{base_setup / setup:.1f}x")
        table.add_row(label, "reset + set-up + evaluator", f"{total:.2f}", f"{base_total:.2f}",
                      f"{base_total / total:.1f}x")
        errors = [p for p in per if p["outcome"] == "error"]
        note = f"{len(ran)} tasks, {len(errors)} errors, no-op scores: {sum(p['score'] or 0 for p in ran):g}"
        where = "" if env is None else " on a VM (snapshot reset)"
        summary += [row(f"OSWorld task reset + set-up (median){where}", setup, base_setup,
                        "OSWorld: same work + 60 s pause", unit="s", note=note),
                    row(f"OSWorld task reset + set-up + evaluator (median){where}", total, base_total,
                        "OSWorld: same work + 60 s + 20 s pauses", unit="s", note=note)]
        detail["tasks" if env is None else "vm_tasks"] = per
    Console().print(table)
    print(run.write(detail, summary))


if __name__ == "__main__":
    main()
