"""`cua run` as a user runs it (subprocess): scripted model, openai client against the fake server
process, skills-only runs and the boundary stop, Ctrl+C mid-run, and the desktop stop hotkey."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cua.trajectory import Trajectory
from skills.skill import Skill, SkillParam, SkillStep
from tests.recorder_fixtures import xvfb as bare_xvfb

ROOT = Path(__file__).resolve().parents[1]
CUA = [sys.executable, "-m", "cua.cli"]
PAGE = """<html><body><h1>Form</h1><input aria-label="Query" style="width:300px">
<button onclick="document.title='sent '+document.querySelector('input').value">Go</button></body></html>"""
PLAN = {"thought": "fill and send", "plan": [
    {"kind": "click", "target": {"text": "Query"}}, {"kind": "type", "text": "hello"},
    {"kind": "click", "target": {"text": "Go", "role": "button"}}, {"kind": "done", "message": "sent"}]}


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    p = tmp_path_factory.mktemp("page") / "form.html"
    p.write_text(PAGE)
    return f"browser:{p.as_uri()}"


def _run(args: list[str], env: dict | None = None, timeout: float = 180) -> tuple[int, dict, str]:
    proc = subprocess.run(CUA + args, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    return proc.returncode, (json.loads(lines[-1]) if lines else {}), proc.stderr


def _script(tmp_path: Path, replies: list) -> Path:
    path = tmp_path / "replies.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in replies) + "\n")
    return path


def test_cli_scripted_model(page, tmp_path):
    script = _script(tmp_path, [PLAN])
    code, out, err = _run(["run", "send hello with the form", "--env", page, "--model", f"scripted:{script}",
                           "--out", str(tmp_path / "run")])
    assert code == 0 and out["outcome"] == "success", err
    traj = Trajectory(tmp_path / "run")
    assert [s.action["kind"] for s in traj.steps()] == ["click", "type", "click", "done"]
    assert Path(out["report"]).exists()


def test_cli_openai_model_against_the_fake_server_process(page, tmp_path):
    script = _script(tmp_path, ["```json\n{broken", PLAN])
    server = subprocess.Popen([sys.executable, "-m", "cua.models.fake_server", "--script", str(script),
                               "--port", "0"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:"), line
        base = line.split()[-1]
        code, out, err = _run(["run", "send hello with the form", "--env", page, "--model", "openai:fake-vlm",
                               "--out", str(tmp_path / "run")], env={"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "k"})
        assert code == 0 and out["outcome"] == "success", err
        meta = Trajectory(tmp_path / "run").meta
        assert meta.extra["usage"]["calls"] == 2 and meta.extra["model_calls"] == 2
    finally:
        server.terminate()
        server.wait(10)


def test_cli_model_none_runs_a_covered_task_and_stops_on_an_uncovered_one(page, tmp_path):
    from skills.library import SkillLibrary

    db = tmp_path / "skills.db"
    with SkillLibrary(db) as lib:
        lib.add(Skill(name="send_query", app="browser", status="verified", verified_runs=3,
                      description="Send a query with the form: type it in Query and press Go",
                      parameters=[SkillParam(name="text", description="the query")],
                      steps=[SkillStep(action={"kind": "click", "target": {"text": "Query"}}),
                             SkillStep(action={"kind": "type", "text": "{text}"}),
                             SkillStep(action={"kind": "click", "target": {"text": "Go", "role": "button"}})]))
        lib.add(Skill(name="print_page", app="browser", status="failed", failed_runs=2,
                      description="Print the page"))
    code, out, err = _run(["run", 'send the query "hello world" with the form', "--env", page, "--skills", str(db),
                           "--out", str(tmp_path / "covered")])
    assert code == 0 and out["outcome"] == "success", err
    steps = list(Trajectory(tmp_path / "covered").steps())
    assert [s.action.get("text") for s in steps if s.action["kind"] == "type"] == ["hello world"]
    assert all(s.planner_text.startswith("skill send_query") for s in steps)

    for task in ("book a flight to Paris", "print the page"):
        code, out, err = _run(["run", task, "--env", page, "--skills", str(db), "--out", str(tmp_path / "out")])
        assert code == 1 and out["outcome"] == "outside known skills", err
        assert out["steps"] == 0 and out["nearest_skills"], out
        assert "nearest skills" in err
    assert "recorded as failed" in out["message"]


def test_ctrl_c_mid_run_leaves_a_readable_trajectory(page, tmp_path):
    # The model answers the second call only after 60 s: Ctrl+C must end the run long before that.
    script = _script(tmp_path, [{"plan": [{"kind": "click", "target": {"text": "Query"}}, {"kind": "type", "text": "x"},
                                          {"kind": "click", "target": {"text": "Query"}}]},
                                {"reply": {"plan": [{"kind": "done"}]}, "delay": 60}])
    out_dir = tmp_path / "run"
    proc = subprocess.Popen(CUA + ["run", "slow task", "--env", page, "--model", f"scripted:{script}", "--out",
                                   str(out_dir)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            steps = out_dir / "steps.jsonl"
            if steps.exists() and len(steps.read_text().splitlines()) >= 3:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        time.sleep(0.3)  # now inside the slow model call
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, stderr
    assert json.loads(stdout.splitlines()[-1])["outcome"] == "stopped"
    traj = Trajectory(out_dir)
    assert traj.meta.outcome == "stopped" and "Ctrl+C" in traj.meta.extra["message"]
    assert len(traj) == 3 and (out_dir / "report.html").exists()


def test_stop_hotkey_on_the_desktop(tmp_path):
    from cua.agent.safety import DEFAULT_STOP_HOTKEY, EmergencyStop

    old = os.environ.get("DISPLAY")
    with bare_xvfb((640, 480)) as display:
        try:
            os.environ["DISPLAY"] = display
            stop = EmergencyStop(DEFAULT_STOP_HOTKEY)
            interrupted = False
            with stop:
                assert stop._listener is not None
                try:
                    subprocess.run(["xdotool", "key", "ctrl+alt+Escape"], env={**os.environ, "DISPLAY": display})
                    deadline = time.monotonic() + 10
                    while time.monotonic() < deadline:  # the hotkey's SIGINT interrupts this wait
                        time.sleep(0.05)
                except KeyboardInterrupt:
                    interrupted = True
            assert stop.stopped.is_set() and "hotkey" in stop.reason
            assert interrupted
            assert stop._listener is None, "the listener is released on exit"
        finally:
            subprocess.run(["xdotool", "key", "shift"], env={**os.environ, "DISPLAY": display})  # wakes pynput's
            for t in threading.enumerate():  # record loop so its thread ends before the display goes away
                if "pynput" in type(t).__module__:
                    t.join(5)
            if old is None:
                os.environ.pop("DISPLAY", None)
            else:
                os.environ["DISPLAY"] = old


def test_destructive_action_is_asked_on_the_terminal(tmp_path):
    page = tmp_path / "danger.html"
    page.write_text('<html><body><button onclick="document.title=\'gone\'">Delete account</button></body></html>')
    script = _script(tmp_path, [{"plan": [{"kind": "click", "target": {"text": "Delete account"}}, {"kind": "done"}]}])
    master, slave = os.openpty()  # a real terminal on stdin: the agent must ask, and we answer
    try:
        os.write(master, b"y\n")
        proc = subprocess.run(CUA + ["run", "delete my account", "--env", f"browser:{page.as_uri()}", "--model",
                                     f"scripted:{script}", "--out", str(tmp_path / "run")], cwd=ROOT, stdin=slave,
                              capture_output=True, text=True, timeout=180)
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 0, proc.stderr
    assert "Allow?" in proc.stdout + proc.stderr
    step = next(Trajectory(tmp_path / "run").steps())
    assert step.result["ok"] and "confirmed on the terminal" in step.extra["safety"]
