"""`cua vm build`: a bootable Debian desktop image for the cua guest, from the Debian archive.

mmdebstrap builds a bookworm root with a kernel, Xvfb, openbox, D-Bus, AT-SPI, the requested apps and
a Python venv holding the guest's dependencies (wheels fetched on the host from the package index, then
installed offline in the chroot); mke2fs turns it into an ext4 disk, qemu-img into qcow2. The kernel and
initrd sit beside it for direct kernel boot. The cua package is NOT baked in: each boot installs this
checkout's wheel, passed through QEMU's fw_cfg, so the image is cached by the hash of its inputs (apps,
packages, dependency pins, this file, the setup script) and survives code changes; a second build with
the same inputs is instant.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SUITE = "bookworm"
SUITE_PYTHON = "3.11.2"  # bookworm's python3, which runs the guest's venv
BASE_PACKAGES = [
    "linux-image-amd64", "systemd-sysv", "udev", "dbus", "dbus-x11", "iproute2", "ca-certificates",
    "xvfb", "xauth", "openbox", "x11-utils", "xdotool", "at-spi2-core", "python3-pyatspi", "gir1.2-atspi-2.0",
    "python3", "python3-venv", "fonts-dejavu-core", "libgl1", "libglib2.0-0", "procps",
    "x11vnc",  # the guest server's /vnc live-view route (vm/guest/vnc.py)
    "openssh-server",  # `cua vm ssh` (keys made per VM, passed through fw_cfg)
]
# Top-level Python packages the guest server imports (pins come from the host's environment).
GUEST_PYTHON = [
    "pydantic", "typer", "rich", "pyyaml", "numpy", "pillow", "mss", "pyautogui", "python-xlib", "pynput",
    "rapidocr-onnxruntime", "onnxruntime", "rapidfuzz", "rank-bm25", "httpx", "fastapi", "uvicorn", "av",
    "opentelemetry-api", "python-multipart", "websockets",
]
DEFAULT_CACHE = Path(os.environ.get("CUA_IMAGE_CACHE", "~/.cache/cua/images")).expanduser()


@dataclass(frozen=True)
class Profile:
    """An app name that stands for a whole setup (`cua vm build --apps osworld`): Debian packages, extra
    Python packages for the guest's venv, a second customize hook, and what the guest's desktop opens."""

    packages: tuple[str, ...]
    python: tuple[str, ...]
    hook: str
    app: str
    memory_mb: int
    name: str
    ready: str  # what a booted VM waits for: "elements" (the app's accessibility tree) or "window" (none)


def _extra(name: str) -> tuple[str, ...]:
    """The packages of one of cua's optional extras (pyproject.toml), as installed here (none when cua runs
    from a checkout that pip did not install)."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement

    try:
        reqs = [Requirement(r) for r in requires("cua") or []]
    except PackageNotFoundError:
        return ()
    return tuple(r.name for r in reqs if r.marker is not None and r.marker.evaluate({"extra": name}))


# OSWorld's apps as `make osworld-apps` installs them (plus Chromium, in make setup's list), its metrics'
# Python packages (the `osworld` extra) and Playwright for the Chrome getters' CDP attach; the guest
# serves /osworld with --allow-exec, on the empty desktop OSWorld's tasks start from.
PROFILES = {"osworld": Profile(
    packages=("chromium", "libreoffice-calc", "libreoffice-writer", "libreoffice-impress", "libreoffice-gtk3",
              "gimp", "vlc", "thunderbird", "fonts-liberation2", "libglib2.0-bin", "x11-xserver-utils"),
    python=("playwright", *_extra("osworld")), hook="guest-osworld.sh",
    app="/opt/cua/venv/bin/python -m cua.eval.osworld.desktop", memory_mb=2048, name="cua-osworld",
    ready="window")}


class BuildError(RuntimeError):
    """The image could not be built; the message names the step and the fix."""


@dataclass
class Image:
    """A built image: the qcow2 disk, its kernel and initrd, and the key it was built for."""

    disk: Path
    kernel: Path
    initrd: Path
    key: str

    def manifest(self) -> dict:
        return {"disk": str(self.disk), "kernel": str(self.kernel), "initrd": str(self.initrd), "key": self.key}


