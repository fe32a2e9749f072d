"""Which open state the explorer takes next: the shallowest, a mode or value context after the start
screen's menus, and the states a dialog opened in fair shares with those."""

from __future__ import annotations

from cua.perception.elements import Observation, UIElement
from skills.explorer import Budget, Explorer
from skills.graph import StateKey, UIGraph
from skills.library import SkillLibrary
from skills.profile import load_profile


def _obs(name: str, dialog: str = "") -> Observation:
    frame = UIElement(id="f", role="frame", name="Untitled", bbox=(0, 0, 800, 600), source="a11y",
                      states=["enabled"], path=["application:demo"])
    item = UIElement(id="e", role="menu item", name=name, bbox=(10, 10, 50, 20), source="a11y",
                     states=["enabled"], path=["application:demo", "frame:"])
    box = [UIElement(id="d", role="dialog", name=dialog, bbox=(100, 100, 300, 200), source="a11y",
                     states=["enabled"], path=["application:demo"])] if dialog else []
    return Observation(elements=[frame, item, *box], size=(800, 600))


def test_modes_and_value_contexts_wait_for_the_submenus_of_the_start_screen(tmp_path):
    """A context or a mode (depth 1) found among the start screen's own controls must not be explored
    before the submenus found there (depth 2): exploring it enters every menu at once, inside it. After
    that, modes and contexts share the budget with the states dialogs opened: whichever used fewer actions
    goes next (on an app with many dialogs, a context taken after them all came too late; with the
    dialogs taken after every mode, a small budget never entered one)."""
    db = tmp_path / "lib.db"
    lib, graph = SkillLibrary(db), UIGraph(db)
    root, menu = StateKey("root", "root"), StateKey("menu", "menu")
    submenu, ctx, mode = StateKey("submenu", "submenu"), StateKey("root~v1", "root"), StateKey("mode", "mode")
    dialog = StateKey("prefs", "prefs")
    graph.add_state(root, _obs("Document"), 0, [], [])
    graph.add_state(menu, _obs("Filetype"), 1, [{"dst": "menu"}], ["Document"])
    graph.add_state(ctx, _obs("Document"), 1, [{"dst": "root~v1", "context": True}], ["Write BOM"])
    graph.add_state(mode, _obs("Document"), 1, [{"dst": "mode", "context": "mode"}], ["Write BOM"])
    graph.add_state(submenu, _obs("Markup"), 2, [{"dst": "menu"}, {"dst": "submenu"}], ["Document", "Filetype"])
    graph.add_state(dialog, _obs("Close", dialog="Preferences"), 2, [{"dst": "menu"}, {"dst": "prefs"}],
                    ["Document", "Preferences"])
    graph.set_meta("root", root.exact)
    ex = Explorer(None, lib, graph, load_profile("default"), Budget(max_actions=10, minutes=1), app="demo")
    order = []
    while (st := ex._next_state()) is not None:
        order.append(st["key"])
        ex._spent[ex._rank(st)] = ex._spent.get(ex._rank(st), 0) + 10  # as run() counts each state's actions
        graph.mark_done(StateKey(st["key"], st["key"]))
    assert order == ["root", "menu", "submenu", "root~v1", "prefs", "mode"]
    graph.close()
    lib.close()
