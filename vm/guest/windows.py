"""Top-level windows of an X display (EWMH _NET_CLIENT_LIST), for the guest's /windows endpoint."""

from __future__ import annotations

from typing import Any


def display_of(env: Any) -> str | None:
    """The X display an environment drives (its own `display`, or its sandbox's); None for headless ones.

    Never $DISPLAY: a headless browser guest must not expose whatever desktop the server happens to run on.
    """
    for obj in (env, getattr(env, "sandbox", None)):
        d = getattr(obj, "display", None) if obj is not None else None
        if isinstance(d, str) and ":" in d:
            return d
    return None


def list_windows(display: str) -> list[dict]:
    """Managed windows: id, title, class, geometry, active flag."""
    from Xlib import X
    from Xlib import display as xdisplay
    from Xlib.error import XError

    d = xdisplay.Display(display)
    try:
        root = d.screen().root
        atom = d.intern_atom
        clients = root.get_full_property(atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
        active = root.get_full_property(atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
        active_id = int(active.value[0]) if active and len(active.value) else 0
        out = []
        for wid in (clients.value if clients else []):
            w = d.create_resource_object("window", int(wid))
            try:
                name = w.get_full_property(atom("_NET_WM_NAME"), atom("UTF8_STRING"))
                title = name.value.decode("utf-8", "replace") if name else (w.get_wm_name() or "")
                cls = w.get_wm_class() or ("", "")
                g = w.get_geometry()
                pos = w.translate_coords(root, 0, 0)
                out.append({
                    "id": int(wid), "title": str(title), "app": str(cls[1] if len(cls) > 1 else cls[0]),
                    "bbox": [-pos.x, -pos.y, g.width, g.height], "active": int(wid) == active_id,
                })
            except XError:  # the window vanished while we looked at it
                continue
        return out
    finally:
        d.close()
