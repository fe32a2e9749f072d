"""Which open state the explorer takes next: the shallowest, a mode or value context after the start
screen's menus, and the states a dialog opened in fair shares with those."""

from __future__ import annotations

import json

from cua.perception.elements import Observation, UIElement
from skills.candidates import Candidate
from skills.effects import Effect
from skills.explorer import Budget, Explorer, _reshapes
from skills.graph import StateKey, UIGraph
from skills.library import SkillLibrary
from skills.profile import load_profile
from skills.skill import Skill


def _obs(name: str, dialog: str = "", disabled: bool = False) -> Observation:
    frame = UIElement(id="f", role="frame", name="Untitled", bbox=(0, 0, 800, 600), source="a11y",
                      states=["enabled"], path=["application:demo"])
    item = UIElement(id="e", role="menu item", name=name, bbox=(10, 10, 50, 20), source="a11y",
                     states=["showing"] if disabled else ["enabled"], path=["application:demo", "frame:"])
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


def _keypad(*names: str) -> Observation:
    frame = UIElement(id="f", role="frame", name="calc", bbox=(0, 0, 800, 600), source="a11y",
                      states=["enabled"], path=["application:demo"])
    keys = [UIElement(id=f"k{i}", role="push button", name=n, bbox=(10 + 40 * i, 100, 30, 30), source="a11y",
                      states=["enabled"], path=["application:demo", "frame:calc"]) for i, n in enumerate(names)]
    return Observation(elements=[frame, *keys], size=(800, 600))


def test_a_value_contexts_keys_come_with_the_menus_and_a_bare_mode_after_the_dialogs(tmp_path):
    """A value context's one-click controls (a keypad's C on a display reading 7) cost what a menu item
    costs from the start: they are taken by depth with the start screen's menus, before the submenus; its
    menus wait for the contexts' turn. A mode that shows no control of its own and enables none (a tool
    bar hidden) is taken only once no context or dialog is left; one that enables a control the start
    showed disabled (featherpad's Reload once a file is saved) takes its turn with the others."""
    db = tmp_path / "lib.db"
    lib, graph = SkillLibrary(db), UIGraph(db)
    root, menu, submenu = StateKey("root", "root"), StateKey("menu", "menu"), StateKey("submenu", "submenu")
    ctx, bare, dialog = StateKey("root~7", "root"), StateKey("bare", "bare"), StateKey("prefs", "prefs")
    c_key = _keypad("C").elements[1].signature
    reload_off, reload_on = _keypad("Reload").elements[1], _keypad("Reload").elements[1]
    reload_off = reload_off.model_copy(update={"states": ["showing"]})
    start = _obs("Calculator")
    graph.add_state(root, start.model_copy(update={"elements": [*start.elements, reload_off]}), 0, [], [])
    graph.add_state(menu, _obs("Notation"), 1, [{"dst": "menu"}], ["Calculator"])
    graph.add_state(bare, _obs("Calculator"), 1, [{"dst": "bare", "context": "mode"}], ["Show Toolbar"],
                    candidates=[])
    graph.add_state(ctx, _keypad("C"), 1, [{"dst": "root~7", "context": True}], ["7"],
                    candidates=[c_key, _obs("Calculator").elements[1].signature])
    saved = StateKey("saved", "saved")  # a mode with no control of its own that enables one (Reload)
    graph.add_state(saved, start.model_copy(update={"elements": [*start.elements, reload_on]}), 1,
                    [{"dst": "saved", "context": "mode"}], ["Save"], candidates=[])
    graph.add_state(submenu, _obs("RPN"), 2, [{"dst": "menu"}, {"dst": "submenu"}], ["Calculator", "Notation"])
    graph.add_state(dialog, _obs("Close", dialog="Preferences"), 2, [{"dst": "menu"}, {"dst": "prefs"}],
                    ["Calculator", "Preferences"])
    graph.set_meta("root", root.exact)
    graph.set_meta("openers", json.dumps([_obs("Calculator").elements[1].signature]))
    ex = Explorer(None, lib, graph, load_profile("default"), Budget(max_actions=10, minutes=1), app="demo")
    ex.root = root
    order = []
    while (st := ex._next_state()) is not None:
        order.append((st["key"], ex._rank(st)))
        ex._spent[ex._rank(st)] = ex._spent.get(ex._rank(st), 0) + 10
        if st["key"] == ctx.exact and ctx.exact not in ex._keys_done:  # as explore() does: its keys, then back
            ex._keys_done.add(ctx.exact)
            graph.add_transition(ctx, c_key, {"kind": "click"}, ctx, "value_change")
            continue
        graph.mark_done(StateKey(st["key"], st["key"]))
    assert order == [("root", 0), ("menu", 0), ("root~7", 0), ("submenu", 0), ("root~7", 1), ("prefs", 2),
                     ("saved", 1), ("bare", 3)]
    graph.close()
    lib.close()


