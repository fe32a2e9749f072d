"""Demonstration recording on the guest: adapts the recorder (recorder/capture.py) to /recording/*."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class RecorderUnavailable(RuntimeError):
    """The recorder package is missing or cannot record here; the message says why."""


def make_recorder(out_dir: Path) -> Any:
    """A recorder object with start(env, task) -> dict and stop() -> dict, or a clear error."""
    try:
        import recorder.capture  # noqa: F401
    except ImportError as e:
        raise RecorderUnavailable(f"the recorder is not installed on this guest ({e}); start without "
                                  "--recordings") from None
    raise RecorderUnavailable("recording through the guest is not wired to this recorder version yet")
