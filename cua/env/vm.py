"""`vm:IMAGE`: a QEMU/KVM virtual machine that cua boots itself, driven through its guest server.

The VM runs on a qcow2 overlay of the image (`cua vm build` makes one) with direct kernel boot, KVM
when /dev/kvm is usable (TCG, much slower, otherwise), 1 vCPU and 1 GiB by default, and user-mode
networking whose only host port is the guest server's, forwarded to 127.0.0.1. A fresh token per VM
and this checkout's cua wheel reach the guest through fw_cfg.

Reset by snapshot: once the guest answers, QEMU stops, writes its device state (a few MB; RAM is
skipped with x-ignore-shared because it already lives in a file under /dev/shm) and quits, which
freezes the overlay and the RAM file as the ready state. Every reset (and the first start after the
save) starts a fresh QEMU on a new overlay over the frozen one, maps the RAM file copy-on-write and
loads the device state: about a second, where `loadvm` read all of RAM back out of the qcow2 file.
QEMU dies with its owner (PDEATHSIG) and a watchdog removes the VM's folder if the owner is killed.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
import weakref
from pathlib import Path
from typing import Any

import httpx

from cua.env.base import EnvError
from cua.env.qemu import (QMP, choose_accel, exec_uri, free_port, make_overlay, make_ssh_keys, port_free,
                          qemu_argv, spawn, ssh_argv)
from cua.env.remote import RemoteEnv
from cua.env.sandbox import _cleanup, _start_guard

REPO = Path(__file__).resolve().parents[2]
IMAGE_CACHE = Path(os.environ.get("CUA_IMAGE_CACHE", "~/.cache/cua/images")).expanduser()
DEFAULT_MEMORY_MB = 1024
DEFAULT_CPUS = 1
DEFAULT_APP = "mousepad"  # the app a vm:IMAGE desktop opens (what `cua explore` and `cua skills` file skills under)


def resolve_image(image: str) -> Path:
    """The image folder (disk.qcow2, vmlinuz, initrd.img) for a path or a name in the image cache."""
    p = Path(image).expanduser()
    if p.is_file():
        p = p.parent
    if not p.is_dir():
        hits = sorted(IMAGE_CACHE.glob(f"{image}-*/disk.qcow2"), key=lambda f: f.stat().st_mtime)
        if not hits:
            raise EnvError(f"VM image {image!r} not found (neither a folder nor a name in {IMAGE_CACHE}); "
                           "build one with `cua vm build --apps mousepad`")
        p = hits[-1].parent
    for f in ("disk.qcow2", "vmlinuz", "initrd.img"):
        if not (p / f).is_file():
            raise EnvError(f"VM image folder {p} lacks {f}; rebuild it with `cua vm build`")
    check = subprocess.run(["qemu-img", "check", "-q", str(p / "disk.qcow2")], capture_output=True, text=True)
    if check.returncode != 0:
        raise EnvError(f"VM image {p / 'disk.qcow2'} is corrupt ({check.stderr.strip() or check.returncode}); "
                       "rebuild it with `cua vm build`")
    return p


def image_defaults(folder: Path) -> dict:
    """What the image's build says a VM of it opens and needs (`app`, `memory_mb`, `ready`; image.json)."""
    try:
        meta = json.loads((folder / "image.json").read_text())
    except (OSError, ValueError):
        return {}
    return {k: meta[k] for k in ("app", "memory_mb", "ready") if isinstance(meta, dict) and meta.get(k)}