def _effect(kind: str, sig: str = "b", state: str = "", inherited: bool = False) -> Effect:
    return Effect(kind=kind, signature=sig, state=state, before=False, after=True, inherited=inherited)


def test_a_click_that_only_pressed_itself_makes_no_mode():
    bold = Candidate(_keypad("Bold").elements[1], "click")
    me = bold.el.signature
    assert not _reshapes([_effect("state", me, "pressed")], bold)
    assert not _reshapes([_effect("state", me, "enabled"), _effect("focus", me)], bold)
    assert not _reshapes([_effect("appeared", inherited=True)], bold)  # the path's effect, not the click's
    assert _reshapes([_effect("appeared")], bold)  # a scientific keypad's keys shown
    assert _reshapes([_effect("title")], bold)  # another document
    assert _reshapes([_effect("state", "other", "enabled")], bold)


def test_a_context_skips_a_menu_whose_items_are_all_verified_or_denied(tmp_path):
    db = tmp_path / "lib.db"
    lib, graph = SkillLibrary(db), UIGraph(db)
    root, file_menu, edit_menu = StateKey("root", "root"), StateKey("file", "file"), StateKey("edit", "edit")
    graph.add_state(root, _obs("File"), 0, [], [])
    for key, name in ((file_menu, "File"), (edit_menu, "Edit")):
        graph.add_state(key, _obs(name), 1, [{"dst": key.exact}], [name])
        graph.add_transition(root, f"sig:{name}", {"kind": "click"}, key, "new_state")
        graph.mark_done(key)
    graph.add_transition(file_menu, "sig:New", {"kind": "click"}, root, "known_state")
    graph.add_transition(file_menu, "sig:Quit", {"kind": "click"}, None, "denied")
    graph.add_transition(edit_menu, "sig:Copy", {"kind": "click"}, edit_menu, "no_change")
    graph.set_meta("root", root.exact)
    lib.add(Skill(name="File › New", app="demo", description="d", status="verified",
                  extra={"target": "sig:New", "ui_path": ["File", "New"]}))
    ex = Explorer(None, lib, graph, load_profile("default"), Budget(max_actions=10, minutes=1), app="demo")
    ex.root = root
    verified = {s.extra.get("target") for s in lib.list(app="demo", status="verified")}  # as explore() reads it
    assert ex._nothing_left("root", "sig:File", verified)  # New verified, Quit denied: nothing a context could change
    assert not ex._nothing_left("root", "sig:Edit", verified)  # Copy did nothing at the start: a context may make it act
    assert not ex._nothing_left("root", "sig:Help", verified)  # never opened from the start
    graph.add_state(StateKey("tabs", "tabs"), _obs("Next Tab", disabled=True), 1, [{"dst": "tabs"}], ["Tabs"])
    graph.add_transition(root, "sig:Tabs", {"kind": "click"}, StateKey("tabs", "tabs"), "new_state")
    graph.add_transition(StateKey("tabs", "tabs"), "sig:New", {"kind": "click"}, root, "known_state")
    graph.mark_done(StateKey("tabs", "tabs"))
    assert not ex._nothing_left("root", "sig:Tabs", verified)  # Next Tab shown disabled there: the context may enable it
    graph.close()
    lib.close()


