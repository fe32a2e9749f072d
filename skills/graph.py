"""UI states and the transition graph GUI-DFS builds, persisted to SQLite as it grows.

Two levels of state identity (after DroidBot): an exact key (window title + the visible
elements' roles, names and relevant states) and an abstract key (structure only: roles and
ancestor roles, no text). Both hash only what is visible, so a hidden dialog is not a state.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cua.perception.elements import STRUCTURED_SOURCES, Observation, UIElement

# States of an element that change what the UI is (not focus/hover, which flicker).
KEY_STATES = ("checked", "selected", "expanded", "pressed", "disabled", "insensitive")
HIDDEN_STATES = ("invisible", "hidden", "offscreen")
# Roles whose names are free text (document content, clocks, status lines): left out of the exact key.
VOLATILE_ROLES = ("text", "document", "paragraph", "status bar", "label", "static", "terminal", "entry")


def is_visible(el: UIElement, size: tuple[int, int] | None = None) -> bool:
    """Counted in a state when it has an area, lies on screen and is not marked hidden."""
    x, y, w, h = el.bbox
    if w <= 0 or h <= 0 or any(s in el.states for s in HIDDEN_STATES):
        return False
    return not (size and size[0] > 0 and (x >= size[0] or y >= size[1] or x + w <= 0 or y + h <= 0))


def _digest(parts: Iterable[str]) -> str:
    h = hashlib.blake2b(digest_size=10)
    for p in parts:
        h.update(p.encode("utf-8", "replace"))
        h.update(b"\x1f")
    return h.hexdigest()


def _role_path(el: UIElement) -> str:
    return "/".join(p.split(":", 1)[0] for p in el.path) + "/" + el.role


@dataclass(frozen=True)
class StateKey:
    """Identity of a screen state; equality and hashing use the exact key only."""

    exact: str
    abstract: str = field(compare=False)
    title: str = field(default="", compare=False)

    def __str__(self) -> str:
        return self.exact


ITEM_ROLES = ("list item", "table cell", "tree item", "table row", "option", "row", "gridcell", "treeitem")
ITEMS_KEPT = 3  # a list's first items name it; the rest only count (in powers of two)
_FILEISH = re.compile(r"(^\d+[.:]?\s)|(/)|(\.[A-Za-z0-9]{1,5}$)|(^_?\d+\.\s)")


def _abstract_name(role: str, name: str) -> str:
    """A recent-files entry ('1. notes.txt', '/home/u/a.txt') is the same control whatever file it names."""
    return "<file>" if "menu item" in role and _FILEISH.search(name or "") else name


def state_key(obs: Observation, volatile_roles: Iterable[str] = VOLATILE_ROLES) -> StateKey:
    """Exact + abstract keys of an observation (visible elements only; free text left out).

    Dynamic content is abstracted so the graph neither explodes nor merges distinct states: where the
    screen has an accessibility tree or a DOM, only their elements count (OCR and the detector add what
    the pixels showed at one instant: a closing menu, a tooltip, a misread digit), and not the active
    window's title, which the tree's windows carry and which lags a dialog's opening; free-text
    names (clocks, counters, documents) are left out, a long list keeps its first items and a
    power-of-two bucket of its length, recent-file menu entries lose their file names.
    """
    volatile = {r.lower() for r in volatile_roles}
    vis = [e for e in obs.structural() if is_visible(e, obs.size)]
    structured = any(e.source in STRUCTURED_SOURCES for e in vis)
    exact_parts, abstract_parts = [], []
    per_list: dict[str, int] = {}
    for e in vis:
        role = e.role.lower()
        if role in ITEM_ROLES:
            where = "/".join(e.path) + "|" + role
            per_list[where] = per_list.get(where, 0) + 1
            if per_list[where] > ITEMS_KEPT:
                continue
        name = "" if role in volatile else _abstract_name(role, e.name)
        states = ",".join(s for s in KEY_STATES if s in e.states)
        exact_parts.append(f"{'/'.join(e.path)}|{role}|{name}|{states}")
        abstract_parts.append(_role_path(e))
    exact_parts += [f"{w}|items:{1 << (n - 1).bit_length()}" for w, n in per_list.items() if n > ITEMS_KEPT]
    title = obs.window_title or ""
    # the tree names its windows itself; the active window's title lags a dialog's opening (the same
    # dialog was keyed once under its parent's title, then under its own)
    exact = _digest([*([] if structured else [title]), *sorted(exact_parts)])
    abstract = _digest(sorted(set(abstract_parts)))
    return StateKey(exact=exact, abstract=abstract, title=title)


def base_key(exact: str) -> str:
    """The screen's key of a value-context state (its key is the screen's key, '~', a digest of the values
    shown: the same screen after a value changed, where controls that did nothing are tried again)."""
    return exact.split("~", 1)[0]


def visible_signatures(obs: Observation, tree_only: bool = False) -> set[str]:
    """Signatures on screen; tree_only: the tree's alone where there is one (Observation.structural)."""
    els = obs.structural() if tree_only else obs.elements
    return {e.signature for e in els if is_visible(e, obs.size) and e.signature}


