"""Typed effects from a value-aware state diff: what they find, how they read, how they are checked."""

from __future__ import annotations

from cua.perception.a11y import nodes_to_elements
from cua.perception.elements import Observation, UIElement
from skills.effects import Effect, diff_effects, volatile_slots_of
from skills.skill import Condition, Skill

WIN = ["application:calc", "frame:"]


def el(role: str, name: str, states=(), value=None, path=WIN, box=(10, 10, 50, 20)) -> UIElement:
    return UIElement(id="e", role=role, name=name, bbox=box, source="a11y", states=["enabled", *states],
                     path=list(path), value=value)


def obs(*els: UIElement, title: str = "Calc") -> Observation:
    return Observation(elements=list(els), window_title=title, size=(800, 600))


def test_display_change_is_an_effect_and_reads_in_words():
    a = obs(el("push button", "7"), el("label", "0", path=[*WIN, "panel:display"]))
    b = obs(el("push button", "7"), el("label", "7", path=[*WIN, "panel:display"]))
    [eff] = diff_effects(a, b)
    assert eff.kind == "text" and (eff.before, eff.after) == ("0", "7")
    assert eff.describe() == "display changes from 0 to 7"
    assert eff.check(b) is None and "shows '0'" in eff.check(a)


def test_toggle_dialog_title_and_menu_closing():
    item = el("check menu item", "Line Numbers", path=[*WIN, "menu:View"])
    on = el("check menu item", "Line Numbers", states=("checked",), path=[*WIN, "menu:View"])
    [eff] = diff_effects(obs(item), obs(on))
    assert eff.describe() == "turns on Line Numbers" and eff.check(obs(on)) is None and eff.check(obs(item))
    dlg = el("dialog", "Preferences", path=["application:calc"])
    effs = diff_effects(obs(el("push button", "OK")), obs(el("push button", "OK"), dlg, title="Preferences"))
    assert [e.describe() for e in effs] == ["opens the dialog 'Preferences'", "changes the window title to 'Preferences'"]
    # a menu that closes (its items gone) is no effect at all: Escape does the same
    assert diff_effects(obs(el("menu", "View"), item), obs(el("menu", "View"))) == []
    opened = diff_effects(obs(el("menu", "View")), obs(el("menu", "View"), item))
    assert opened[0].kind == "menu_opened" and opened[0].describe().startswith("opens the menu 'View'")


def test_controls_a_click_hides_are_its_effect_but_a_closed_dialogs_are_not():
    """galculator's View › Buttons › Display Control hides the keys <-, C and AC; View › Show menu bar hides
    the menu bar. A dialog that closes takes its buttons with it: that is the window closing, once."""
    keys = [el("toggle button", n, box=(10 + 60 * i, 10, 50, 20)) for i, n in enumerate(("<-", "C", "AC"))]
    seven = el("toggle button", "7", box=(10, 100, 50, 20))
    effs = diff_effects(obs(seven, *keys), obs(seven))
    assert sorted(e.name for e in effs) == ["<-", "AC", "C"] and {e.kind for e in effs} == {"disappeared"}
    assert all(e.check(obs(seven)) is None and e.check(obs(seven, *keys)) for e in effs)
    back = keys[0].model_copy(update={"attrs": {"description": "Backspace"}})  # its tooltip names it in words
    [eff] = diff_effects(obs(seven, back), obs(seven))
    assert eff.describe() == "hides the toggle button '<-' (Backspace)" and eff.check(obs(seven)) is None
    bar = el("menu bar", "", path=WIN)
    assert [e.kind for e in diff_effects(obs(seven, bar), obs(seven))] == ["disappeared"]
    dlg = el("dialog", "About", path=["application:calc"])
    ok = el("push button", "Close", path=["application:calc", "dialog:About"])
    assert [e.kind for e in diff_effects(obs(seven, dlg, ok), obs(seven))] == ["window_closed"]


def test_self_changing_text_is_not_an_effect():
    a, b = obs(el("label", "12:00:01")), obs(el("label", "12:00:02"))
    vol = volatile_slots_of(a, b)
    assert diff_effects(a, b) and not diff_effects(a, b, volatile_slots=vol)
    # a timer says so itself: no effect even before two looks have shown it ticking (on a loaded machine the
    # start state's looks may fall within one tick, and the next click's diff then saw "4 to 8")
    clock = [*WIN, "panel:status"]
    assert diff_effects(obs(el("timer", "", value="4", path=clock)), obs(el("timer", "", value="8", path=clock))) == []


