"""Accessibility (AT-SPI) elements of the visible windows, read through a persistent helper process.

python3-pyatspi / gi only import under Debian's /usr/bin/python3, not in the venv, so
`A11yReader` runs cua/perception/atspi_helper.py there (JSON lines over stdin/stdout), once per
environment, with that desktop's DISPLAY / D-Bus variables, and restarts it if it dies. Every call
is bounded: a slow or hung tree gives a partial (or empty) snapshot flagged `partial`, never a hang.

Example:
    with A11yReader(sandbox.env) as reader:
        snap = reader.snapshot()
        print(snap.window_title, [e.name for e in snap.elements if e.role == "menu"])
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from cua.perception.elements import UIElement, make_signature

HELPER = Path(__file__).with_name("atspi_helper.py")
SYSTEM_PYTHON = os.environ.get("CUA_SYSTEM_PYTHON", "/usr/bin/python3")
# Unnamed containers that only lay things out: kept out of the element list (they stay out of paths too).
NOISE_ROLES = {"filler", "panel", "scroll pane", "viewport", "layered pane", "root pane", "glass pane",
               "split pane", "section", "separator", "unknown", "redundant object", "invalid"}


class _HelperDied(RuntimeError):
    """The helper's pipe closed under a request (it crashed or was killed)."""


@dataclass
class A11ySnapshot:
    """The visible accessible elements, the active window's title and app, and whether the walk was cut short."""

    elements: list[UIElement] = field(default_factory=list)
    window_title: str = ""
    app: str = ""
    partial: bool = False
    error: str | None = None
    elapsed: float = 0.0
    visited: int = 0


def blocked_windows(nodes: list[dict]) -> set[str]:
    """Windows a modal dialog blocks: while an app's active window is modal, its other windows take no input."""
    modal = {(n.get("path") or [""])[0]: n.get("win") for n in nodes
             if n.get("top") and {"active", "modal"} <= set(n.get("states", []))}
    return {n.get("win") for n in nodes if n.get("top") and (n.get("path") or [""])[0] in modal
            and n.get("win") != modal[(n.get("path") or [""])[0]]}


def nodes_to_elements(nodes: list[dict], prefix: str = "a", keep_blocked: bool = False) -> list[UIElement]:
    """Helper nodes -> UIElements with signatures that are unique within the snapshot (#2, #3 for repeats).

    Unnamed layout containers are dropped, and so are the windows a modal dialog blocks (their
    elements are showing but cannot be used until the dialog closes) unless `keep_blocked`: a checker
    reads the app's state behind an open dialog too.
    """
    out: list[UIElement] = []
    seen: dict[str, int] = {}
    blocked = set() if keep_blocked else blocked_windows(nodes)
    for n in nodes:
        role, name = n.get("role", "unknown"), n.get("name", "")
        if (role in NOISE_ROLES and not name) or (blocked and n.get("win") in blocked):
            continue
        path = [p for p in n.get("path", []) if p]
        sig_name = "" if n.get("top") and role == "frame" else name  # window titles change; the role does not
        sig = make_signature(role, sig_name, path)
        seen[sig] = seen.get(sig, 0) + 1
        if seen[sig] > 1:
            sig = f"{sig}#{seen[sig]}"
        states = list(n.get("states", []))
        if "sensitive" in states and "enabled" not in states:
            states.append("enabled")
        if role == "page tab" and "focused" in states and not {"selectable", "selected"} & set(states):
            states.append("selected")  # Qt marks the current tab focused only: it is the selected one
        out.append(UIElement(id=f"{prefix}{len(out)}", role=role, name=name, bbox=tuple(n["bbox"]), source="a11y",
                             states=states, path=path, signature=sig, value=n.get("value"),
                             attrs={"depth": n.get("depth", 0),
                                    **{k: n[k] for k in ("description", "keys") if n.get(k)}}))
    return out


def smallest_at(elements: list[UIElement], x: float, y: float) -> UIElement | None:
    """The innermost element containing (x, y): smallest area, deepest on ties."""
    hits = [e for e in elements if e.contains(x, y)]
    if not hits:
        return None
    return min(hits, key=lambda e: (e.bbox[2] * e.bbox[3], -int(e.attrs.get("depth", 0))))


