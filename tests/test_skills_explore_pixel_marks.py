"""GUI-DFS on a toolkit that hides check and radio state: mousepad builds its menus from a GMenu model,
and GTK then exposes Word Wrap and the Filetype languages as plain 'menu item's with no checked state.
The explorer reads their indicator from pixels after reopening the menu, so choosing a language is an
effect ("turns on C"), verified on two replays from reset, and a neutral click in its place fails.
Default profile, plus denials that keep the run short (only a few of Document's items)."""

from __future__ import annotations

import pytest

from cua.actions import Key
from skills.effects import check_revealed, is_menu_item
from skills.graph import is_visible
from skills.intent import with_polarity
from skills.runner import run_skill
from skills.verify import negative_control
from tests.skills_fixtures import exploration, keeping

KEEP = ("document", "word wrap", "filetype", "source", "c", "c\\+\\+", "tab size", "2", "3")


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    with exploration(tmp_path_factory.mktemp("marks") / "lib.db", "sandbox:mousepad", "mousepad", only="^Document$",
                     profile=keeping(*KEEP), max_actions=100000, minutes=6) as run:
        yield run.lib, run.env, run.stats


def test_a_language_chosen_in_a_model_menu_is_verified_by_its_mark(explored):
    lib, _, _ = explored
    c = lib.get("Document › Filetype › Source › C")
    assert c is not None, [s.name for s in lib.list()]
    assert c.status == "verified" and c.verified_runs >= 2, c.extra.get("status_reason")
    eff = next(e for e in c.postcondition.effects if e.kind == "state")
    assert eff.pixels and eff.after is True and eff.reveal
    assert "turns on C" in c.postcondition.describe()


def test_a_check_item_without_state_is_verified_by_its_mark(explored):
    lib, _, _ = explored
    wrap = lib.get("Document › Word Wrap")
    assert wrap is not None, [s.name for s in lib.list()]
    assert wrap.status == "verified", wrap.extra.get("status_reason")
    assert any(e.pixels and e.state == "checked" for e in wrap.postcondition.effects)


def test_the_mark_is_not_seen_when_the_final_click_goes_to_a_neutral_spot(explored):
    """The negative control, with its menus then closed so that the mark alone decides."""
    lib, env, _ = explored
    c = lib.get("Document › Filetype › Source › C")
    assert c is not None
    point = c.extra.get("neutral")
    res = run_skill(negative_control(c, int(c.extra.get("own_steps", 1)), tuple(point) if point else None),
                    env, library=lib, obs=env.reset())
    assert not res.ok
    obs = res.observation
    for _ in range(4):
        if not any(is_menu_item(e) and is_visible(e, obs.size) for e in obs.elements):
            break
        env.act(Key(key="esc"))
        obs = env.observe()
    mark = [e for e in c.postcondition.effects if e.pixels]
    _, problems = check_revealed(env, mark, obs)
    assert problems and "unmarked (pixels)" in problems[0], problems
    done = run_skill(c, env, library=lib, obs=env.reset())  # and the skill itself still shows it
    assert done.ok, done.error


def test_turn_on_and_off_read_the_mark(explored):
    """"Turn on word wrap" when it is on leaves it alone; "turn it off" clicks it; both check the mark."""
    lib, env, _ = explored
    wrap = lib.get("Document › Word Wrap")
    assert wrap is not None
    on, off = with_polarity(wrap, True), with_polarity(wrap, False)
    obs = env.reset()
    first = run_skill(on, env, library=lib, obs=obs)
    assert first.ok, first.error
    again = run_skill(on, env, library=lib, obs=first.observation)
    assert again.ok, again.error
    assert len(again.steps) < len(first.steps)  # the click was skipped: it was already on
    down = run_skill(off, env, library=lib, obs=again.observation)
    assert down.ok, down.error
    _, problems = check_revealed(env, on.postcondition.effects, down.observation)
    assert problems and "unmarked (pixels)" in problems[0], problems  # it reads off now, not on
