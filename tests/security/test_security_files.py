"""Item 6 of issue 19: what the `cua` command writes (screenshots, element lists, marks) is private.

Run the real command as a user would, with a permissive umask in the caller, and check every mode.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

CUA = str(Path(sys.executable).with_name("cua"))


def test_cua_observe_writes_private_files(tmp_path):
    out = tmp_path / "obs"
    old = os.umask(0o022)  # the usual umask: 0644 files, 0755 directories
    try:
        r = subprocess.run([CUA, "observe", "--env", "sandbox:mousepad", "--sources", "a11y", "--out", str(out)],
                           capture_output=True, text=True, timeout=300, check=False)  # a11y: no OCR model load
    finally:
        os.umask(old)
    assert r.returncode == 0, r.stderr[-2000:]
    made = [out, *out.rglob("*")]
    assert any(p.suffix == ".png" for p in made)  # a screenshot holds screen content
    for p in made:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode & 0o077 == 0, (p, oct(mode))
