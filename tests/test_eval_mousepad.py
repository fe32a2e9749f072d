"""The bundled mousepad suite on real sandbox desktops: every task's scripted replay passes its
checkers (they can pass) and a do-nothing replay fails them (they can fail)."""

from __future__ import annotations

from pathlib import Path

from cua.eval.runner import EvalConfig, run_eval
from cua.eval.task import load_tasks

SUITE = load_tasks([Path(__file__).parent.parent / "tasks" / "mousepad"])


def test_reference_replays_pass_and_idle_replays_fail(tmp_path):
    assert len(SUITE) >= 15
    cfg = EvalConfig(replay="reference", out=str(tmp_path / "right"), env_options={"sources": "a11y"})
    right = run_eval(SUITE, cfg, workers=2)
    failed = {r.task_id: (r.error, r.details) for r in right if r.outcome != "success"}
    assert not failed
    idle = []
    for t in SUITE:
        w = t.model_copy(deep=True)
        w.reference.actions = ["wait(seconds=0)"]
        idle.append(w)
    wrong = run_eval(idle, cfg.model_copy(update={"out": str(tmp_path / "idle")}), workers=2)
    assert {r.task_id: r.outcome for r in wrong} == {t.id: "failure" for t in SUITE}
