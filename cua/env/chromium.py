"""The distribution's Chromium for Playwright: finding it, its flags, one driver per thread, process sweep.

Never runs `playwright install`: the browser is `CUA_CHROMIUM`, /usr/bin/chromium or `chromium` on PATH.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from pathlib import Path
from typing import Any

from cua.env.base import EnvError

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
]


def find_chromium(explicit: str | None = None) -> str:
    """The Chromium binary: `explicit`, $CUA_CHROMIUM, /usr/bin/chromium, or `chromium` on PATH."""
    for cand in (explicit, os.environ.get("CUA_CHROMIUM"), "/usr/bin/chromium"):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
        if cand and cand == explicit:
            raise EnvError(f"chromium binary {cand!r} does not exist or is not executable; "
                           "pass an existing path or install it with `apt-get install chromium`")
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    raise EnvError("no Chromium found: install it with `apt-get install chromium`, "
                   "or set CUA_CHROMIUM=/path/to/chromium")


_DRIVERS = threading.local()  # one Playwright driver per thread, shared by that thread's envs


def acquire_driver() -> Any:
    """The thread's Playwright driver (sync API allows one per thread), started on first use."""
    if getattr(_DRIVERS, "count", 0) == 0:
        from playwright.sync_api import sync_playwright

        _DRIVERS.pw = sync_playwright().start()
        _DRIVERS.count = 0
    _DRIVERS.count += 1
    return _DRIVERS.pw


def release_driver() -> None:
    """Give back this thread's driver; the last release stops it."""
    _DRIVERS.count -= 1
    if _DRIVERS.count == 0:
        pw, _DRIVERS.pw = _DRIVERS.pw, None
        with contextlib.suppress(Exception):
            pw.stop()


def chromium_pids(tag: str) -> list[int]:
    """Live pids of the chromium this env started (command line carries `--cua-env-tag`) and its children."""
    needle = f"--cua-env-tag={tag}".encode()
    roots, parent = set(), {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                continue  # a zombie is already dead
            parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            if needle in (d / "cmdline").read_bytes():
                roots.add(int(d.name))
        except (OSError, IndexError, ValueError):
            continue
    found, frontier = set(roots), set(roots)
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier and p not in found}
        found |= frontier
    return sorted(found)


__all__ = ["CHROMIUM_ARGS", "acquire_driver", "chromium_pids", "find_chromium", "release_driver"]
