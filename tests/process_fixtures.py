"""Reading a running `cua` process's output until a line says what a test waits for."""

from __future__ import annotations

import re
import subprocess
import time
from typing import IO


def read_until(proc: subprocess.Popen, stream: IO[str], pattern: str, timeout: float) -> re.Match:
    """The first match of `pattern` in what `stream` printed from now on (white space folded); fails with
    the output seen when the process ends or `timeout` runs out first."""
    deadline, seen = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line and proc.poll() is not None:
            break
        seen += line
        m = re.search(pattern, " ".join(seen.split()))
        if m:
            return m
    raise AssertionError(f"never saw {pattern!r}; output so far:\n{seen[-3000:]}")
