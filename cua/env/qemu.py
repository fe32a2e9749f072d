"""QEMU plumbing for `vm:IMAGE`: the accelerator choice, a minimal QMP client and the command line.

The VM's RAM is a file (memory-backend-file) so that its saved state is that file plus a small
device-state stream: a restore maps the file copy-on-write (share=off) and loads only the devices,
which takes about a second where `loadvm` reads all of RAM back out of the qcow2 image.
"""

from __future__ import annotations

import ctypes
import json
import os
import shlex
import signal
import socket
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from cua.env.base import EnvError

GUEST_PORT = 8765


def die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


_SPAWNER: ThreadPoolExecutor | None = None


def spawn(argv: list[str], **kw: Any) -> subprocess.Popen:
    """Popen with PDEATHSIG, always from one long-lived thread: the signal fires when the forking *thread*
    ends, so a QEMU started by a reset in a short-lived worker thread would otherwise die with it."""
    global _SPAWNER
    if _SPAWNER is None:
        _SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cua-qemu-spawner")
    return _SPAWNER.submit(subprocess.Popen, argv, preexec_fn=die_with_parent, **kw).result()


def kvm_usable() -> bool:
    """KVM only when /dev/kvm opens and the CPU shows hardware virtualisation (vmx/svm): a /dev/kvm
    without it (nested, unassisted) accepts KVM_CREATE_VM yet runs a guest far slower than TCG.
    CUA_VM_ACCEL=kvm|tcg overrides."""
    forced = os.environ.get("CUA_VM_ACCEL", "").lower()
    if forced in ("kvm", "tcg"):
        return forced == "kvm"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    try:
        flags = next((ln for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith("flags")), "")
    except OSError:
        return False
    return bool({"vmx", "svm"} & set(flags.split()))


def choose_accel() -> bool:
    """True for KVM, False for TCG; a clear error when neither can run here."""
    kvm = kvm_usable()
    if kvm and not os.access("/dev/kvm", os.R_OK | os.W_OK):
        raise EnvError("CUA_VM_ACCEL=kvm but /dev/kvm is missing or not writable by this user; add the user to "
                       "the kvm group, or use CUA_VM_ACCEL=tcg (emulation)")
    try:
        out = subprocess.run(["qemu-system-x86_64", "-accel", "help"], capture_output=True, text=True,
                             timeout=30).stdout.splitlines()[1:]  # after "Accelerators supported in ...:"
        out = [w.strip() for w in out if w.strip()]
    except (OSError, subprocess.TimeoutExpired) as e:
        raise EnvError(f"cannot run qemu-system-x86_64 ({e}); `apt-get install qemu-system-x86`") from None
    if not kvm and "tcg" not in out:
        why = ("CUA_VM_ACCEL=tcg asks for emulation" if os.environ.get("CUA_VM_ACCEL", "").lower() == "tcg"
               else "no usable KVM (no /dev/kvm or a CPU without vmx/svm)")
        raise EnvError(f"{why}, but this QEMU has no TCG (its accelerators: {', '.join(out) or 'none'}); "
                       "run on a host with KVM or install Debian's qemu-system-x86, which has TCG")
    return kvm


def make_overlay(disk: Path, backing: Path) -> None:
    """A new qcow2 overlay `disk` over `backing`; a clear error when it cannot be written (a full disk)."""
    disk.unlink(missing_ok=True)
    made = subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-b", str(backing), "-F", "qcow2", str(disk)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        err = made.stderr.strip() or f"qemu-img exited with {made.returncode}"
        full = "No space left" in err or "Disk quota" in err
        raise EnvError(f"cannot create the VM overlay {disk}: {err}"
                       + ("; the disk is full: free space there (`df -h " + str(disk.parent) + "`) or set "
                          "CUA_VM_DIR to a folder on a larger filesystem" if full else ""))


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class QMP:
    """A minimal QMP client on a unix socket: one command at a time, JSON lines."""

    def __init__(self, path: Path, timeout: float = 60.0):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.buf = b""
        self._read()  # greeting
        self.command("qmp_capabilities")

    def _read(self) -> dict:
        while True:
            while b"\n" not in self.buf:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise EnvError("QEMU closed its monitor socket")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            msg = json.loads(line)
            if "event" not in msg:
                return msg

    def command(self, name: str, **args: Any) -> Any:
        self.sock.sendall(json.dumps({"execute": name, **({"arguments": args} if args else {})}).encode() + b"\n")
        reply = self._read()
        if "error" in reply:
            raise EnvError(f"QEMU {name} failed: {reply['error'].get('desc', reply['error'])}")
        return reply.get("return")

    def close(self) -> None:
        self.sock.close()


