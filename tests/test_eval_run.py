"""Runs of the bundled MiniWoB++ suite: scripted replays pass, wrong replays fail, locally with two
workers and on a local Ray instance; a killed eval resumes; the report shows the JSONL's numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cua.eval.report import load_results, summarize, write_report
from cua.eval.runner import EvalConfig, run_eval
from cua.eval.task import load_tasks

ROOT = Path(__file__).parent.parent
SUITE = load_tasks([ROOT / "tasks" / "miniwob"])


def _wrong(tasks):
    """The same tasks with a deliberately wrong replay: a click on the empty top-left corner."""
    out = []
    for t in tasks:
        w = t.model_copy(deep=True)
        w.reference.actions = ["click(x=3, y=3)"]
        out.append(w)
    return out


def test_scripted_replays_pass_and_wrong_ones_fail_with_two_workers(tmp_path):
    cfg = EvalConfig(replay="reference", out=str(tmp_path / "right"), env_options={"sources": "dom"})
    right = run_eval(SUITE, cfg, workers=2)
    assert {r.task_id: r.outcome for r in right} == {t.id: "success" for t in SUITE}, [r.error for r in right]
    assert all(any(d.startswith("reward=") for d in r.details) for r in right)
    wrong_cfg = cfg.model_copy(update={"out": str(tmp_path / "wrong")})
    wrong = run_eval(_wrong(SUITE), wrong_cfg, workers=2)
    assert {r.outcome for r in wrong} == {"failure"}, [(r.task_id, r.error) for r in wrong if r.outcome != "failure"]
    # resume: a second run over the same out dir runs nothing again
    assert run_eval(SUITE, cfg, workers=2) == []
    assert len(load_results(Path(cfg.out) / "results.jsonl")) == len(SUITE)


def test_ray_runs_episodes_on_actors(tmp_path, monkeypatch):
    monkeypatch.delenv("CUA_VM_MEMORY", raising=False)
    tasks = SUITE[:3]
    cfg = EvalConfig(replay="reference", out=str(tmp_path), env_options={"sources": "dom"})
    results = run_eval(tasks, cfg, workers=2, ray="local")
    import ray

    from cua.eval.ray_runner import run_on_ray

    def actor_env(job: str, cfg_json: str) -> str:  # a local function: Ray ships it by value
        return os.environ.get("CUA_VM_MEMORY", "unset")

    try:  # each actor sets what it is given (--vm-memory's CUA_VM_MEMORY), though the driver has no such variable
        seen = list(run_on_ray(["a", "b"], "{}", 2, "local", actor_env, lambda: None, {"CUA_VM_MEMORY": "768"}))
    finally:
        ray.shutdown()
    assert seen == ["768", "768"] and "CUA_VM_MEMORY" not in os.environ
    assert sorted(r.task_id for r in results) == sorted(t.id for t in tasks)
    assert all(r.outcome == "success" for r in results), [r.error for r in results]


def test_cli_report_numbers_equal_the_jsonl(tmp_path):
    out = tmp_path / "r"
    tasks = [str(ROOT / "tasks" / "miniwob" / f) for f in ("click-test.yaml", "click-button.yaml")]
    proc = subprocess.run([sys.executable, "-m", "cua.cli", "eval", *tasks, "--replay", "reference",
                           "--sources", "dom", "--out", str(out)], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # one wrong result appended by hand, so the page must show a failure too
    bad = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    bad.update(task_id="extra-failed", outcome="failure", steps=7)
    with open(out / "results.jsonl", "a") as f:
        f.write(json.dumps(bad) + "\n")
    report = write_report(out)
    s = summarize(load_results(out / "results.jsonl"))
    from playwright.sync_api import sync_playwright

    from cua.env.browser import find_chromium

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(), args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.goto(report.as_uri())
        assert float(page.get_attribute("#success-rate", "data-value")) == pytest.approx(s["success_rate"])
        assert page.inner_text("#failures") == str(s["failure"]) == "1"
        assert page.inner_text("#total-steps") == str(s["total_steps"])
        rows = page.query_selector_all("tr.task")
        shown = {r.get_attribute("data-task"): (r.get_attribute("data-outcome"), int(r.get_attribute("data-steps")))
                 for r in rows}
        browser.close()
    assert shown == {r.task_id: (r.outcome, r.steps) for r in load_results(out / "results.jsonl")}
    assert 0 < s["success_rate"] < 1 and s["ci95"][0] < s["success_rate"] < s["ci95"][1]


OWNER = """
import os, sys, time
from cua.eval.runner import worker_pool
pool = worker_pool(2)
print(sorted({f.result() for f in [pool.submit(os.getpid) for _ in range(8)]}), flush=True)
time.sleep(600)
"""


def test_pool_workers_end_when_the_eval_is_killed():
    # an orphaned worker would wait for work forever, holding its env (a VM's QEMU, a sandbox)
    import signal
    import time

    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True)
    try:
        pids = json.loads(owner.stdout.readline())
        assert pids and all(os.path.exists(f"/proc/{p}") for p in pids)
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    deadline = time.monotonic() + 30
    while any(os.path.exists(f"/proc/{p}") for p in pids):
        assert time.monotonic() < deadline, f"pool workers {pids} outlived the killed eval"
        time.sleep(0.2)
