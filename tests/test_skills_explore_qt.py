"""GUI-DFS on a Qt app (featherpad, through Qt's AT-SPI bridge), default profile: Qt reports a check item
as a plain 'menu item' that carries the 'checked' state only while checked, so an unchecked one looks
like any command. Clicking it changes nothing the tree shows; the explorer reopens its menu, reads the
new state and makes a toggle skill verified by it ("turns on Line Numbers")."""

from __future__ import annotations

import pytest

from cua.perception.elements import Observation, UIElement
from skills.probe import plain_checks, probe_menu
from skills.skill_text import kind_of
from tests.skills_fixtures import exploration


def test_a_checked_plain_menu_item_marks_the_toolkit():
    item = UIElement(id="e1", role="menu item", name="Wrap Lines", bbox=(0, 0, 10, 10), source="a11y",
                     states=["checked", "showing"])
    box = UIElement(id="e2", role="check menu item", name="Wrap", bbox=(0, 0, 10, 10), source="a11y",
                    states=["checked"])
    assert plain_checks(Observation(elements=[item], size=(100, 100)))
    assert not plain_checks(Observation(elements=[box, item.model_copy(update={"states": ["showing"]})],
                                        size=(100, 100)))


class _Reopens:
    """Stands in for the explorer: reopening the menu shows `menu`; Escape closes it."""

    def __init__(self, menu: Observation) -> None:
        self.menu, self.shown, self.actions = menu, True, []

    def replay(self, steps, fast):
        self.actions += [s["action"] for s in steps]
        return self.menu

    def act(self, action):
        self.actions.append(action)

    def observe(self):
        return Observation(elements=[], size=(800, 600))


def test_a_menu_item_that_enables_another_has_that_as_its_effect():
    """Copy greys nothing out and shows nothing, but Paste is enabled after it: reopening the menu sees
    that, and it is Copy's effect (checked by reopening the menu again). Nothing greyed out: no reopening."""
    path = ["application:FeatherPad", "frame:", "menu bar:", "menu item:Edit", "popup menu:"]

    def item(name, *states):
        return UIElement(id=name, role="menu item", name=name, bbox=(10, 40 + 20 * len(name), 80, 18),
                         source="a11y", states=["showing", "visible", *states], path=path)
    pre = Observation(elements=[item("Copy", "enabled"), item("Paste")], size=(800, 600))
    after = Observation(elements=[item("Copy", "enabled"), item("Paste", "enabled")], size=(800, 600))
    edit = {"action": {"kind": "click", "target": {"signature": "edit"}}}
    ex = _Reopens(after)
    [eff] = probe_menu(ex, {"prefix": [edit]}, pre.elements[0], Observation(elements=[], size=(800, 600)),
                       pre=pre)
    assert eff.describe() == "enables Paste" and eff.reveal == [edit["action"]]
    assert eff.check(after) is None and eff.check(pre) == "'Paste' is not enabled"
    both_on = Observation(elements=[item("Copy", "enabled"), item("Paste", "enabled")], size=(800, 600))
    ex = _Reopens(after)
    assert probe_menu(ex, {"prefix": [edit]}, both_on.elements[0], Observation(elements=[], size=(800, 600)),
                      pre=both_on) == [] and ex.actions == []


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    # --only keeps to the Options menu; the profile is the default one
    with exploration(tmp_path_factory.mktemp("qt") / "lib.db", "sandbox:featherpad", "featherpad", only="^Options$",
                     max_actions=200, minutes=4, max_depth=2) as run:
        yield run.lib, run.stats


def test_qt_check_items_become_toggle_skills_verified_by_their_state(explored):
    lib, stats = explored
    line = lib.get("Options › Line Numbers")  # unchecked at the start: nothing marked it as checkable
    assert line is not None, [s.name for s in lib.list()]
    assert line.status == "verified" and line.verified_runs >= 2, line.extra.get("status_reason")
    assert line.postcondition.describe() == "turns on Line Numbers" and kind_of(line) == "toggle"
    wrap = lib.get("Options › Wrap Lines")  # checked at the start
    assert wrap.status == "verified" and wrap.postcondition.describe() == "turns off Wrap Lines"


def test_a_qt_submenus_opener_is_opened_again_in_a_mode(tmp_path):
    """A Qt submenu's opener is a plain 'menu item' (featherpad's File › Recently Modified), not a 'menu':
    inside a mode (a saved file) it was skipped as tried before, so the saved file's entry and Clear were
    never reached. Every control that opened a menu anywhere counts as a menu opener, and a resumed run
    reads them back from the graph."""
    from skills.explorer import Explorer
    from skills.graph import UIGraph

    recent = "application:FeatherPad/frame:/menu bar:/menu item:File/popup menu:/menu item:Recently Modified"
    ex = object.__new__(Explorer)
    ex.graph, ex.root = UIGraph(tmp_path / "g.db"), type("Key", (), {"exact": "root"})()
    ex._openers = {"root": {"file"}, "file-popup": {recent}}
    assert ex._menu_openers() == {"file", recent}
    ex.graph.set_meta("menu_openers", '["%s"]' % recent)
    ex._openers = {}  # a resumed run: nothing tried yet in this process
    assert recent in ex._menu_openers()