def distinguishing(new: Observation, old: Observation | None, limit: int = 6) -> tuple[list[str], list[str]]:
    """Signatures that appeared (present) and disappeared (absent) going old -> new; a postcondition
    (the tree's, where there is one: Observation.structural).

    Controls, dialogs and menu items are preferred; free-text elements (whose names may be a clock or
    document content) are used only when nothing else changed.
    """
    now = visible_signatures(new, tree_only=True)
    before = visible_signatures(old, tree_only=True) if old is not None else set()
    volatile = set(VOLATILE_ROLES)
    roles = {e.signature: e.role.lower() for e in [*(old.elements if old else []), *new.elements]}

    def pick(sigs: set[str], free_text: bool) -> list[str]:
        return sorted((s for s in sigs if free_text or roles.get(s) not in volatile), key=len)[:limit]

    present, absent = pick(now - before, False), pick(before - now, False)
    if not present and not absent:
        present, absent = pick(now - before, True), pick(before - now, True)
    return present, absent


SCHEMA = """
CREATE TABLE IF NOT EXISTS states (
  key TEXT PRIMARY KEY, abstract TEXT, title TEXT, depth INTEGER, prefix TEXT, path_names TEXT,
  elements TEXT, screenshot TEXT, first_seen REAL, done INTEGER DEFAULT 0, candidates TEXT);
CREATE TABLE IF NOT EXISTS transitions (
  id INTEGER PRIMARY KEY AUTOINCREMENT, src TEXT, signature TEXT, action TEXT, dst TEXT,
  effect TEXT, seconds REAL, t REAL, UNIQUE(src, signature));
CREATE TABLE IF NOT EXISTS graph_meta (k TEXT PRIMARY KEY, v TEXT);
"""

EFFECTS = ("no_change", "value_change", "new_state", "known_state", "app_closed", "error_dialog", "error", "denied")


