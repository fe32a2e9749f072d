"""The negative control's runs: how many, and how long each looks for the postcondition.

The env and the runs are stand-ins here (the replays' outcomes are scripted); the real runs are checked
end to end by the explorer tests on Chromium, GTK and Qt apps.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import skills.verify as verify
from skills.effects import Effect
from skills.library import SkillLibrary
from skills.runner import POST_TIMEOUT, SkillRunResult
from skills.skill import Condition, Skill, SkillStep


class FakeExplorer:
    """What verification needs of an explorer: reset, a library, notes and an observation."""

    def __init__(self, lib: SkillLibrary) -> None:
        self.lib, self.env, self._obs, self.verify_runs = lib, object(), None, 2
        self.resets, self.notes = 0, []
        self.volatile, self.volatile_slots = set(), set()
        self.graph = SimpleNamespace(state=lambda key: None)

    def reset(self) -> None:
        self.resets += 1

    def observe(self) -> None:
        return None

    def learn_volatile(self, a, b) -> None:
        pass

    def note(self, text: str) -> None:
        self.notes.append(text)

    def check_budget_time(self) -> None:
        pass


def _skill(lib: SkillLibrary, neutral: list[int] | None) -> Skill:
    steps = [SkillStep(action={"kind": "click", "target": {"signature": s}}) for s in ("menu:View", "check:Wrap")]
    effect = Effect(kind="state", signature="check:Wrap", state="checked", before=False, after=True, name="Wrap")
    return lib.add(Skill(name="View › Wrap", app="demo", steps=steps, postcondition=Condition(effects=[effect]),
                         provenance="explored", extra={"own_steps": 1, "neutral": neutral}))


@pytest.fixture
def runs(monkeypatch, tmp_path):
    """Scripted runs: `script` maps a run (the skill's own, or its control) to its outcome; each call is
    logged with its step count and the time it may wait for the postcondition."""
    lib = SkillLibrary(tmp_path / "lib.db")
    log: list[tuple[str, int, float]] = []
    script = {"own": SkillRunResult(ok=True, post_wait=0.0), "control": SkillRunResult(ok=False)}

    def run_skill(skill, env, library=None, obs=None, post_timeout=POST_TIMEOUT, **_):
        kind = "control" if skill.name.endswith("(negative control)") else "own"
        log.append((kind, len(skill.steps), post_timeout))
        return script[kind]

    monkeypatch.setattr(verify, "run_skill", run_skill)
    monkeypatch.setattr(verify, "neutral_point", lambda obs: None)
    return FakeExplorer(lib), lib, log, script


def test_without_a_neutral_spot_the_control_is_one_run_without_the_final_action(runs):
    ex, lib, log, _ = runs
    _skill(lib, neutral=None)
    assert verify.verify_skill(ex, "View › Wrap") == "verified"
    controls = [entry for entry in log if entry[0] == "control"]
    assert controls == [("control", 1, verify.CONTROL_WAIT)]  # the menu opened, the item not clicked, once
    assert ex.resets == 3  # two replays and one control, each from a fresh start


def test_a_postcondition_that_holds_without_the_final_action_is_unverified(runs):
    ex, lib, _, script = runs
    _skill(lib, neutral=None)
    script["control"] = SkillRunResult(ok=True)
    assert verify.verify_skill(ex, "View › Wrap") == "unverified"
    assert lib.get("View › Wrap").extra["status_reason"] == "its postcondition already holds before the final action"


def test_a_slow_effect_gets_a_longer_look_in_its_control(runs):
    """The control looks as long as the replays needed to see the effect, with a margin, never beyond
    the replays' own bound."""
    ex, lib, log, script = runs
    _skill(lib, neutral=[5, 5])
    script["own"] = SkillRunResult(ok=True, post_wait=1.2)
    assert verify.verify_skill(ex, "View › Wrap") == "verified"
    wait = next(w for kind, _, w in log if kind == "control")
    assert wait == pytest.approx(verify.CONTROL_WAIT + 2 * 1.2)
    assert [n for kind, n, _ in log if kind == "control"] == [2]  # the final click moved to the neutral spot
    script["own"] = SkillRunResult(ok=True, post_wait=3.0)
    log.clear()
    _skill(lib, neutral=[5, 5])
    verify.verify_skill(ex, "View › Wrap")
    assert next(w for kind, _, w in log if kind == "control") == POST_TIMEOUT
