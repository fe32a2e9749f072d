"""The human references of the bundled mousepad suite (scripts/record_references.py): each task names
a complete recording and its duration, and recordings replayed by signature on real sandbox
desktops pass the task's checkers (a dialog, a toggle inside it, typing, saving a file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cua.eval.runner import EvalConfig, run_eval
from cua.eval.task import load_tasks
from recorder.demo import load_demo
from recorder.store import Session

SUITE_DIR = Path(__file__).parent.parent / "tasks" / "mousepad"
REFS = SUITE_DIR / "refs"
SUITE = load_tasks([SUITE_DIR])
REPLAYED = (
    "mousepad-open-preferences",  # a dialog from the menus
    "mousepad-find-replace-match-case",  # a toggle inside a dialog
    "mousepad-type-two-lines",  # typing, with a key between the two lines
    "mousepad-save-file",  # a save dialog, a typed path, the file on disk
)


@pytest.mark.parametrize("task", SUITE, ids=[t.id for t in SUITE])
def test_each_task_has_a_complete_human_reference(task):
    ref = task.reference
    assert ref is not None and ref.demonstration, f"{task.id} has no reference.demonstration"
    rec = Path(task.source).parent / ref.demonstration
    assert rec.resolve() == (REFS / task.id).resolve(), "cua eval --replay tasks/mousepad/refs looks here"
    session = Session(rec)
    assert session.complete, f"{rec} was not stopped cleanly (manifest complete flag unset)"
    assert ref.seconds is not None and ref.seconds > 0
    demo = load_demo(rec)
    assert len(demo.steps) == ref.steps > 0
    assert demo.env.startswith("sandbox:mousepad")
    assert all(s.frame() is not None for s in demo.steps), "every step keeps its pre-action keyframe"
    assert demo.end_frame is not None and demo.end_frame() is not None


def test_recorded_references_replay_to_success(tmp_path):
    chosen = [t for t in SUITE if t.id in REPLAYED]
    assert len(chosen) == len(REPLAYED)
    cfg = EvalConfig(replay=str(REFS), out=str(tmp_path / "refs"), env_options={"sources": "a11y"})
    results = run_eval(chosen, cfg, workers=2)
    failed = {r.task_id: (r.error, r.details) for r in results if r.outcome != "success"}
    assert not failed
    assert all(r.reference_seconds and r.reference_seconds > 0 for r in results)
    assert {r.task_id: r.steps for r in results} == {t.id: t.reference.steps for t in chosen}


def test_record_references_script_records_a_task_into_its_suite(tmp_path):
    """The script's example on a one-task copy of the suite: a recording, and the reference block."""
    import shutil
    import subprocess
    import sys

    import yaml

    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(SUITE_DIR / "new-tab.yaml", suite)
    script = Path(__file__).parent.parent / "scripts" / "record_references.py"
    r = subprocess.run(
        [sys.executable, str(script), "--suite", str(suite), "--only", "mousepad-new-tab", "--tries", "2"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    ref = yaml.safe_load((suite / "new-tab.yaml").read_text())["reference"]
    assert ref["demonstration"] == "refs/mousepad-new-tab" and ref["seconds"] > 0 and ref["steps"] == 1
    assert ref["actions"] == ['hotkey("ctrl", "n")']
    rec = suite / "refs" / "mousepad-new-tab"
    assert Session(rec).complete and not (rec / "video.mp4").exists()
    assert [(s.action.kind, s.action.keys) for s in load_demo(rec).steps] == [("hotkey", ["ctrl", "n"])]
    assert load_tasks([suite])[0].reference.demonstration == "refs/mousepad-new-tab"
