#!/usr/bin/python3
"""AT-SPI tree walker, run by Debian's /usr/bin/python3 (gi/Atspi are not importable from the venv).

Protocol: one JSON request per stdin line, one JSON reply per stdout line.
  {"op": "hello"}                                       -> {"ok": true}
  {"op": "snapshot", "max_nodes": N, "timeout": S, "screen": [w, h]}
      -> {"nodes": [...], "window_title": str, "app": str, "partial": bool, "visited": int}
Each node: role, name, bbox [x, y, w, h], states [...], path ['role:name', ...], value, top (bool),
depth. Only showing nodes are walked; the walk stops at max_nodes or the time budget (partial=true).
  {"op": "tree", "max_nodes": N, "timeout": S}
      -> {"tree": {"role", "name", "states", "attributes", "bbox", "text", "image", "selection", "value",
                   "actions", "children"} per application, "partial": bool, "visited": int}
The whole hierarchy, hidden nodes included, as OSWorld's VM server walks it (its accessibility-tree XML
is built from this by cua/eval/osworld/a11y_xml.py).
This file must stay importable by a plain system python3 (no venv packages).
"""

import contextlib
import json
import sys
import time

LAYOUT_ROLES = {"filler", "panel", "scroll pane", "viewport", "layered pane", "root pane", "glass pane",
                "split pane", "section", "unknown", "redundant object", "invalid", "internal frame"}
TEXT_ROLES = {"text", "entry", "password text", "paragraph", "document text", "spin button", "terminal",
              "editbar", "combo box"}
HINT_ROLES = {"push button", "toggle button", "menu item", "check menu item", "radio menu item", "check box",
              "radio button", "page tab", "tool bar button"}  # their description (tooltip) and shortcut are read
WINDOW_ROLES = {"frame", "window", "dialog", "alert", "file chooser", "color chooser", "font chooser"}
STATE_KEEP = {"active", "armed", "busy", "checked", "collapsed", "editable", "enabled", "expandable",
              "expanded", "focusable", "focused", "indeterminate", "modal", "multi-line", "pressed",
              "selectable", "selected", "sensitive", "showing", "visible", "checkable", "read-only",
              "has-popup", "single-line", "required", "invalid-entry", "visited"}


TREE_MAX_DEPTH = 50  # OSWorld's server: MAX_DEPTH, MAX_WIDTH
TREE_MAX_WIDTH = 1024
CALC_SCAN = 500  # a Calc table's cells are walked by index, showing ones only, scanning this far for the first


def _import_atspi():
    import gi

    gi.require_version("Atspi", "2.0")
    from gi.repository import Atspi, GLib

    return Atspi, GLib