def test_the_start_screen_under_another_title_is_not_the_start(tmp_path):
    """notes-web's File › New leaves the start screen's controls and values under the title 'Notes -
    Untitled 2': what is explored there must not be stored as explored from the start."""
    db = tmp_path / "lib.db"
    lib, graph = SkillLibrary(db), UIGraph(db)
    ex = Explorer(None, lib, graph, load_profile("default"), Budget(max_actions=10, minutes=1), app="demo")
    ex.start_title = "Notes"
    start = _keypad("New")
    assert ex.at_start_values(start.model_copy(update={"window_title": "Notes"}))
    assert not ex.at_start_values(start.model_copy(update={"window_title": "Notes - Untitled 2"}))
    graph.close()
    lib.close()


def test_a_skill_that_failed_its_replays_is_tried_again_in_a_context(tmp_path, monkeypatch):
    """galculator's +/- on 0 changes nothing shown until the next key: '+' then read '-0', became a skill
    with that effect and failed on its replays. Its control goes with the idle ones, so the value context
    tries it again (where it is verified as an operator)."""
    import skills.explorer as explorer

    db = tmp_path / "lib.db"
    lib, graph = SkillLibrary(db), UIGraph(db)
    ex = Explorer(None, lib, graph, load_profile("default"), Budget(max_actions=10, minutes=1), app="demo")
    monkeypatch.setattr(explorer, "verify_batch", lambda ex, names: {"+": "failed", "7": "verified"})
    ex._made_at = {"+": ("root", "sig:+"), "7": ("root", "sig:7")}
    ex.pending = ["+", "7"]
    ex.flush()
    assert ex._idle["root"] == {"sig:+"} and (ex.stats.failed, ex.stats.verified) == (1, 1)
    graph.close()
    lib.close()


def test_a_choice_context_is_not_followed_up(tmp_path, monkeypatch):
    """A control that changed nothing in a value context is clicked again before the context's own click
    only where that click changed a text (a keypad's '+' then '7'); a context made by choosing a file in
    a list gains nothing from choosing it again (notes-web: 11 actions for its Open button)."""
    from skills.units import SEP

    db = tmp_path / "lib.db"
    lib, graph = SkillLibrary(db), UIGraph(db)
    ex = Explorer(None, lib, graph, load_profile("default"), Budget(max_actions=10, minutes=1), app="demo")
    resets = []
    monkeypatch.setattr(ex, "reset", lambda: resets.append(1))
    monkeypatch.setattr(ex, "ensure_at", lambda key, path: False)
    step = {"action": {"kind": "click", "target": {"signature": "sig:x"}}, "context": True, "dst": "ctx"}
    for made, effect, tried in (("zeta.txt", _effect("state", state="selected"), 0), ("7", _effect("text"), 1)):
        lib.add(Skill(name=SEP.join(["Open", made]), app="demo", description="d", steps=[],
                      postcondition={"effects": [effect.model_dump()]}))
        ex.follow_up({"key": "ctx", "prefix": [step], "path_names": ["Open", made]}, [("ctx", step)], None, [])
        assert len(resets) == tried, made
    graph.close()
    lib.close()


def test_a_state_with_nothing_left_to_try_is_not_gone_to(tmp_path, monkeypatch):
    """A state whose stored controls were all tried there (or are denied) is marked done without the
    reset and clicks that would bring the app to it (notes-web: 8 actions for two such states)."""
    db = tmp_path / "lib.db"
    lib, graph = SkillLibrary(db), UIGraph(db)
    root, menu = StateKey("root", "root"), StateKey("menu", "menu")
    graph.add_state(root, _obs("Document"), 0, [], [])
    graph.add_state(menu, _obs("Filetype"), 1, [{"dst": "menu", "action": {"kind": "click"}}], ["Document"])
    graph.set_meta("root", root.exact)
    ex = Explorer(None, lib, graph, load_profile("default"), Budget(max_actions=10, minutes=1), app="demo")
    ex.root, ex.start_obs = root, _obs("Document")
    went = []
    monkeypatch.setattr(ex, "ensure_at", lambda key, path: went.append(key) or False)
    item = _obs("Filetype").elements[1]
    st = graph.state(menu)
    ex.explore(st, [(root, None), (menu, st["prefix"][0])])
    assert went == [menu] and not graph.state(menu)["done"]  # Filetype untried: it goes there
    graph.add_transition(menu, item.signature, {"kind": "click"}, None, "no_change")
    ex.explore(st, [(root, None), (menu, st["prefix"][0])])
    assert went == [menu] and graph.state(menu)["done"]
    graph.close()
    lib.close()
