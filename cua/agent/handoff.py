"""Human takeover that becomes a skill: `cua run --handoff`.

When a run stops at the skill boundary (or on a confirmation the agent may not take alone), the
person gets a live view with takeover, does the task while the recorder records it, and presses
the stop hotkey or clicks "done" on the page. The demonstration becomes a skill (provenance
"demonstrated") whose postcondition is the effect the person caused; it is verified by replay from reset on >= 2 runs and must fail its
negative control (the final click moved to a neutral spot), then stored. The app is left in the
done state, so the task is resumed and ends; the next run of the same task needs no human.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cua.liveview import open_live
from recorder.capture import Recorder
from recorder.demo import load_demo
from recorder.export import induce_skill
from skills.effects import diff_effects
from skills.graph import state_key
from skills.library import SkillLibrary
from skills.runner import run_skill
from skills.skill import Skill
from skills.verify import negative_control, neutral_point

STOP_HOTKEY = "ctrl+alt+q"


@dataclass
class HandoffResult:
    ok: bool
    message: str
    skill: Skill | None = None
    recording: Path | None = None
    checks: list[str] = field(default_factory=list)


def demonstrated_skill(env: Any, out: Path, task: str, before: Any) -> Skill:
    """The skill a finished recording in `out` teaches, with the effect seen from `before` to now."""
    skill = induce_skill(load_demo(out), app=getattr(env, "app", None) or None)
    effects = diff_effects(before, env.observe())
    post = skill.postcondition.model_copy(update={"effects": effects, "window_title": None})
    return skill.model_copy(update={"description": task, "when_to_use": task, "postcondition": post,
                                    "extra": {**skill.extra, "own_steps": 1}})


def fresh_start(env: Any, timeout: float = 10.0) -> Any:
    """Reset, then look until two looks in a row show the same state: a restarted app's tree fills in
    after its window maps, and a replay grounded on a half-built tree clicks where nothing is yet."""
    obs = env.reset()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        again = env.observe()
        if state_key(again) == state_key(obs):
            return again
        obs = again
    return obs


def _replay_note(res: Any) -> str:
    """A failed replay in words, with where each step's target was found (the first thing to read when
    a replay fails on a loaded machine)."""
    where = ", ".join(f"step {g.get('step')}: {g.get('text')!r} via {g.get('source')} at {tuple(g.get('point', ()))}"
                      for g in res.grounding)
    return f"{res.error}" + (f" (targets: {where})" if where else "")


def verify_demonstrated(env: Any, skill: Skill, runs: int = 2) -> tuple[bool, list[str]]:
    """Replay from reset until `runs` replays showed the effect (one failed replay is allowed and listed:
    a person's demonstration is not thrown away for one slow look), then the negative control (it must
    not show the effect)."""
    if not skill.postcondition.effects:
        return False, ["no effect was seen between the start and the end of the demonstration"]
    checks: list[str] = []
    held = failed = 0
    while held < runs:
        res = run_skill(skill, env, obs=fresh_start(env))
        held, failed = held + res.ok, failed + (not res.ok)
        checks.append(f"replay {held + failed}: {'effect seen' if res.ok else _replay_note(res)}")
        if failed > 1:
            return False, checks
    control = run_skill(negative_control(skill, 1, neutral_point(fresh_start(env))), env)
    checks.append("negative control: " + ("passed too: the effect cannot be told from doing nothing"
                                          if control.ok else "fails, as it must"))
    if control.ok:
        return False, checks
    final = run_skill(skill, env, obs=fresh_start(env))  # leave the app in the done state: the task resumes finished
    checks.append(f"final replay: {'effect seen' if final.ok else _replay_note(final)}")
    return final.ok, checks


def handoff(env: Any, task: str, skills: Path, out: Path, *, say: Callable[[str], None] = print,
            token_file: Path | None = None, timeout: float | None = None,
            why: str = "outside known skills") -> HandoffResult:
    """Hand the task to a person through a takeover live view and keep what they did as a skill.

    `why` says what stopped the agent: the skill boundary, or a confirmation it may not take alone."""
    before = env.observe()
    rec_dir = out / "handoff-recording"
    with open_live(env, takeover=True, token_file=token_file, say=say, done_button=True) as view:
        view.update(step=0, doing=f"waiting for you: {task}", outcome=f"handed to a person ({why})",
                    note=f"do the task in this window, then press {STOP_HOTKEY} or click \"done\" to hand it back")
        say(f"the agent needs you for: {task!r} ({why}). Do it in the live view, then press {STOP_HOTKEY} "
            "or click \"done\" on the page.")
        rec = Recorder.for_env(env, rec_dir, task=task, stop_hotkey=STOP_HOTKEY).start()
        deadline = None if timeout is None else time.monotonic() + timeout
        while not (rec.stopped.is_set() or view.done.is_set()):  # the hotkey, or the page's "done" button
            if deadline is not None and time.monotonic() > deadline:
                break
            rec.wait(0.2)
        rec.stop()
        view.update(doing="learning and verifying the demonstrated skill", outcome="verifying")
        try:
            skill = demonstrated_skill(env, rec_dir, task, before)
        except Exception as e:  # noqa: BLE001 - RecordingError (no actions) and the like end the handoff
            return HandoffResult(False, f"the demonstration could not become a skill: {e}", recording=rec_dir)
        ok, checks = verify_demonstrated(env, skill)
        status = "verified" if ok else "unverified"
        with SkillLibrary(skills) as lib:
            stored = lib.add(skill.model_copy(update={"status": status, "verified_runs": 2 if ok else 0}))
        view.update(doing="done", outcome="success" if ok else "failure", note="; ".join(checks))
    if not ok:
        return HandoffResult(False, f"the demonstrated skill {stored.name!r} was stored unverified: "
                             + "; ".join(checks), stored, rec_dir, checks)
    return HandoffResult(True, f"learned {stored.name!r} from the demonstration ({stored.postcondition.describe()}); "
                         "verified by replay from reset and a failing negative control; the task is done",
                         stored, rec_dir, checks)