class Walker:
    def __init__(self):
        self.Atspi, self.GLib = _import_atspi()
        A = self.Atspi
        A.init()
        with contextlib.suppress(Exception):
            A.set_timeout(1500, 15000)
        # No event listener / main loop on purpose: libatspi then caches nothing and every walk reads
        # live state (a cache fed by events misses 'showing' changes of descendants).

    def states(self, node):
        try:
            ss = node.get_state_set()
            out = []
            for st in ss.get_states():
                nick = st.value_nick.replace("_", "-")
                if nick in STATE_KEEP:
                    out.append(nick)
            return out
        except Exception:  # noqa: BLE001
            return []

    def bbox(self, node):
        try:
            r = node.get_extents(self.Atspi.CoordType.SCREEN)
            return [int(r.x), int(r.y), int(r.width), int(r.height)]
        except Exception:  # noqa: BLE001
            return None

    def value(self, node, role, states):
        if role not in TEXT_ROLES and "editable" not in states:
            return None
        try:
            if "Text" not in node.get_interfaces():
                return None
            n = self.Atspi.Text.get_character_count(node)
            return self.Atspi.Text.get_text(node, 0, min(n, 4000))
        except Exception:  # noqa: BLE001
            return None

    def hints(self, node):
        """A control's accessible description (toolkits put the tooltip there) and its shortcut key."""
        out = {}
        try:
            desc = " ".join((node.get_description() or "").split())
            if desc:
                out["description"] = desc[:200]
            if "Action" in node.get_interfaces() and self.Atspi.Action.get_n_actions(node) > 0:
                keys = self.Atspi.Action.get_key_binding(node, 0) or ""
                if keys:
                    out["keys"] = keys[:60]
        except Exception:  # noqa: BLE001, S110 - the node died; it has no hints
            pass
        return out

    def snapshot(self, max_nodes=3000, timeout=2.0, screen=(1280, 800)):
        A = self.Atspi
        deadline = time.monotonic() + timeout
        nodes, visited, partial = [], 0, False
        title, app_name, first_title, first_app = "", "", "", ""
        desktop = A.get_desktop(0)
        sw, sh = screen
        stack = []
        for i in range(desktop.get_child_count() - 1, -1, -1):
            app = desktop.get_child_at_index(i)
            if app is None:
                continue
            try:
                aname = app.get_name() or ""
            except Exception:  # noqa: BLE001, S112
                continue
            path = ["application:" + aname]
            try:
                n_win = app.get_child_count()
            except Exception:  # noqa: BLE001, S112
                continue
            for j in range(n_win - 1, -1, -1):
                stack.append((app.get_child_at_index(j), path, aname, True, 0, f"{i}:{j}"))
        while stack:
            if visited >= max_nodes or time.monotonic() > deadline:
                partial = True
                break
            node, path, aname, top, depth, win = stack.pop()
            if node is None:
                continue
            visited += 1
            states = self.states(node)  # first: hidden subtrees cost one call, not three
            if "showing" not in states:
                continue
            try:
                role = node.get_role_name() or "unknown"
                name = " ".join((node.get_name() or "").split())
            except Exception:  # noqa: BLE001, S112 - the node died during the walk
                continue
            box = self.bbox(node)
            if top and role in WINDOW_ROLES:
                if not first_title:
                    first_title, first_app = name, aname
                if "active" in states and not title:
                    title, app_name = name, aname
            if box is not None and box[2] > 0 and box[3] > 0:
                x0, y0 = max(box[0], 0), max(box[1], 0)
                x1, y1 = min(box[0] + box[2], sw), min(box[1] + box[3], sh)
                if x1 > x0 and y1 > y0:
                    nodes.append({"role": role, "name": name, "bbox": [x0, y0, x1 - x0, y1 - y0],
                                  "states": states, "path": path, "top": top, "depth": depth, "win": win,
                                  "value": self.value(node, role, states),
                                  **(self.hints(node) if role in HINT_ROLES else {})})
            # ancestors for the signature: top-level windows by role only (titles change),
            # unnamed layout containers skipped
            if top and role == "frame":
                step = "frame:"
            elif role in LAYOUT_ROLES and not name:
                step = None
            else:
                step = role + ":" + name
            child_path = path + [step] if step else path
            try:
                n = node.get_child_count()
            except Exception:  # noqa: BLE001, S112
                continue
            for k in range(min(n, max_nodes) - 1, -1, -1):
                try:
                    child = node.get_child_at_index(k)
                except Exception:  # noqa: BLE001, S112
                    continue
                stack.append((child, child_path, aname, False, depth + 1, win))
        return {"nodes": nodes, "window_title": title or first_title, "app": app_name or first_app,
                "partial": partial, "visited": visited}

    # -- the whole tree, OSWorld's way ---------------------------------------------------------
    def tree(self, max_nodes=50000, timeout=30.0):
        self._deadline = time.monotonic() + timeout
        self._budget = max_nodes
        self._partial = False
        self._visited = 0
        desktop = self.Atspi.get_desktop(0)
        apps = []
        for i in range(desktop.get_child_count()):
            app = desktop.get_child_at_index(i)
            if app is not None:
                node = self._tree_node(app, 1, None)
                if node is not None:
                    apps.append(node)
        return {"tree": apps, "partial": self._partial, "visited": self._visited}

    def _tree_node(self, node, depth, flag):
        if self._visited >= self._budget or time.monotonic() > self._deadline:
            self._partial = True
            return None
        self._visited += 1
        A = self.Atspi
        try:
            role = (node.get_role_name() or "").strip()
            out = {"role": role, "name": node.get_name() or ""}
        except Exception:  # noqa: BLE001 - the node died during the walk
            return None
        states = []
        with contextlib.suppress(Exception):
            for st in node.get_state_set().get_states():
                states.append(st.value_name.removeprefix("ATSPI_STATE_").lower())
        out["states"] = states
        with contextlib.suppress(Exception):
            out["attributes"] = {str(k): str(v) for k, v in (node.get_attributes() or {}).items()}
        try:
            ifaces = set(node.get_interfaces())
        except Exception:  # noqa: BLE001
            ifaces = set()
        if "visible" in states and "showing" in states and "Component" in ifaces:
            out["bbox"] = self.bbox(node)
        if "Text" in ifaces:
            with contextlib.suppress(Exception):
                n = A.Text.get_character_count(node)
                out["text"] = A.Text.get_text(node, 0, n).replace("\ufffc", "").replace("\ufffd", "")
        out["image"] = "Image" in ifaces
        out["selection"] = "Selection" in ifaces
        if "Value" in ifaces:
            value = {}
            for key, get in (("value", A.Value.get_current_value), ("min", A.Value.get_minimum_value),
                             ("max", A.Value.get_maximum_value), ("step", A.Value.get_minimum_increment)):
                with contextlib.suppress(Exception):
                    value[key] = str(float(get(node)))
            out["value"] = value
        if "Action" in ifaces:
            actions = []
            with contextlib.suppress(Exception):
                for i in range(A.Action.get_n_actions(node)):
                    actions.append([A.Action.get_action_name(node, i) or "", A.Action.get_action_description(node, i) or "",
                                    A.Action.get_key_binding(node, i) or ""])
            out["actions"] = actions
        if not flag:
            if role == "document spreadsheet":
                flag = "calc"
            elif role == "application" and out["name"] == "Thunderbird":
                flag = "thunderbird"
        children = []
        out["children"] = children
        if depth >= TREE_MAX_DEPTH:
            return out
        if flag == "calc" and role == "table":
            children.extend(self._calc_cells(node, depth, flag))
            return out
        try:
            n = node.get_child_count()
        except Exception:  # noqa: BLE001
            return out
        for i in range(min(n, TREE_MAX_WIDTH)):
            with contextlib.suppress(Exception):
                child = node.get_child_at_index(i)
                if child is not None:
                    c = self._tree_node(child, depth + 1, flag)
                    if c is not None:
                        children.append(c)
        return out

    def _calc_cells(self, table, depth, flag):
        """A spreadsheet's showing cells only (a sheet has millions), row by row from the first showing one."""
        try:
            ncols = self.Atspi.Table.get_n_columns(table)
            nrows = self.Atspi.Table.get_n_rows(table)
        except Exception:  # noqa: BLE001
            return []
        cells, col0 = [], None
        for r in range(nrows):
            found_in_row = False
            for c in range(col0 or 0, ncols):
                try:
                    cell = table.get_child_at_index(r * ncols + c)
                    showing = cell is not None and cell.get_state_set().contains(self.Atspi.StateType.SHOWING)
                except Exception:  # noqa: BLE001
                    showing = False
                if showing:
                    node = self._tree_node(cell, depth + 1, flag)
                    if node is not None:
                        cells.append(node)
                    if col0 is None:
                        col0 = c
                    found_in_row = True
                elif col0 is not None or c >= CALC_SCAN:
                    break
            if (col0 is not None and not found_in_row) or (col0 is None and r >= CALC_SCAN) or self._partial:
                break
        return cells


def main():
    walker = None
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if walker is None:
                walker = Walker()
            op = req.get("op")
            if op == "hello":
                out = {"ok": True}
            elif op == "snapshot":
                out = walker.snapshot(int(req.get("max_nodes", 3000)), float(req.get("timeout", 2.0)),
                                      tuple(req.get("screen", (1280, 800))))
            elif op == "tree":
                out = walker.tree(int(req.get("max_nodes", 50000)), float(req.get("timeout", 30.0)))
            else:
                out = {"error": f"unknown op {op!r}"}
        except Exception as e:  # noqa: BLE001 - every failure becomes a reply, never a crash
            out = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