def test_old_skill_json_still_loads_and_effects_round_trip():
    old = {"name": "x", "app": "a", "postcondition": {"present": ["p"], "absent": [], "state_key": "k"}}
    s = Skill.model_validate(old)
    assert s.postcondition.effects == [] and s.postcondition.describe() == ""
    c = Condition(effects=[Effect(kind="state", signature="s", name="Bold", state="checked", before=False, after=True)])
    assert Condition.model_validate_json(c.model_dump_json()).describe() == "turns on Bold"


def test_state_abstraction_of_long_lists_and_recent_files():
    from skills.graph import state_key

    def listing(n: int, first: str = "row") -> Observation:
        return obs(*(el("list item", f"{first} {i}", path=[*WIN, "list:"], box=(0, i * 10, 50, 10)) for i in range(n)))

    assert state_key(listing(20)) == state_key(listing(25))  # a list that grew a little: the same state
    assert state_key(listing(20)) != state_key(listing(40))  # twice as long: another state
    assert state_key(listing(2)) != state_key(listing(2, "file"))  # short lists keep their names
    recent = [obs(el("menu item", n, path=[*WIN, "menu:Open Recent"])) for n in ("1. a.txt", "1. b.txt")]
    assert state_key(recent[0]) == state_key(recent[1])
    assert state_key(obs(el("menu item", "Save"))) != state_key(obs(el("menu item", "Print")))


def test_a_modes_keys_are_the_paths_effect_though_the_menu_hid_them():
    """In galculator's scientific mode, Number bases › Decimal (already chosen) changes nothing: the keys
    the mode showed are the path's effect, although the open submenu hid that from the path's own diff."""
    from skills.effects import skill_effects

    seven = el("toggle button", "7", box=(10, 100, 50, 20))
    sin = el("toggle button", "sin", box=(70, 100, 50, 20))
    menus = [el("menu", "Calculator", box=(10, 0, 60, 20))]
    item = el("radio menu item", "Decimal", states=("checked",), path=[*WIN, "menu:Number bases"], box=(80, 40, 90, 20))
    start = obs(*menus, seven)
    pre = obs(*menus, seven, sin, el("menu", "Number bases", box=(10, 40, 60, 20)), item)
    new = obs(*menus, seven, sin)
    effs = skill_effects(start, pre, new, item.signature)
    assert [e.name for e in effs] == ["sin"] and all(e.inherited for e in effs)


def test_a_time_of_day_in_a_text_effect_is_a_clock_not_a_different_effect():
    """'Paste Date and Time' writes another time on every replay: the effect holds with any time of day,
    not with another date, and not on the untouched document."""
    doc = [*WIN, "scroll pane:"]
    a = obs(el("text", "", value="", path=doc))
    b = obs(el("text", "", value="Nov 27, 2026, 19:34:57", path=doc))
    [eff] = diff_effects(a, b)
    assert eff.kind == "text" and eff.check(b) is None
    assert eff.check(obs(el("text", "", value="Nov 27, 2026, 19:35:03", path=doc))) is None
    assert eff.check(obs(el("text", "", value="Nov 28, 2026, 19:35:03", path=doc))) is not None
    assert eff.check(a) is not None


def test_a_key_run_alone_must_change_its_display_and_keep_it_on_screen():
    """cua.agent.skill_calls.changed_text: the check on a key run without its sample value."""
    from cua.agent.skill_calls import changed_text

    shows = [el("push button", "sqrt"), el("label", "9", path=[*WIN, "panel:display"])]
    eff = diff_effects(obs(*shows), obs(shows[0], el("label", "3", path=[*WIN, "panel:display"])))[0]
    key = Skill(name="7 › sqrt", app="calc", postcondition=Condition(effects=[eff]))
    assert changed_text(key, obs(*shows), obs(shows[0], el("label", "3", path=[*WIN, "panel:display"]))) == ""
    assert changed_text(key, obs(*shows), obs(*shows)) == "display did not change"
    assert changed_text(key, obs(*shows), obs(shows[0])) == "display is not on screen"


def test_a_change_of_spacing_only_is_an_effect_and_says_so():
    """Indent, tabs to spaces, strip trailing spaces: the document's words stay, its whitespace changes.
    Compared with whitespace collapsed, those commands read as doing nothing."""
    doc = [*WIN, "scroll pane:"]
    a = obs(el("text", "", ("editable", "multi-line"), value="hello\n\tzoo  ", path=doc))
    b = obs(el("text", "", ("editable", "multi-line"), value="hello\n    zoo", path=doc))
    [eff] = diff_effects(a, b)
    assert eff.kind == "text" and eff.describe() == "document changes its spacing (tabs, spaces or line breaks)"
    assert eff.check(b) is None and eff.check(a)
    assert diff_effects(a, a) == []


