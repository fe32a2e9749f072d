"""Fixtures for recorder tests: a bare Xvfb display, an xdotool driver, process hygiene."""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def xvfb(size: tuple[int, int] = (1280, 800)) -> Iterator[str]:
    """A fresh Xvfb with the RECORD extension on a free display number, answering before it is yielded;
    killed on exit. A client connected right after Xvfb reports its number was now and then refused or
    reset (1 in 30 here, and two recorder tests in CI), and a server without -noreset resets when its
    last client leaves, dropping whoever connects next: it runs with -noreset, and one connection of ours
    stays open while it is in use."""
    import Xlib.display
    import Xlib.error

    r, w = os.pipe()
    proc = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(w),
            "-screen",
            "0",
            f"{size[0]}x{size[1]}x24",
            "-nolisten",
            "tcp",
            "+extension",
            "RECORD",
            "-noreset",
        ],
        pass_fds=(w,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(w)
    try:
        ready, _, _ = select.select([r], [], [], 30)
        if not ready:
            raise RuntimeError("Xvfb did not report a display within 30 s")
        display = ":" + os.read(r, 64).decode().strip()
        hold, deadline = None, time.monotonic() + 30
        while hold is None:
            try:
                hold = Xlib.display.Display(display)
            except (Xlib.error.DisplayError, Xlib.error.ConnectionClosedError, OSError):
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"Xvfb on {display} does not answer") from None
                time.sleep(0.1)
        try:
            yield display
        finally:
            hold.close()
    finally:
        os.close(r)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def xdo(display: str, *args: str, xauthority: str | None = None) -> None:
    """Run xdotool against `display` as a separate process (real X input events); a sandbox display needs
    its cookie file (`xauthority`, printed by `cua record` on its second line)."""
    env = {**os.environ, "DISPLAY": display, **({"XAUTHORITY": xauthority} if xauthority else {})}
    subprocess.run(["xdotool", *args], env=env, check=True, timeout=60)
