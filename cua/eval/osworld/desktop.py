"""The empty desktop OSWorld's tasks start from: one full-screen desktop-type window, below every app.

OSWorld's Ubuntu VM shows a desktop with no app open; its set-up steps launch the apps. A cua
sandbox waits for its app's window, so an OSWorld episode's sandbox app is this background.
Run: python -m cua.eval.osworld.desktop
"""

from __future__ import annotations

import sys
import time


def main() -> None:
    from Xlib import X, Xatom, display

    d = display.Display()
    screen = d.screen()
    win = screen.root.create_window(0, 0, screen.width_in_pixels, screen.height_in_pixels, 0, screen.root_depth,
                                    X.InputOutput, X.CopyFromParent, background_pixel=0x2c3e50,
                                    event_mask=X.ExposureMask)
    win.set_wm_name("Desktop")
    win.set_wm_class("cua-desktop", "Desktop")
    win.change_property(d.intern_atom("_NET_WM_WINDOW_TYPE"), Xatom.ATOM, 32,
                        [d.intern_atom("_NET_WM_WINDOW_TYPE_DESKTOP")])
    win.change_attributes(event_mask=X.ExposureMask | X.StructureNotifyMask)
    # A window manager still starting up can drop the map request (seen with openbox on a slow TCG guest:
    # the window stayed unmapped and the sandbox waited for it forever), so ask again until it is mapped.
    while win.get_attributes().map_state != X.IsViewable:
        win.map()
        d.flush()
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and win.get_attributes().map_state != X.IsViewable:
            while d.pending_events():
                d.next_event()
            time.sleep(0.05)
    while True:
        d.next_event()


if __name__ == "__main__":
    sys.exit(main())