def test_a_tab_qt_marks_focused_only_reads_as_selected():
    """Qt's page tabs expose the current tab as 'focused', never 'selected'; GTK's are selectable and
    say 'selected'. Switching tabs is then an effect on either toolkit."""
    node = {"role": "page tab", "name": "Untitled", "bbox": [0, 81, 101, 32], "path": ["application:FeatherPad"],
            "states": ["enabled", "focused", "showing", "visible"]}
    other = {**node, "bbox": [101, 81, 101, 32], "states": ["enabled", "showing", "visible"]}
    first, second = nodes_to_elements([node, other])
    assert "selected" in first.states and "selected" not in second.states
    gtk = {**node, "states": ["enabled", "focused", "selectable", "showing", "visible"]}
    assert "selected" not in nodes_to_elements([gtk])[0].states  # GTK says so itself when it is
    switched = nodes_to_elements([{**node, "states": other["states"]}, {**other, "states": node["states"]}])
    effs = diff_effects(Observation(elements=[first, second], size=(800, 600)),
                        Observation(elements=switched, size=(800, 600)))
    assert sorted((e.kind, e.state, e.after) for e in effs) == [("state", "selected", False),
                                                               ("state", "selected", True)]


def test_a_key_that_only_makes_another_usable_has_that_as_its_effect():
    """galculator's M+ shows nothing in the display; MR, greyed out until memory holds a number, becomes
    usable. That is its effect, when nothing else changed."""
    mr_off = el("push button", "MR", box=(10, 100, 50, 20)).model_copy(update={"states": ["showing"]})
    mr_on = el("push button", "MR", box=(10, 100, 50, 20))
    [eff] = diff_effects(obs(el("push button", "M+"), mr_off), obs(el("push button", "M+"), mr_on))
    assert eff.describe() == "enables MR" and eff.check(obs(mr_on)) is None and eff.check(obs(mr_off))
    shown = el("label", "7", path=[*WIN, "panel:display"])
    effs = diff_effects(obs(mr_off, el("label", "0", path=[*WIN, "panel:display"])), obs(mr_on, shown))
    assert [e.kind for e in effs] == ["text"]  # beside a real change it is left out


def test_an_element_named_by_a_time_of_day_is_no_part_of_a_postcondition():
    """featherpad's Open dialog: Create New Folder adds a row whose cell reads the folder's time of
    creation; every replay makes another, so it failed every replay."""
    from skills.candidates import Candidate
    from skills.units import unit_skill

    btn = el("push button", "Create New Folder")
    row = el("table cell", "28 Nov 2026 16:30:36", path=[*WIN, "tree:Files"], box=(10, 60, 200, 20))
    folder = el("table cell", "New Folder", path=[*WIN, "tree:Files"], box=(10, 80, 200, 20))
    pre, new = obs(btn), obs(btn, row, folder)
    skill = unit_skill("fp", ["Create New Folder"], [{"kind": "click"}], Candidate(btn, "click"), pre, new, pre,
                       diff_effects(pre, new))
    assert not any("16:30" in s for s in skill.postcondition.present)
    assert [e.name for e in skill.postcondition.effects] == ["New Folder"]


def test_a_title_effect_is_the_words_it_changed():
    """Viewer Mode explored on a clean document adds ' [Viewer Mode]' to 'Untitled 1 - Mousepad'. Run
    on a document with unsaved changes the title starts with '*': the change is there all the same.
    The title without the added words, or with the dropped ones, is not the effect."""
    from skills.effects import title_changed

    before, after = "Untitled 1 - Mousepad", "Untitled 1 [Viewer Mode] - Mousepad"
    assert title_changed(before, after, after)
    assert title_changed(before, after, "*Untitled 1 [Viewer Mode] - Mousepad")
    assert title_changed(before, after, "notes.txt [Viewer Mode] - Mousepad")  # another document, same change
    assert not title_changed(before, after, "*Untitled 1 - Mousepad")
    assert title_changed("Untitled 1 - Mousepad", "Untitled 2 - Mousepad", "*Untitled 2 - Mousepad")
    assert not title_changed("Untitled 1 - Mousepad", "Untitled 2 - Mousepad", "Untitled 1 - Mousepad")
    assert not title_changed(None, after, "*" + after)  # no before stored: the very title
