"""`cua vm build --apps osworld`: the profile's packages, hooks and guest defaults, without building an image.

The image itself (about 20 minutes of mmdebstrap) is built and run by `benchmarks/osworld_bench.py`; here the
parts that decide what ends up in it are checked: the hook that gives the guest --allow-exec is run on the
real start script that guest-setup.sh writes, and the mousepad image's cache key does not move.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from cua.env.vm import image_defaults
from vm.image import build

SETUP = build.HERE / "guest-setup.sh"


def start_script(root: Path) -> Path:
    """The boot script exactly as guest-setup.sh writes it (its START heredoc) into a root at `root`."""
    body = re.search(r"<<'START'\n(.*?)\nSTART\n", SETUP.read_text(), re.S)
    assert body, "guest-setup.sh no longer writes cua-guest-start from a START heredoc"
    path = root / "usr/local/bin/cua-guest-start"
    path.parent.mkdir(parents=True)
    path.write_text(body.group(1) + "\n")
    return path


def test_osworld_profile_expands_to_its_apps_packages_and_hook():
    pkgs = build._packages(["osworld"])
    for p in ("chromium", "libreoffice-calc", "libreoffice-writer", "libreoffice-impress", "libreoffice-gtk3",
              "gimp", "vlc", "thunderbird"):
        assert p in pkgs
    assert "osworld" not in pkgs and pkgs[: len(build.BASE_PACKAGES)] == build.BASE_PACKAGES
    assert build._hooks(["osworld"]) == [SETUP, build.HERE / "guest-osworld.sh"]
    assert {"openpyxl", "python-pptx", "playwright"} <= set(build.PROFILES["osworld"].python)
    assert build.default_name(["osworld"]) == "cua-osworld" and build.default_name(["mousepad"]) == "cua-guest"


def test_a_plain_app_image_keeps_its_key_and_gets_no_extra_hook():
    pins = build._pins(build.GUEST_PYTHON)
    assert build._hooks(["mousepad"]) == [SETUP]
    assert build._packages(["mousepad"]) == build.BASE_PACKAGES + ["mousepad"]
    assert build.image_key(["mousepad"], pins) != build.image_key(["osworld"], pins)
    # what the key was before profiles existed: the cached mousepad images stay valid
    h = hashlib.sha256(json.dumps({"v": build.BUILD_VERSION, "suite": build.SUITE, "packages": build.BASE_PACKAGES,
                                   "apps": ["mousepad"], "pins": pins}).encode())
    h.update(SETUP.read_bytes())
    assert build.image_key(["mousepad"], pins) == h.hexdigest()[:16]


def test_the_osworld_hook_turns_on_exec_in_the_real_start_script(tmp_path):
    script = start_script(tmp_path)
    assert "--allow-exec" not in script.read_text()
    subprocess.run(["sh", str(build.HERE / "guest-osworld.sh"), str(tmp_path)], check=True)
    serve = [ln for ln in script.read_text().splitlines() if "/bin/cua serve " in ln]
    assert len(serve) == 1 and serve[0].endswith("--sources a11y --allow-exec")
    subprocess.run(["sh", "-n", str(script)], check=True)  # still a valid shell script


def test_the_osworld_hook_fails_the_build_when_the_serve_line_moved(tmp_path):
    path = tmp_path / "usr/local/bin/cua-guest-start"
    path.parent.mkdir(parents=True)
    path.write_text("#!/bin/sh\nexec cua serve --port 8765\n")
    r = subprocess.run(["sh", str(build.HERE / "guest-osworld.sh"), str(tmp_path)], capture_output=True, text=True)
    assert r.returncode != 0 and "no serve line" in r.stderr


@pytest.mark.parametrize("meta,want", [
    ({"app": "/opt/cua/venv/bin/python -m cua.eval.osworld.desktop", "memory_mb": 2048, "ready": "window"},
     {"app": "/opt/cua/venv/bin/python -m cua.eval.osworld.desktop", "memory_mb": 2048, "ready": "window"}),
    ({"apps": ["mousepad"], "app": "mousepad", "memory_mb": None, "ready": "elements"},
     {"app": "mousepad", "ready": "elements"}),
    ({"key": "old image, before the defaults were written"}, {}),
])
def test_a_vm_takes_its_app_and_memory_from_the_image(tmp_path, meta, want):
    (tmp_path / "image.json").write_text(json.dumps(meta))
    assert image_defaults(tmp_path) == want
    assert image_defaults(tmp_path / "missing") == {}
    assert build.guest_defaults(["osworld"]) == {"app": build.PROFILES["osworld"].app, "memory_mb": 2048,
                                                 "ready": "window"}


@pytest.mark.parametrize(("prints", "expected"), [(build.SUITE_PYTHON, True), ("3.11.7", False), (None, False)])
def test_wheels_resolve_for_the_guests_python(tmp_path, prints, expected):
    """pip resolves the guest's wheels with an interpreter of the guest's version when the host has one (a
    newer 3.11.x picked a soupsieve the guest's 3.11.2 refused); otherwise the running one, as before."""
    host = tmp_path / "python3"
    if prints is not None:
        host.write_text(f"#!/bin/sh\necho {prints}\n")
        host.chmod(0o755)
    assert build._resolve_for_guest(str(host)) == (["--python", str(host)] if expected else [])