class A11yReader:
    """One helper process per desktop; `snapshot()` and `element_at()` are thread-safe and bounded."""

    def __init__(self, env_vars: dict[str, str] | None = None, screen: tuple[int, int] = (1280, 800),
                 start_timeout: float = 20.0) -> None:
        self.env_vars = dict(os.environ if env_vars is None else env_vars)
        self.screen = screen
        self.start_timeout = start_timeout
        self._proc: subprocess.Popen | None = None
        self._buf = b""
        self._lock = threading.Lock()
        self._stderr = None
        self.unavailable: str | None = None

    # -- helper process -----------------------------------------------------------------------
    def available(self) -> bool:
        """Whether the system python has gi/Atspi (checked once, by starting the helper)."""
        if self.unavailable is None and self._proc is None:
            with self._lock, contextlib.suppress(RuntimeError):
                self._ensure()
        return self.unavailable is None

    def _ensure(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        self._kill()
        if not (os.path.exists(SYSTEM_PYTHON) or shutil.which(SYSTEM_PYTHON)):
            self.unavailable = (f"{SYSTEM_PYTHON} not found; AT-SPI needs Debian's python3 with "
                                "`apt-get install python3-pyatspi gir1.2-atspi-2.0` (or set CUA_SYSTEM_PYTHON)")
            raise RuntimeError(self.unavailable)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the helper
        env = {k: v for k, v in self.env_vars.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        env.pop("NO_AT_BRIDGE", None)
        self._proc = subprocess.Popen([SYSTEM_PYTHON, "-s", str(HELPER)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._stderr, env=env, start_new_session=True)
        self._buf = b""
        try:
            reply = self._request({"op": "hello"}, self.start_timeout)
        except _HelperDied as e:
            reply = {"error": str(e)}
        if reply is None or "error" in reply:
            why = (reply or {}).get("error") or self._stderr_tail() or "no reply"
            self._kill()
            if "gi" in why or "Atspi" in why or "Namespace" in why:
                self.unavailable = (f"AT-SPI is not usable from {SYSTEM_PYTHON} ({why}); install it with "
                                    "`apt-get install python3-pyatspi gir1.2-atspi-2.0`")
            raise RuntimeError(f"the AT-SPI helper did not start: {why}")

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            return self._stderr.read().decode(errors="replace")[-400:].strip()
        except (OSError, ValueError):
            return ""

    def _request(self, req: dict, timeout: float) -> dict | None:
        """Send one request, wait at most `timeout` for the reply; None (and the helper killed) on timeout."""
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write((json.dumps(req) + "\n").encode())
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._kill()
            raise _HelperDied("the AT-SPI helper's pipe is closed") from None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self._kill()
                    return None
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    self._kill()
                    raise _HelperDied(self._stderr_tail() or "the AT-SPI helper exited")
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.kill()
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
            for f in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    f and f.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- queries -----------------------------------------------------------------------------
    def snapshot(self, max_nodes: int = 3000, timeout: float = 2.0, keep_blocked: bool = False) -> A11ySnapshot:
        """Visible elements of all windows, walked for at most `max_nodes` nodes / `timeout` seconds
        (`keep_blocked`: with those of windows a modal dialog blocks)."""
        t0 = time.monotonic()
        req = {"op": "snapshot", "max_nodes": max_nodes, "timeout": timeout, "screen": list(self.screen)}
        reply: dict | None = None
        with self._lock:
            for attempt in (1, 2):  # a helper that died since the last call is restarted once
                try:
                    self._ensure()
                    reply = self._request(req, timeout + 3.0)
                    break
                except _HelperDied as e:
                    if attempt == 2:
                        return A11ySnapshot(partial=True, error=f"the AT-SPI helper died: {e}",
                                            elapsed=time.monotonic() - t0)
                except RuntimeError as e:
                    return A11ySnapshot(partial=True, error=str(e), elapsed=time.monotonic() - t0)
        elapsed = time.monotonic() - t0
        if reply is None:
            return A11ySnapshot(partial=True, error=f"the AT-SPI walk gave no answer within {timeout + 3:.0f}s "
                                f"(helper restarted)", elapsed=elapsed)
        if "error" in reply:
            return A11ySnapshot(partial=True, error=reply["error"], elapsed=elapsed)
        return A11ySnapshot(nodes_to_elements(reply.get("nodes", []), keep_blocked=keep_blocked),
                            reply.get("window_title", ""),
                            reply.get("app", ""), bool(reply.get("partial")), None, elapsed,
                            int(reply.get("visited", 0)))

    def tree(self, max_nodes: int = 50000, timeout: float = 30.0) -> dict:
        """The whole hierarchy, hidden nodes included: {"tree": [application nodes], "partial", "visited"}.

        The walk OSWorld's VM server makes for its accessibility-tree getter; raises RuntimeError when
        the helper cannot answer.
        """
        with self._lock:
            for attempt in (1, 2):  # a helper that died since the last call is restarted once
                try:
                    self._ensure()
                    reply = self._request({"op": "tree", "max_nodes": max_nodes, "timeout": timeout}, timeout + 5.0)
                    break
                except _HelperDied as e:
                    if attempt == 2:
                        raise RuntimeError(f"the AT-SPI helper died: {e}") from None
        if reply is None:
            raise RuntimeError(f"the AT-SPI tree walk gave no answer within {timeout + 5:.0f}s (helper restarted)")
        if "error" in reply:
            raise RuntimeError(f"the AT-SPI tree walk failed: {reply['error']}")
        return reply

    def element_at(self, x: float, y: float, snapshot: A11ySnapshot | None = None) -> UIElement | None:
        """The innermost accessible element under screen point (x, y), or None."""
        snap = snapshot or self.snapshot()
        return smallest_at(snap.elements, x, y)

    def focused(self, snapshot: A11ySnapshot | None = None) -> UIElement | None:
        """The element with the `focused` state, or None."""
        snap = snapshot or self.snapshot()
        return next((e for e in reversed(snap.elements) if "focused" in e.states), None)

    def close(self) -> None:
        with self._lock:
            self._kill()

    def __enter__(self) -> A11yReader:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # best effort; close() is the contract
        with contextlib.suppress(Exception):
            self._kill()