def _pins(names: list[str]) -> list[str]:
    """`name==version` from the running interpreter's environment, so guest and host agree."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for n in names:
        try:
            out.append(f"{n}=={version(n)}")
        except PackageNotFoundError:
            out.append(n)
    return out


BUILD_VERSION = 1  # bump when the build steps below change what ends up in the image


def image_key(apps: list[str], pins: list[str]) -> str:
    """The hash of everything that decides the image's content (not this file's comments or layout)."""
    h = hashlib.sha256()
    h.update(json.dumps({"v": BUILD_VERSION, "suite": SUITE, "packages": BASE_PACKAGES, "apps": sorted(apps),
                         "pins": pins}).encode())
    for hook in _hooks(apps):
        h.update(hook.read_bytes())
    return h.hexdigest()[:16]


def _profiles(apps: list[str]) -> list[Profile]:
    return [PROFILES[a] for a in apps if a in PROFILES]


def _hooks(apps: list[str]) -> list[Path]:
    """The customize hooks, in order: the guest's own, then each profile's."""
    return [HERE / "guest-setup.sh", *(HERE / p.hook for p in _profiles(apps))]


def _packages(apps: list[str]) -> list[str]:
    """Debian packages for `apps`, a profile name standing for its packages."""
    out = list(BASE_PACKAGES)
    for a in apps:
        out += PROFILES[a].packages if a in PROFILES else [a]
    return list(dict.fromkeys(out))


def guest_defaults(apps: list[str]) -> dict:
    """What a VM of this image opens, how much memory it gets unless told, and what its boot waits for
    (image.json)."""
    prof = _profiles(apps)
    if prof:
        return {"app": prof[0].app, "memory_mb": prof[0].memory_mb, "ready": prof[0].ready}
    return {"app": apps[0] if apps else "mousepad", "memory_mb": None, "ready": "elements"}


def default_name(apps: list[str]) -> str:
    prof = _profiles(apps)
    return prof[0].name if prof else "cua-guest"


def _run(argv: list[str], what: str, log: Path, env: dict | None = None) -> None:
    with log.open("a") as fh:
        fh.write(f"\n$ {' '.join(argv)}\n")
        fh.flush()
        proc = subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, env=env)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-2500:]
        raise BuildError(f"{what} failed (exit {proc.returncode}); log {log}:\n{tail}")


def _resolve_for_guest(host_python: str = "/usr/bin/python3") -> list[str]:
    """pip's `--python` for the host's Debian python3 when it is the guest's version, so the dependencies
    pip picks for the unpinned ones (this host had a soupsieve that needs Python >= 3.11.5) install on the guest's 3.11.2."""
    try:
        found = subprocess.run([host_python, "-c", "import platform; print(platform.python_version())"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        return []
    return ["--python", host_python] if found == SUITE_PYTHON else []


def _need_tools() -> None:
    missing = [t for t in ("mmdebstrap", "mke2fs", "qemu-img") if shutil.which(t) is None]
    if missing:
        raise BuildError(f"missing {', '.join(missing)}: `apt-get install mmdebstrap e2fsprogs qemu-utils` "
                         "(make setup installs them)")
    if os.geteuid() != 0:
        raise BuildError("building an image needs root (mmdebstrap --mode=root and a chroot); run it with sudo")


def build_image(apps: list[str] | None = None, name: str | None = None, cache: Path = DEFAULT_CACHE,
                size_gb: int | None = None, say=print) -> Image:
    """Build (or reuse) the image for `apps` (Debian packages, or a profile name such as `osworld`)."""
    apps = list(apps or ["mousepad"])
    name = name or default_name(apps)
    size_gb = size_gb or (10 if _profiles(apps) else 6)
    pins = _pins(GUEST_PYTHON + [n for p in _profiles(apps) for n in p.python])
    key = image_key(apps, pins)
    folder = cache / f"{name}-{key}"
    img = Image(folder / "disk.qcow2", folder / "vmlinuz", folder / "initrd.img", key)
    if img.disk.exists() and img.kernel.exists() and img.initrd.exists():
        say(f"image {img.disk} is up to date (key {key})")
        return img
    _need_tools()
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="cua-build-", dir=cache))
    log = work / "build.log"
    t0 = time.monotonic()
    try:
        say(f"building {name} (key {key}) for apps {', '.join(apps)}; log {log}")
        wheels = work / "wheels"
        _run([sys.executable, "-m", "pip", *_resolve_for_guest(), "wheel", "-q", "--wheel-dir", str(wheels), *pins],
             "downloading the guest's Python wheels", log)
        root = work / "root"
        env = {**os.environ, "WHEELHOUSE": str(wheels), "GUEST_REQUIREMENTS": " ".join(pins)}
        _run(["mmdebstrap", "--mode=root", "--variant=apt", "--format=directory", "--skip=output/dev",
              "--include=" + ",".join(_packages(apps)), *(f"--customize-hook={h} \"$1\"" for h in _hooks(apps)),
              SUITE, str(root)], "mmdebstrap (the Debian root)", log, env)
        boot = root / "boot"
        kernels, initrds = sorted(boot.glob("vmlinuz-*")), sorted(boot.glob("initrd.img-*"))
        if not kernels or not initrds:
            raise BuildError(f"no kernel or initrd in {boot}; is linux-image-amd64 in the package list?")
        tmp_folder = work / "out"
        tmp_folder.mkdir()
        shutil.copy2(kernels[-1], tmp_folder / "vmlinuz")
        shutil.copy2(initrds[-1], tmp_folder / "initrd.img")
        raw = work / "disk.raw"
        _run(["mke2fs", "-q", "-t", "ext4", "-L", "cua-root", "-d", str(root), str(raw), f"{size_gb}G"],
             "mke2fs (the ext4 disk)", log)
        _run(["qemu-img", "convert", "-O", "qcow2", str(raw), str(tmp_folder / "disk.qcow2")], "qemu-img convert", log)
        (tmp_folder / "image.json").write_text(json.dumps({"key": key, "apps": apps, "pins": pins, "suite": SUITE,
                                                           "built": time.time(), **guest_defaults(apps)}, indent=1))
        shutil.rmtree(folder, ignore_errors=True)
        tmp_folder.rename(folder)
        say(f"built {img.disk} in {time.monotonic() - t0:.0f}s")
        return img
    finally:
        shutil.rmtree(work / "root", ignore_errors=True)
        shutil.rmtree(work / "wheels", ignore_errors=True)
        for leftover in ("disk.raw",):
            (work / leftover).unlink(missing_ok=True)
        if img.disk.exists():
            shutil.rmtree(work, ignore_errors=True)


def build_wheel(out: Path) -> Path:
    """This checkout as a wheel (what each boot installs in the guest)."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("cua-*.whl"):
        old.unlink()
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "--wheel-dir", str(out), str(REPO)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"building the cua wheel failed: {proc.stderr[-1500:]}")
    wheels = sorted(out.glob("cua-*.whl"))
    if not wheels:
        raise BuildError(f"pip wheel wrote no cua wheel into {out}")
    return wheels[-1]
