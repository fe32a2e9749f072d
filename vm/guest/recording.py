"""Demonstration recording on the guest: /recording/start|stop drive recorder.capture.Recorder, and
/recording/{session}/archive hands a finished session back as a tar (cua.env.session_archive)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from cua.env.base import EnvError
from cua.env.session_archive import valid_session


def default_recordings_dir() -> Path:
    """Where a guest records when given neither --root nor --recordings: the guest user's private data folder."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "cua" / "recordings"


class SessionError(EnvError):
    """A session name that is malformed (400), unknown (404) or still being recorded (409)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class GuestRecorder:
    """One recording at a time, each into a new private (0700) folder under `base`."""

    def __init__(self, base: Path | str):
        self.base = Path(base).expanduser()
        self._rec: Any = None
        self._dir: Path | None = None

    def start(self, env: Any, task: str = "", **options: Any) -> dict:
        """Start recording the env's display; `options` go to the Recorder (fps, hotkeys, scrub, mask_unknown)."""
        from recorder.capture import Recorder
        from recorder.store import RecordingError
        from vm.guest.windows import display_of

        if self._rec is not None:
            raise EnvError(f"a recording is already running into {self._dir}; POST /recording/stop first")
        display = display_of(env)
        if not display:
            raise EnvError("this environment has no X display to record; serve a desktop or sandbox env")
        self.base.mkdir(parents=True, exist_ok=True, mode=0o700)
        out = self.base / time.strftime("rec-%Y%m%d-%H%M%S")
        n = 1
        while out.exists():
            out = self.base / (time.strftime("rec-%Y%m%d-%H%M%S") + f"-{n}")
            n += 1
        try:
            # the same path as `cua record`: the AT-SPI probe, password masking and blur, unknown-window masking
            self._rec = Recorder.for_env(env, out, task=task, **options).start()
        except RecordingError as e:
            raise EnvError(str(e)) from None
        self._dir = out
        return {"recording": True, "session": out.name, "dir": str(out), "display": display}

    def status(self) -> dict:
        """Whether a recording runs, its counts, and whether it stopped by itself (the stop hotkey pressed on
        the guest's desktop, or a failed writer): then POST /recording/stop collects it."""
        rec, out = self._rec, self._dir  # one look: /recording/stop may clear them on the env thread meanwhile
        if rec is None or out is None:
            return {"recording": False}
        counts = dict(rec.writer.counts) if rec.writer is not None else {}
        return {"recording": True, "session": out.name, "dir": str(out), "stopped": rec.stopped.is_set(),
                "seconds": round(rec.now(), 1), **counts}

    def stop(self) -> dict:
        from recorder.store import RecordingError

        if self._rec is None:
            raise EnvError("no recording is running; POST /recording/start first")
        rec, out, self._rec, self._dir = self._rec, self._dir, None, None
        try:
            stats = rec.stop()
        except RecordingError as e:
            raise EnvError(str(e)) from None
        return {"recording": False, "session": out.name, "dir": str(out), "stats": stats}

    def session_dir(self, session: str) -> Path:
        """The folder of a finished session, by name; never a path outside `base`, never a link."""
        if not valid_session(session):
            raise SessionError(f"{session!r} is not a session name; use the one /recording/start answered "
                               "(e.g. rec-20260101-120000)", 400)
        if self._dir is not None and self._dir.name == session:
            raise SessionError(f"session {session} is still being recorded; POST /recording/stop first", 409)
        path = self.base / session
        if path.is_symlink() or not path.is_dir():
            raise SessionError(f"no recording named {session} on this guest (in {self.base})", 404)
        return path

    def close(self) -> None:
        if self._rec is not None:
            self.stop()


def make_recorder(base: Path | str) -> GuestRecorder:
    return GuestRecorder(base)