def qemu_argv(*, marker: str, image: Path, disk: Path, ram: Path, share: bool, memory_mb: int, cpus: int,
              port: int, serial: Path, qmp: Path, token_file: Path, wheel: Path, app: str, kvm: bool,
              incoming: bool, ssh_port: int | None = None, ssh_dir: Path | None = None,
              sandbox_timeout: int = 600) -> list[str]:
    """The QEMU command line: direct kernel boot of the image on `disk`, RAM in the file `ram` (shared
    while booting so a stop leaves the RAM in the file; private on a restore so the saved file stays
    intact), user networking whose only host port is the guest server's, on 127.0.0.1."""
    argv = ["qemu-system-x86_64", "-name", marker, "-m", str(memory_mb), "-smp", str(cpus),
            "-nodefaults", "-display", "none", "-no-user-config",
            "-object", f"memory-backend-file,id=ram0,size={memory_mb}M,mem-path={ram},share={'on' if share else 'off'}",
            "-machine", "pc,memory-backend=ram0",
            "-kernel", str(image / "vmlinuz"), "-initrd", str(image / "initrd.img"),
            "-append", "root=/dev/vda rw console=ttyS0 systemd.show_status=0 systemd.journald.forward_to_console=1",
            "-drive", f"id=disk0,file={disk},if=virtio,format=qcow2",
            "-netdev", f"user,id=n0,restrict=off,hostfwd=tcp:127.0.0.1:{port}-:{GUEST_PORT}"
            + (f",hostfwd=tcp:127.0.0.1:{ssh_port}-:22" if ssh_port else ""),
            "-device", "virtio-net-pci,netdev=n0", "-device", "virtio-rng-pci",
            "-chardev", f"file,id=ser0,path={serial},append=on", "-serial", "chardev:ser0",
            "-qmp", f"unix:{qmp},server=on,wait=off",
            "-fw_cfg", f"name=opt/cua/token,file={token_file}",  # a 0600 file: not in the process list
            "-fw_cfg", f"name=opt/cua/wheel,file={wheel}",
            "-fw_cfg", f"name=opt/cua/wheel_name,string={wheel.name}",
            "-fw_cfg", f"name=opt/cua/app,string={app}",
            "-fw_cfg", f"name=opt/cua/sandbox_timeout,string={int(sandbox_timeout)}"]
    if ssh_port and ssh_dir:
        argv += ["-fw_cfg", f"name=opt/cua/ssh_host_key,file={ssh_dir / 'host_key'}",
                 "-fw_cfg", f"name=opt/cua/ssh_authorized,file={ssh_dir / 'key.pub'}"]
    # -cpu host trips over MSRs a nested KVM does not expose; under TCG numpy needs x86-64-v2+ (-cpu max)
    argv += ["-enable-kvm"] if kvm else ["-accel", "tcg,thread=multi", "-cpu", "max"]
    if incoming:
        argv += ["-incoming", "defer"]
    return argv


def exec_uri(cmd: list[str]) -> str:
    """A migration `exec:` URI (QEMU runs it with /bin/sh -c) with every word quoted."""
    return "exec:" + " ".join(shlex.quote(c) for c in cmd)


def make_ssh_keys(folder: Path, port: int) -> bool:
    """A client key and a guest host key for one VM (0600, in its folder) and the known_hosts line that
    pins the guest's key; False when ssh-keygen is missing (the VM then has no ssh)."""
    import shutil

    if shutil.which("ssh-keygen") is None:
        return False
    for name in ("key", "host_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"cua-vm-{name}", "-f",
                        str(folder / name)], check=True, capture_output=True)
    host_pub = (folder / "host_key.pub").read_text().split()
    (folder / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
    return True


def ssh_argv(folder: Path, port: int, command: list[str] | None = None) -> list[str]:
    """`ssh` into the VM as root with its own key, checking the guest's pinned host key."""
    return ["ssh", "-i", str(folder / "key"), "-p", str(port), "-o", f"UserKnownHostsFile={folder / 'known_hosts'}",
            "-o", "StrictHostKeyChecking=yes", "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR",
            "root@127.0.0.1", *(command or [])]
