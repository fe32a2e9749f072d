"""How a demonstrated skill is verified: two replays from a settled reset must show its effect (one
failed replay is allowed and listed), then its negative control must not."""

from __future__ import annotations

from types import SimpleNamespace

import cua.agent.handoff as handoff
from cua.perception.elements import Observation, UIElement
from skills.effects import Effect
from skills.skill import Condition, Skill, SkillStep


class Restarting:
    """An app whose menu bar shows only from the second look after a reset (its tree fills in late)."""

    def __init__(self) -> None:
        self.looks = self.resets = 0

    def reset(self) -> Observation:
        self.resets, self.looks = self.resets + 1, 0
        return self.observe()

    def observe(self) -> Observation:
        self.looks += 1
        els = [UIElement(id="f", role="frame", name="App", bbox=(0, 0, 400, 300), source="a11y", states=["showing"])]
        if self.looks > 1:
            els.append(UIElement(id="m", role="menu", name="Search", bbox=(10, 10, 40, 16), source="a11y",
                                 states=["showing", "enabled"], path=["frame:App"]))
        return Observation(elements=els, size=(400, 300))


SKILL = Skill(name="open find", app="demo", description="d",
              steps=[SkillStep(action={"kind": "click", "target": {"text": "Search"}})],
              postcondition=Condition(effects=[Effect(kind="window_opened", signature="dialog:Find", name="Find")]))


def _scripted(monkeypatch, outcomes: list[bool]) -> list[Observation]:
    seen: list[Observation] = []

    def run(skill, env, obs=None, **_):
        seen.append(obs)
        ok = outcomes.pop(0)
        return SimpleNamespace(ok=ok, error=None if ok else "postcondition fails: no dialog 'Find'",
                               grounding=[{"step": 0, "text": "Search", "source": "a11y", "point": [30, 18]}])
    monkeypatch.setattr(handoff, "run_skill", run)
    return seen


def test_replays_start_from_a_settled_screen_and_one_failure_is_listed(monkeypatch):
    seen = _scripted(monkeypatch, [False, True, True, False, True])  # replays, control (fails), final
    ok, checks = handoff.verify_demonstrated(Restarting(), SKILL)
    assert ok, checks
    assert checks[0].startswith("replay 1: postcondition fails") and "'Search' via a11y at (30, 18)" in checks[0]
    assert checks[1:] == ["replay 2: effect seen", "replay 3: effect seen", "negative control: fails, as it must",
                          "final replay: effect seen"]
    replays = [o for o in seen if o is not None]
    assert len(replays) == 4 and all(any(e.name == "Search" for e in o.elements) for o in replays)


def test_two_failed_replays_leave_it_unverified(monkeypatch):
    _scripted(monkeypatch, [True, False, False])
    ok, checks = handoff.verify_demonstrated(Restarting(), SKILL)
    assert not ok and len(checks) == 3 and checks[-1].startswith("replay 3: postcondition fails"), checks


def test_a_control_that_shows_the_effect_too_leaves_it_unverified(monkeypatch):
    _scripted(monkeypatch, [True, True, True])
    ok, checks = handoff.verify_demonstrated(Restarting(), SKILL)
    assert not ok and checks[-1].startswith("negative control: passed too"), checks
