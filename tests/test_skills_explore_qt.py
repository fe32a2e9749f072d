"""GUI-DFS on a Qt app (featherpad, through Qt's AT-SPI bridge), default profile: Qt reports a check item
as a plain 'menu item' that carries the 'checked' state only while checked, so an unchecked one looks
like any command. Clicking it changes nothing the tree shows; the explorer reopens its menu, reads the
new state and makes a toggle skill verified by it ("turns on Line Numbers")."""

from __future__ import annotations

import pytest

from cua.env import make_env
from cua.perception.elements import Observation, UIElement
from skills.explorer import Budget, Explorer
from skills.graph import UIGraph
from skills.library import SkillLibrary
from skills.probe import plain_checks
from skills.profile import load_profile
from skills.skill_text import kind_of


def test_a_checked_plain_menu_item_marks_the_toolkit():
    item = UIElement(id="e1", role="menu item", name="Wrap Lines", bbox=(0, 0, 10, 10), source="a11y",
                     states=["checked", "showing"])
    box = UIElement(id="e2", role="check menu item", name="Wrap", bbox=(0, 0, 10, 10), source="a11y",
                    states=["checked"])
    assert plain_checks(Observation(elements=[item], size=(100, 100)))
    assert not plain_checks(Observation(elements=[box, item.model_copy(update={"states": ["showing"]})],
                                        size=(100, 100)))


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    db = tmp_path_factory.mktemp("qt") / "lib.db"
    env = make_env("sandbox:featherpad", sources="a11y")
    lib, graph = SkillLibrary(db), UIGraph(db)
    try:  # --only keeps to the Options menu; the profile is the default one
        ex = Explorer(env, lib, graph, load_profile("default"), Budget(max_actions=200, minutes=4, max_depth=2),
                      app="featherpad", only="^Options$")
        yield lib, ex.run()
    finally:
        graph.close()
        lib.close()
        env.close()


def test_qt_check_items_become_toggle_skills_verified_by_their_state(explored):
    lib, stats = explored
    line = lib.get("Options › Line Numbers")  # unchecked at the start: nothing marked it as checkable
    assert line is not None, [s.name for s in lib.list()]
    assert line.status == "verified" and line.verified_runs >= 2, line.extra.get("status_reason")
    assert line.postcondition.describe() == "turns on Line Numbers" and kind_of(line) == "toggle"
    wrap = lib.get("Options › Wrap Lines")  # checked at the start
    assert wrap.status == "verified" and wrap.postcondition.describe() == "turns off Wrap Lines"
