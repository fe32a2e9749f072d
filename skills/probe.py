"""Looking for an effect the screen hides: a check or radio menu item's new state, and the menu items a
click enabled or disabled, show only when its menu is open again. The probe reopens the menu (counted
actions), reads the items, and closes it.
Where the toolkit exposes no checked state (GTK's model menus: mousepad's Word Wrap, its Filetype
languages), the item's indicator is read from pixels instead, and only for rows that show one."""

from __future__ import annotations

from typing import Any

from cua.perception.elements import Observation, UIElement
from skills.effects import Effect, is_menu_item, pixel_mark
from skills.graph import is_visible
from skills.profile import is_enabled

TOGGLE_ROLES = ("check menu item", "radio menu item", "menuitemcheckbox", "menuitemradio")


def since_context(prefix: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps of a state's prefix after its last context or mode click (they reopen its menus; the
    context's click or typing is not redone)."""
    marks = [i for i, s in enumerate(prefix) if s.get("context")]
    return prefix[marks[-1] + 1:] if marks else prefix


def plain_checks(obs: Observation) -> bool:
    """Does this toolkit mark check items as plain menu items? Qt's AT-SPI bridge does: a checked item is
    a 'menu item' with the 'checked' state, an unchecked one shows nothing that says it can be checked."""
    return any(e.role.lower() == "menu item" and "checked" in e.states for e in obs.elements)


def probe_menu(ex: Any, st: dict[str, Any], el: UIElement, new: Observation,
               plain: bool = False, pre: Observation | None = None) -> list[Effect]:
    """The effects of clicking menu item `el` that show only in its menu, seen after reopening it: its
    own checked state, and menu items it enabled or disabled (Copy enables Paste, Undo enables Redo).
    `plain`: every plain menu item may be a check item (see `plain_checks`). `pre`: the screen the item
    was clicked on; its pixels tell whether an item without a checked state shows an indicator, and its
    menu's greyed-out items are what a click may enable. The menu is reopened only for a check item or
    a menu with a greyed-out item."""
    role = el.role.lower()
    toggleish = role in TOGGLE_ROLES or "checkable" in el.states or "checked" in el.states or (
        plain and role == "menu item")
    opens = since_context(st["prefix"])
    shown = new.by_signature(el.signature)
    if not opens or (shown is not None and is_visible(shown, new.size)):
        return []  # nothing to reopen, or still on screen: the plain diff sees its state
    mark = None if toggleish or pre is None or not is_menu_item(el) else pixel_mark(pre, el.signature)
    siblings = {e.signature: is_enabled(e) for e in (pre.elements if pre is not None else ())
                if is_menu_item(e) and e.path == el.path and e.signature != el.signature and is_visible(e, pre.size)}
    if not toggleish and mark is None and all(siblings.values()):
        return []
    before = "checked" in el.states if mark is None else mark
    obs = ex.replay(opens, fast=False)
    now = obs.by_signature(el.signature)
    after = None if now is None else ("checked" in now.states if mark is None else pixel_mark(obs, el.signature))
    reveal = [s["action"] for s in opens]
    out = [Effect(kind="state", signature=e.signature, role=e.role.lower(), name=" ".join(e.name.split()),
                  state="enabled", before=siblings[e.signature], after=is_enabled(e), reveal=reveal)
           for e in obs.elements if e.signature in siblings and is_visible(e, obs.size)
           and is_enabled(e) != siblings[e.signature]]
    if (toggleish or mark is not None) and after is not None and after != before:
        out.insert(0, Effect(kind="state", signature=el.signature, role=el.role.lower(),
                             name=" ".join(el.name.split()), state="checked", before=before, after=after,
                             reveal=reveal, pixels=mark is not None))
    return out