class UIGraph:
    """States, transitions and ineffective actions in SQLite (WAL), written as exploration goes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        cols = {r[1] for r in self.db.execute("PRAGMA table_info(meta)")}
        if {"k", "v"} <= cols:  # graphs written before the table was renamed (the library has its own meta)
            self.db.execute("INSERT OR IGNORE INTO graph_meta(k, v) SELECT k, v FROM meta")

    def close(self) -> None:
        self.db.close()

    # -- states ---------------------------------------------------------------------------------
    def add_state(self, key: StateKey, obs: Observation, depth: int, prefix: list[dict[str, Any]],
                  path_names: list[str], screenshot: str | None = None,
                  candidates: list[str] | None = None) -> bool:
        """Insert a state; False when it was already known. `candidates`: signatures to try there (None: all)."""
        els = json.dumps([e.model_dump(mode="json") for e in obs.elements if is_visible(e, obs.size)])
        cur = self.db.execute(
            "INSERT OR IGNORE INTO states(key, abstract, title, depth, prefix, path_names, elements,"
            " screenshot, first_seen, candidates) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (key.exact, key.abstract, key.title, depth, json.dumps(prefix), json.dumps(path_names),
             els, screenshot, time.time(), None if candidates is None else json.dumps(candidates)))
        return cur.rowcount == 1

    def has_state(self, key: StateKey | str) -> bool:
        return self.db.execute("SELECT 1 FROM states WHERE key=?", (str(key),)).fetchone() is not None

    def state(self, key: StateKey | str) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT key, abstract, title, depth, prefix, path_names, elements, screenshot, done, candidates"
            " FROM states WHERE key=?", (str(key),)).fetchone()
        if row is None:
            return None
        return {"key": row[0], "abstract": row[1], "title": row[2], "depth": row[3],
                "prefix": json.loads(row[4]), "path_names": json.loads(row[5]),
                "elements": json.loads(row[6]), "screenshot": row[7], "done": bool(row[8]),
                "candidates": None if row[9] is None else json.loads(row[9])}

    def mark_done(self, key: StateKey | str) -> None:
        self.db.execute("UPDATE states SET done=1 WHERE key=?", (str(key),))

    def open_states(self) -> list[dict[str, Any]]:
        """States not fully explored, shallowest first: where a resumed run picks up."""
        keys = [r[0] for r in self.db.execute("SELECT key FROM states WHERE done=0 ORDER BY depth, first_seen")]
        return [s for k in keys if (s := self.state(k)) is not None]

    # -- transitions ----------------------------------------------------------------------------
    def add_transition(self, src: StateKey | str, signature: str, action: dict[str, Any],
                       dst: StateKey | str | None, effect: str, seconds: float = 0.0) -> None:
        if effect not in EFFECTS:
            raise ValueError(f"unknown effect {effect!r}; expected one of {', '.join(EFFECTS)}")
        self.db.execute(
            "INSERT OR REPLACE INTO transitions(src, signature, action, dst, effect, seconds, t)"
            " VALUES (?,?,?,?,?,?,?)",
            (str(src), signature, json.dumps(action), str(dst) if dst is not None else None, effect,
             seconds, time.time()))

    def tried(self, src: StateKey | str) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT signature FROM transitions WHERE src=?", (str(src),))}

    def tried_anywhere(self) -> set[str]:
        """Every candidate key tried from any state."""
        return {r[0] for r in self.db.execute("SELECT DISTINCT signature FROM transitions")}

    def transitions(self, src: StateKey | str | None = None) -> list[dict[str, Any]]:
        q = "SELECT src, signature, action, dst, effect, seconds FROM transitions"
        rows = self.db.execute(q + (" WHERE src=?" if src else "") + " ORDER BY id", (str(src),) if src else ())
        return [{"src": r[0], "signature": r[1], "action": json.loads(r[2]), "dst": r[3], "effect": r[4],
                 "seconds": r[5]} for r in rows]

    def ineffective(self) -> list[dict[str, Any]]:
        return [t for t in self.transitions() if t["effect"] == "no_change"]

    # -- summary / meta -------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        n_states = self.db.execute("SELECT COUNT(*) FROM states").fetchone()[0]
        n_trans = self.db.execute("SELECT COUNT(*) FROM transitions").fetchone()[0]
        by_effect = dict(self.db.execute("SELECT effect, COUNT(*) FROM transitions GROUP BY effect").fetchall())
        return {"states": n_states, "transitions": n_trans, **by_effect}

    def get_meta(self, k: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT v FROM graph_meta WHERE k=?", (k,)).fetchone()
        return row[0] if row else default

    def set_meta(self, k: str, v: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO graph_meta(k, v) VALUES (?,?)", (k, v))
