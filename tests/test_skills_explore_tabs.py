"""GUI-DFS across tabs, on featherpad (Qt), default profile plus denials that keep the run short. File › New
opens a second tab, which is current: there Next Tab and Last Tab do nothing (no tab after the last).
First Tab makes the first current; after it, in a context where the File menu is opened again, Next Tab
and Last Tab act and become skills verified by their effect (the second tab selected again), which the
negative control (First Tab, then a click on nothing) does not show. Which tab is current is part of a
context's values: without it the context was taken for the File menu it came from, and never entered."""

from __future__ import annotations

import pytest

from cua.perception.elements import Observation, UIElement
from skills.navigate import Navigator
from tests.skills_fixtures import exploration, keeping

KEEP = ("file", "new", "first tab", "next tab", "last tab", "previous tab")


def _tab(name: str, selected: bool) -> UIElement:
    return UIElement(id=name, role="page tab", name=name, bbox=(0, 0, 50, 20), source="a11y",
                     path=["frame:", "page tab list:"], states=["showing", "visible", *(["selected"] * selected)])


def test_the_current_tab_is_one_of_the_values_a_context_shows():
    nav = Navigator.__new__(Navigator)
    nav.volatile_slots = set()
    first = Observation(elements=[_tab("a", True), _tab("b", False)], size=(200, 100))
    last = Observation(elements=[_tab("a", False), _tab("b", True)], size=(200, 100))
    assert nav.values_digest(first) != nav.values_digest(last)
    assert nav.values_digest(first) == nav.values_digest(first.model_copy())


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    with exploration(tmp_path_factory.mktemp("tabs") / "lib.db", "sandbox:featherpad", "featherpad", only="^File$",
                     profile=keeping(*KEEP), max_actions=100000, minutes=6) as run:
        yield run.lib, run.stats


def test_next_and_last_tab_are_verified_after_first_tab(explored):
    lib, stats = explored
    first = lib.get("File › New › File › First Tab")
    assert first is not None and first.status == "verified", [s.name for s in lib.list()]
    for item in ("Next Tab", "Last Tab"):
        skill = lib.get(f"File › New › File › First Tab › File › {item}")
        assert skill is not None, [s.name for s in lib.list()]
        assert skill.status == "verified" and skill.verified_runs >= 2, skill.extra.get("status_reason")
        assert any(e.kind == "state" and e.state == "selected" and e.after and not e.inherited
                   for e in skill.postcondition.effects), skill.postcondition.describe()


def test_next_tab_on_the_last_tab_is_not_verified(explored):
    lib, _ = explored
    alone = lib.get("File › New › File › Next Tab")
    assert alone is None or alone.status != "verified", alone.postcondition.describe()