def build_wheel(out: Path) -> Path:
    """This checkout as a wheel: what the guest installs at boot. One build at a time (a lock file): pip
    builds in the checkout's build/ folder, which concurrent VMs would otherwise trample."""
    import fcntl

    IMAGE_CACHE.mkdir(parents=True, exist_ok=True)
    with open(IMAGE_CACHE / ".wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                               "--wheel-dir", str(out), str(REPO)], capture_output=True, text=True)
    wheels = sorted(out.glob("cua-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise EnvError(f"building the cua wheel for the guest failed: {proc.stderr[-1500:]}")
    return wheels[-1]


def _scratch() -> Path:
    """Where a VM's folder goes: /dev/shm (its RAM file must be in memory) unless CUA_VM_DIR says otherwise."""
    base = os.environ.get("CUA_VM_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    return Path(tempfile.mkdtemp(prefix="cua-vm-", dir=base))  # 0700


def _need_space(folder: Path, mb: int) -> None:
    free = shutil.disk_usage(folder).free // (1024 * 1024)
    if free < mb:
        raise EnvError(f"not enough space for the VM in {folder}: {free} MiB free, {mb} MiB needed (its RAM file "
                       "and overlay); free some space, lower --vm-memory, or set CUA_VM_DIR to a larger tmpfs")


class VMEnv(RemoteEnv):
    """A booted VM as a RemoteEnv; reset() restores the saved post-boot state."""

    def __init__(self, image: str, memory_mb: int | None = None, cpus: int | None = None,
                 app: str | None = None, boot_timeout: float = 1800.0, port: int | None = None, **options: Any):
        if shutil.which("qemu-system-x86_64") is None or shutil.which("qemu-img") is None:
            raise EnvError("QEMU is not installed: `apt-get install qemu-system-x86 qemu-utils` (make setup does)")
        self.image = resolve_image(image)
        defaults = image_defaults(self.image)
        memory_mb = (memory_mb or int(os.environ.get("CUA_VM_MEMORY") or 0)  # --vm-memory
                     or defaults.get("memory_mb") or DEFAULT_MEMORY_MB)
        app = app or defaults.get("app") or DEFAULT_APP
        self.ready = defaults.get("ready", "elements")
        cpus = cpus or int(os.environ.get("CUA_VM_CPUS") or DEFAULT_CPUS)  # --vm-cpus
        if not 256 <= int(memory_mb) <= 65536 or not 1 <= int(cpus) <= 64:
            raise EnvError(f"VM memory {memory_mb} MiB / {cpus} vCPUs out of range: memory 256..65536 MiB, "
                           "vCPUs 1..64 (e.g. --vm-memory 1024 --vm-cpus 1)")
        if port is not None and not port_free(port):
            raise EnvError(f"port 127.0.0.1:{port} is taken; pick another or leave it out (a free one is chosen)")
        self.kvm = choose_accel()
        self.memory_mb, self.cpus, self.app = int(memory_mb), int(cpus), app
        self.marker = f"cua-vm-{uuid.uuid4().hex[:12]}"
        self.root = _scratch()
        self._procs: list[subprocess.Popen] = []
        self._guard = _start_guard(self.marker, str(self.root))
        self._finalizer = weakref.finalize(self, _cleanup, self._procs, self.marker, str(self.root), self._guard)
        self.qmp: QMP | None = None
        self.timings: dict[str, float] = {}
        if not self.kvm:
            print("warning: no usable KVM (no /dev/kvm, or a CPU without vmx/svm); the VM runs under TCG "
                  "emulation, several times slower (CUA_VM_ACCEL=kvm forces KVM)", file=sys.stderr)
        token = secrets.token_urlsafe(32)
        self.port = port or free_port()
        try:
            _need_space(self.root, self.memory_mb + 256)
            self._token_file = self.root / "token"
            fd = os.open(self._token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(token)
            self.wheel = build_wheel(self.root)
            self.ssh_port = free_port()
            self.ssh_dir = self.root / "ssh"
            self.ssh_dir.mkdir(mode=0o700)
            if not make_ssh_keys(self.ssh_dir, self.ssh_port):
                self.ssh_port = None
            self.serial = self.root / "serial.log"
            t0 = time.monotonic()
            self._start(disk=self.root / "ready.qcow2", ram=self.root / "ram", share=True, incoming=False,
                        timeout=boot_timeout, fresh_disk=self.image / "disk.qcow2")
            super().__init__(f"http://127.0.0.1:{self.port}", token=token, check=False, **options)
            self._wait_guest(time.monotonic() + boot_timeout)
            self.timings["boot_s"] = time.monotonic() - t0
            self._wait_desktop(t0 + boot_timeout)
            self.timings["desktop_s"] = time.monotonic() - t0
            t0 = time.monotonic()
            self._save()
            self.timings["save_s"] = time.monotonic() - t0
            t0 = time.monotonic()
            self._restore()
            self.timings["first_restore_s"] = time.monotonic() - t0
        except BaseException:
            self.close()
            raise
        self.name = f"vm:{image}"

    # -- QEMU processes ---------------------------------------------------------------------------------
    def _start(self, disk: Path, ram: Path, share: bool, incoming: bool, timeout: float,
               fresh_disk: Path) -> None:
        """Start QEMU on a new overlay `disk` over `fresh_disk` (the image, or the frozen ready state)."""
        make_overlay(disk, fresh_disk)
        qmp_path = self.root / "qmp.sock"
        qmp_path.unlink(missing_ok=True)
        argv = qemu_argv(marker=self.marker, image=self.image, disk=disk, ram=ram, share=share,
                         memory_mb=self.memory_mb, cpus=self.cpus, port=self.port, serial=self.serial, qmp=qmp_path,
                         token_file=self._token_file, wheel=self.wheel, app=self.app, kvm=self.kvm,
                         incoming=incoming, ssh_port=self.ssh_port, ssh_dir=self.ssh_dir)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CUA_SANDBOX_ID": self.marker}
        with (self.root / "qemu.log").open("wb") as log:  # a file, not a pipe nobody drains
            proc = spawn(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self._procs.append(proc)
        self.proc = proc
        deadline = time.monotonic() + min(timeout, 60)
        while not qmp_path.exists():
            self._alive()
            if time.monotonic() > deadline:
                raise EnvError("QEMU did not open its monitor socket within 60 s")
            time.sleep(0.01)
        try:
            self.qmp = QMP(qmp_path)
        except (OSError, EnvError):
            time.sleep(0.5)
            self._alive()  # QEMU died: its own message says why
            raise

    def _alive(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is not None:
            log = self.root / "qemu.log"
            out = (log.read_bytes()[-4000:] if log.exists() else b"").decode(errors="replace").strip()
            hint = ""
            if "hostfwd" in out or "host forwarding" in out:
                hint = f" (is port 127.0.0.1:{self.port} taken?)"
            elif "No space left" in out or "Cannot allocate memory" in out:
                hint = f" (disk or memory full: `df -h {self.root.parent}`; lower --vm-memory)"
            elif "kvm" in out.lower() and self.kvm:
                hint = " (KVM failed: CUA_VM_ACCEL=tcg runs the VM under emulation)"
            raise EnvError(f"QEMU exited with code {proc.returncode}{hint}: {out[-1500:]}")

    def _stop_qemu(self) -> None:
        if self.qmp is not None:
            try:
                self.qmp.command("quit")
            except (EnvError, OSError):
                pass
            self.qmp.close()
            self.qmp = None
        proc = getattr(self, "proc", None)
        if proc is not None:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc in self._procs:
                self._procs.remove(proc)
            self.proc = None

    def _wait_guest(self, deadline: float) -> None:
        url = f"http://127.0.0.1:{self.port}/health"
        while True:
            self._alive()
            try:
                if httpx.get(url, headers={"Authorization": f"Bearer {self._token}"}, timeout=3,
                             trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                tail = self.serial.read_text(errors="replace")[-2000:] if self.serial.exists() else "(empty)"
                raise EnvError(f"the guest never answered on 127.0.0.1:{self.port}; serial console tail:\n{tail}")
            time.sleep(0.05)

    def _wait_desktop(self, deadline: float) -> None:
        """Until the app shows elements: the guest answers before the app's accessibility tree is up, and a
        state saved then would make every reset wait for it again. An image whose app has no tree (OSWorld's
        empty desktop: `ready: window`) is ready once the guest observes it (its window is mapped)."""
        while time.monotonic() < deadline:
            try:
                if self.observe().elements or self.ready == "window":
                    return
            except EnvError:
                pass
            time.sleep(1.0)

    # -- the ready state -------------------------------------------------------------------------------
    def _save(self) -> None:
        """Freeze the booted desktop: device state to a file, RAM left in its file, the overlay closed."""
        qmp = self.qmp
        qmp.command("stop")
        qmp.command("migrate-set-capabilities", capabilities=[{"capability": "x-ignore-shared", "state": True}])
        qmp.command("migrate", uri=exec_uri(["dd", f"of={self.root / 'devices'}", "status=none"]))
        self._wait_migration("completed")
        self._stop_qemu()

    def _wait_migration(self, want: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            st = (self.qmp.command("query-migrate") or {}).get("status", "")
            if st == want:
                return
            if st in ("failed", "cancelled") or time.monotonic() > deadline:
                raise EnvError(f"saving or loading the VM state ended as {st or 'timeout'!r}; serial tail:\n"
                               f"{self.serial.read_text(errors='replace')[-800:]}")
            time.sleep(0.01)

    def _restore(self) -> None:
        """A fresh QEMU on a new overlay over the ready disk, RAM mapped copy-on-write, devices loaded."""
        self._stop_qemu()
        self._start(disk=self.root / "run.qcow2", ram=self.root / "ram", share=False, incoming=True, timeout=120,
                    fresh_disk=self.root / "ready.qcow2")
        self.qmp.command("migrate-set-capabilities", capabilities=[{"capability": "x-ignore-shared", "state": True}])
        self.qmp.command("migrate-incoming", uri=exec_uri(["cat", str(self.root / "devices")]))
        self._wait_migration("completed")
        self.qmp.command("cont")  # the state was saved stopped, so it loads paused
        self._reconnect()
        self._wait_guest(time.monotonic() + 120)

    def reset(self):  # type: ignore[override]
        """Back to the booted desktop from the saved state (about a second, not a boot)."""
        t0 = time.monotonic()
        self._restore()
        self.last_obs = None
        self.timings["reset_s"] = time.monotonic() - t0
        return self.observe()

    def reboot(self) -> float:
        """Reset by rebooting the guest (what a snapshot saves); returns the seconds until it answers."""
        t0 = time.monotonic()
        self.qmp.command("system_reset")
        time.sleep(1.0)  # the old guest server may answer for a moment before the reset reaches it
        self._reconnect()
        self._wait_guest(time.monotonic() + 900)
        return time.monotonic() - t0

    def ssh_command(self, command: list[str] | None = None) -> list[str]:
        """The `ssh` argument list that logs into this VM as root (or runs `command` there)."""
        if not self.ssh_port:
            raise EnvError("this VM has no ssh: ssh-keygen is missing on the host (apt-get install openssh-client)")
        return ssh_argv(self.ssh_dir, self.ssh_port, command)

    def memory_kb(self) -> dict[str, int]:
        """QEMU's resident memory and the RAM file's share of it (kB)."""
        out = {"rss_kb": 0, "pss_kb": 0}
        try:
            for ln in Path(f"/proc/{self.proc.pid}/smaps_rollup").read_text().splitlines():
                k, _, v = ln.partition(":")
                if k in ("Rss", "Pss"):
                    out[f"{k.lower()}_kb"] = int(v.split()[0])
        except (OSError, AttributeError):
            pass
        return out

    def close(self) -> None:
        self._stop_qemu()
        self._finalizer()
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()
