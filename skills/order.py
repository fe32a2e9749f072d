"""Which open state of the UI graph the explorer takes next (a mixin of skills.explorer.Explorer).

States are ranked: 0, the start screen, its menus and a value context's one-click controls, by depth;
1, modes and value contexts; 2, the states a dialog or window opened; 3, modes that show and enable no
control of their own. Rank 0 goes first; 1 and 2 then take turns by the actions each has used (fair
shares); 3 waits for both. A value context also skips the menus that hold nothing left to try.
"""

from __future__ import annotations

from typing import Any

from cua.perception.elements import UIElement
from skills.effects import WINDOW_ROLES
from skills.graph import StateKey, UIGraph
from skills.library import SkillLibrary
from skills.profile import clean_name, is_enabled


class StateOrder:
    """The explorer's choice of its next state (needs graph, lib, app, root, only, pool, and the
    explorer's `_menu_openers`)."""

    graph: UIGraph
    lib: SkillLibrary
    app: str
    root: StateKey | None
    only: Any
    pool: Any
    _spent: dict[int, int]
    _keys_done: set[str]
    _root_wins: int | None
    _root_off: set[str] | None = None  # the controls the stored start state showed disabled (`_enables`)

    def _menu_openers(self) -> set[str]:
        """Every control that opened a menu anywhere (the explorer's, which knows its modes)."""
        raise NotImplementedError

    def _next_state(self) -> dict[str, Any] | None:
        """The shallowest open state in scope (--only) that no other worker has claimed: first the start
        screen and its menus, then modes and value contexts and the states a dialog or window opened, in
        fair shares. A mode or context tries the start screen's menus again, entering them at once, and
        what was not tried anywhere yet: taken before the menus' submenus, it explored them all there
        (each language of mousepad's Filetype as "Write Unicode BOM › Document › Filetype › Markup › X");
        taken after every dialog, it came too late in 30 minutes (featherpad's Edit commands on typed
        text); taken before every dialog, a small budget went on menus seen again in each mode and no
        dialog was entered (notes-web's Preferences and Open, half its controls). So of the two, the one
        that has used fewer actions so far goes next."""
        first: dict[int, dict[str, Any]] = {}
        for cls, st in sorted(((self._rank(st), st) for st in self.graph.open_states()), key=lambda p: p[0]):
            first_name = st["path_names"][0] if st["path_names"] else None
            if first_name is not None and self.only is not None and not self.only.search(first_name):
                continue
            if cls in first or (self.pool is not None and not self.pool.claim(st["key"])):
                continue
            first[cls] = st
            if cls == 0:  # ranked first: the start screen and its menus need no turn
                break
        if not first:
            return None
        cls = min([c for c in first if c != 3] or first, key=lambda c: (self._spent.get(c, 0), c))
        for other, st in first.items():  # claimed but not taken: free for another worker
            if other != cls and self.pool is not None:
                self.pool.release(st["key"])
        return first[cls]

    def _rank(self, st: dict[str, Any]) -> int:
        """0: the start screen and its menus, and a value context's one-click controls (`_keys_left`); 1: a
        mode or value context; 2: a dialog or window opened; 3: a mode that shows no control of its own
        and enables none (a tool bar hidden), where only the start screen's menus would be opened again:
        after 1 and 2."""
        if st["key"] not in self._keys_done and self._keys_left(st):
            return 0
        if "~" in st["key"] or mode_depth(st) > 0:
            bare = st["prefix"][-1].get("context") == "mode" and st["candidates"] == [] and not self._enables(st)
            return 3 if bare else 1
        wins = self._root_windows()
        return 2 if wins is not None and window_count(st) > wins else 0

    def _enables(self, st: dict[str, Any]) -> bool:
        """A stored state shows enabled a control the start screen showed disabled (featherpad's Reload
        once a file is saved): a mode worth its turn even when it shows no control of its own."""
        if self._root_off is None and self.root is not None and (root := self.graph.state(self.root.exact)):
            self._root_off = disabled_controls(root)  # the stored start state does not change
        off = self._root_off or set()
        return any(e.signature in off and is_enabled(e) for e in map(UIElement.model_validate, st["elements"]))

    def _keys_left(self, st: dict[str, Any]) -> set[str]:
        """A value context's controls not tried there yet that open no menu: one click each from the
        context (a keypad's C, = or sqrt on a display that reads 7). They cost what a menu's item costs
        from the start screen, so they are taken with the start screen's menus, by depth; the context's
        menus wait for the contexts' turn. Taken after every menu and submenu, galculator's keys came
        after 334 of 400 actions."""
        if "~" not in st["key"] or st.get("candidates") is None:
            return set()
        return set(st["candidates"]) - self.graph.tried(st["key"]) - self._menu_openers()

    def _nothing_left(self, base: str, opener: str, verified: set[str], depth: int = 0) -> bool:
        """The menu that `opener` opened from `base` (the state a value context was made from) holds
        nothing the context could change: it was fully explored, shows no item disabled, and each of its
        items is verified or denied (a submenu: all of its own items). Opening it in the context would
        cost two actions and find nothing (notes-web's File and Help in its typed-text context).
        `opener`: the key it was tried under in `base` (a right-click's is its own); `verified`: the
        controls of this app's verified skills."""
        menu = next((t["dst"] for t in self.graph.transitions(base)
                     if t["signature"] == opener and t["dst"]), None) if depth == 0 else opener
        st = self.graph.state(menu) if menu else None
        items = self.graph.transitions(menu) if st is not None and st["done"] and not disabled_controls(st) else []
        if not items or depth > 2:  # items shown disabled there may be enabled here (Next Tab)
            return False
        menus = self._menu_openers()  # a submenu's items count; a dialog's do not (a context is no dialog's)
        return all(t["effect"] == "denied" or (t["signature"] in verified and (
            t["signature"] not in menus or self._nothing_left(base, t["dst"], verified, depth + 1))) for t in items)

    def _root_windows(self) -> int | None:
        """How many windows the stored start state showed (None before it is stored)."""
        if self._root_wins is None and (key := self.graph.get_meta("root")) and (st := self.graph.state(key)):
            self._root_wins = window_count(st)
        return self._root_wins


def window_count(st: dict[str, Any]) -> int:
    """How many distinct windows and dialogs a stored state showed (it stores the visible elements)."""
    return len({(e["role"], e["name"]) for e in st["elements"] if e["role"].lower() in WINDOW_ROLES})


def disabled_controls(st: dict[str, Any]) -> set[str]:
    """The named controls a stored state showed disabled (it stores the visible ones)."""
    return {e.signature for e in map(UIElement.model_validate, st["elements"])
            if e.signature and clean_name(e.name) and not is_enabled(e)}


def mode_depth(st: dict[str, Any]) -> int:
    """The length of a state's prefix up to the click that made its mode (0: not in a mode)."""
    return max((i + 1 for i, s in enumerate(st["prefix"]) if s.get("context") == "mode"), default=0)
