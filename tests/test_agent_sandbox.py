"""The agent on a real sandbox desktop (Xvfb + openbox + mousepad, AT-SPI), model over real HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cua.agent.loop import run_task
from cua.models.fake_server import FakeServer
from cua.trajectory import Trajectory
from skills.skill import Skill, SkillParam, SkillStep

ROOT = Path(__file__).resolve().parents[1]
TYPE_AND_FIND = {"thought": "type, then search with the find bar", "plan": [
    {"kind": "type", "text": "hello world"}, {"kind": "hotkey", "keys": ["ctrl", "f"]},
    {"kind": "type", "text": "world"}]}


@pytest.fixture(scope="module")
def env():
    from cua.env.desktop import SandboxEnv

    with SandboxEnv("mousepad", sources="a11y") as e:
        yield e


def _element(obs, role: str, **kw):
    return next((e for e in obs.elements if e.role == role and all(getattr(e, k) == v for k, v in kw.items())), None)


def _find(env, role: str, timeout: float = 30.0, **kw):
    """Observe until the element shows up (AT-SPI can answer partially on a loaded machine), bounded."""
    deadline = time.monotonic() + timeout
    while True:
        hit = _element(env.observe(), role, **kw)
        if hit is not None or time.monotonic() > deadline:
            return hit
        time.sleep(0.2)


def test_type_then_find_through_the_fake_server(env, tmp_path, monkeypatch):
    env.reset()
    with FakeServer([TYPE_AND_FIND, {"thought": "1 occurrence shown", "plan": [{"kind": "done"}]}]) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        res = run_task('type "hello world" in mousepad, then find "world" with the find bar', env,
                       model="openai:fake", out=tmp_path / "run")
        assert res.outcome == "success", res.message
        # Planned once; asked again only because the plan ended without `done`, and the model
        # then saw the find bar's result on the screen.
        assert res.model_calls == 2 and res.steps == 3
        second = srv.state.requests[1]["messages"][-1]["content"][0]["text"]
        assert '"1 occurrence"' in second.split("<screen>", 1)[1]
    assert _find(env, "text", value="hello world") is not None
    assert _find(env, "label", name="1 occurrence") is not None
    kinds = [s.action["kind"] for s in Trajectory(res.trajectory_dir).steps()]
    assert kinds == ["type", "hotkey", "type", "done"]


def test_quit_is_denied_without_a_terminal(env, tmp_path):
    from cua.models.scripted import ScriptedModel

    env.reset()
    model = ScriptedModel([{"plan": [{"kind": "hotkey", "keys": ["ctrl", "q"]}]},
                           {"plan": [{"kind": "fail", "reason": "quitting was denied"}]}])
    res = run_task("quit mousepad", env, model=model, out=tmp_path / "run")
    assert res.outcome == "failure"
    assert "not a terminal" in model.prompts[1].text  # the denial went back to the planner
    assert "Mousepad" in env.observe().window_title  # still running


def test_model_none_runs_a_verified_skill(env, tmp_path):
    from skills.library import SkillLibrary

    env.reset()
    editor = _find(env, "text")
    db = tmp_path / "skills.db"
    with SkillLibrary(db) as lib:
        lib.add(Skill(name="type_text", app="mousepad", status="verified", verified_runs=2,
                      description="Type text into the mousepad document",
                      parameters=[SkillParam(name="text", description="the text to type")],
                      steps=[SkillStep(action={"kind": "click", "target": {"signature": editor.signature}}),
                             SkillStep(action={"kind": "type", "text": "{text}"})]))
    res = run_task('type the text "skills first" into the document', env, model="none", skills=db,
                   out=tmp_path / "run")
    assert res.outcome == "success", res.message
    assert res.model_calls == 0
    assert _find(env, "text", value="skills first") is not None


@pytest.mark.parametrize("kind", ["scripted", "openai"])
def test_cli_on_sandbox_mousepad(tmp_path, kind):
    script = tmp_path / "replies.jsonl"
    script.write_text("\n".join(json.dumps(r) for r in [TYPE_AND_FIND, {"plan": [{"kind": "done"}]}]) + "\n")
    args = [sys.executable, "-m", "cua.cli", "run", 'type "hello world", then find "world"', "--env",
            "sandbox:mousepad", "--sources", "a11y", "--out", str(tmp_path / "run")]
    extra_env = {}
    srv = None
    if kind == "scripted":
        args += ["--model", f"scripted:{script}"]
    else:
        srv = FakeServer(script).start()
        args += ["--model", "openai:fake-vlm"]
        extra_env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "k"}
    try:
        proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=240,
                              env={**os.environ, **extra_env})
    finally:
        if srv is not None:
            srv.stop()
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1])["outcome"] == "success"
    traj = Trajectory(tmp_path / "run")
    assert traj.meta.env == "sandbox:mousepad" and len(traj) == 4
    assert (tmp_path / "run" / "report.html").exists()
