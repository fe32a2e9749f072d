"""GUI-DFS on a real keypad app (galculator, GTK3, Xvfb + AT-SPI) with the default profile: a key whose
only effect is the number in the display becomes a verified skill; keys with no visible effect do not,
until they are tried again once the display shows a value (0 after 8 reads 80)."""

from __future__ import annotations

import pytest

from cua.agent.boundary import Call, Decision, decide_request
from cua.agent.skill_calls import run_calls
from skills.effects import element_text, slots
from skills.runner import run_skill
from tests.skills_fixtures import exploration


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    # --only scopes the start-state controls to keep the test short; the profile is the default one
    with exploration(tmp_path_factory.mktemp("keypad") / "lib.db", "sandbox:galculator", "galculator",
                     only=r"^(7|8|0|\+|=)$", max_actions=200, minutes=4, max_depth=2) as run:
        yield run.env, run.lib, run.stats


def test_keypad_key_is_a_skill_verified_by_the_display(explored):
    env, lib, stats = explored
    assert stats.stopped == "graph fully explored", stats.notes
    seven = lib.get("7")
    assert seven is not None and seven.status == "verified" and seven.verified_runs >= 2
    [eff] = [e for e in seven.postcondition.effects if not e.inherited]
    assert eff.kind == "text" and eff.after == "7"
    assert seven.postcondition.describe() == "display changes from 0 to 7"
    assert seven.description.startswith("Press the 7 button")  # a GTK toggle button that never stays down
    assert lib.get("8").postcondition.describe() == "display changes from 0 to 8"
    # '+' on a display showing 0 changes nothing visible: kept, but not verified
    plus = lib.get("+")
    assert plus.status == "unverified" and "no effect" in plus.extra["status_reason"]
    # '0' on a display showing 0 does nothing; tried again after a verified key changed the display, it acts
    assert lib.get("0").status == "unverified"
    [zero] = [s for s in lib.list() if s.name.endswith(" › 0")]
    key = zero.name.split(" › ")[0]  # the context: the last key verified to change the display
    assert key in ("7", "8") and zero.status == "verified", (zero.name, stats.notes)
    assert zero.postcondition.describe() == f"display changes from {key} to {key}0"  # from what the key left
    assert zero.steps[0].action["target"]["text"] == key and len(zero.steps) == 2
    # '+' changes nothing shown even then, but the next key starts a new number instead of appending
    [plus] = [s for s in lib.list() if s.name == f"{key} › +"]
    assert plus.status == "verified" and plus.extra["follow"] == 1, (plus.extra.get("status_reason"), stats.notes)
    assert [s.action["target"]["text"] for s in plus.steps] == [key, "+", key]
    assert plus.postcondition.describe() == f"display changes from {key}{key} to {key}"
    # every action counted, verification and resets included
    assert stats.total_actions > stats.explore_actions + stats.resets


def test_keypad_skill_replays_and_its_effect_is_checked(explored):
    env, lib, _ = explored
    env.reset()
    res = run_skill(lib.get("7"), env, library=lib)
    assert res.ok, res.error
    res = run_skill(lib.get("8"), env, library=lib)  # the display now reads 78, not 8: the effect check fails
    assert not res.ok and "78" in res.error


def test_a_key_after_an_entered_value_runs_its_own_step(explored):
    """'Enter 8 and then a 0': the 0 key was explored after a sample value ("7 › 0"); after the request's
    own 8 it runs alone, and the display must read 80, not 8 with the sample's digits appended."""
    env, lib, _ = explored
    [zero] = [s for s in lib.list() if s.name.endswith(" › 0")]
    env.reset()
    outcome, message = run_calls(Decision(kind="skill", calls=[Call(lib.get("8")), Call(zero)]), env, lib)
    assert outcome == "success", message
    [eff] = [e for e in zero.postcondition.effects if e.kind == "text"]
    assert element_text(slots(env.observe())[eff.slot]) == "80"
    assert "own step" in message


def test_a_calculation_in_words_runs_on_the_explored_keypad_and_is_checked_by_its_result(explored):
    """'what is 80 plus 78': the keys 8 0 + 7 8 = (each the verified skill for that label, pressed alone),
    and success only because the display reads 158."""
    env, lib, _ = explored
    d = decide_request("what is 80 plus 78", lib, has_model=False)
    assert d.kind == "skill", d.reason
    assert [c.skill.name.rsplit(" › ", 1)[-1] for c in d.calls] == ["8", "0", "+", "7", "8", "="]
    env.reset()
    outcome, message = run_calls(d, env, lib)
    assert outcome == "success" and "158" in message, message
    assert "158" in [element_text(e) for e in slots(env.observe()).values()]
    env.reset()
    wrong = Decision(kind="skill", calls=d.calls[:-1], calculation=d.calculation)  # no '=': the display reads 78
    outcome, message = run_calls(wrong, env, lib)
    assert outcome == "failure" and "'78'" in message, message


def test_a_calculation_on_the_number_shown_reads_the_display_first(explored):
    """'add 8 to the number on the display': the keys + 8 = (no digits for the number shown), and the
    result it must show is computed from what the display read before them: 15 after a 7, 16 after an 8."""
    env, lib, _ = explored
    d = decide_request("add 8 to the number on the display", lib, has_model=False)
    assert d.kind == "skill", d.reason
    assert [c.skill.name.rsplit(" › ", 1)[-1] for c in d.calls] == ["+", "8", "="]
    for first, total in (("7", "15"), ("8", "16")):
        env.reset()
        assert run_skill(lib.get(first), env, library=lib).ok
        outcome, message = run_calls(d, env, lib)
        assert outcome == "success" and f"= {total}" in message, message
    env.reset()
    assert run_skill(lib.get("7"), env, library=lib).ok
    short = Decision(kind="skill", calls=d.calls[:-1], calculation=d.calculation)  # no '=': the display reads 8
    outcome, message = run_calls(short, env, lib)
    assert outcome == "failure" and "'8'" in message and "15" in message, message
