"""Which open state the explorer takes next: the shallowest, and a mode or value context after every
ordinary one."""

from __future__ import annotations

from cua.perception.elements import Observation, UIElement
from skills.explorer import Budget, Explorer
from skills.graph import StateKey, UIGraph
from skills.library import SkillLibrary
from skills.profile import load_profile


def _obs(name: str) -> Observation:
    return Observation(elements=[UIElement(id="e", role="menu item", name=name, bbox=(10, 10, 50, 20), source="a11y",
                                           states=["enabled"], path=["application:demo", "frame:"])],
                       size=(800, 600))


def test_modes_and_value_contexts_wait_for_the_submenus_of_the_start_screen(tmp_path):
    """A context or a mode (depth 1) found among the start screen's own controls must not be explored
    before the submenus found there (depth 2): exploring it enters every menu at once, inside it."""
    db = tmp_path / "lib.db"
    lib, graph = SkillLibrary(db), UIGraph(db)
    root, menu = StateKey("root", "root"), StateKey("menu", "menu")
    submenu, ctx, mode = StateKey("submenu", "submenu"), StateKey("root~v1", "root"), StateKey("mode", "mode")
    graph.add_state(root, _obs("Document"), 0, [], [])
    graph.add_state(menu, _obs("Filetype"), 1, [{"dst": "menu"}], ["Document"])
    graph.add_state(ctx, _obs("Document"), 1, [{"dst": "root~v1", "context": True}], ["Write BOM"])
    graph.add_state(mode, _obs("Document"), 1, [{"dst": "mode", "context": "mode"}], ["Write BOM"])
    graph.add_state(submenu, _obs("Markup"), 2, [{"dst": "menu"}, {"dst": "submenu"}], ["Document", "Filetype"])
    ex = Explorer(None, lib, graph, load_profile("default"), Budget(max_actions=10, minutes=1), app="demo")
    order = []
    while (st := ex._next_state()) is not None:
        order.append(st["key"])
        graph.mark_done(StateKey(st["key"], st["key"]))
    assert order == ["root", "menu", "submenu", "root~v1", "mode"]
    graph.close()
    lib.close()
