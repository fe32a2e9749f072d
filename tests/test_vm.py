"""A real VM, booted once: `cua vm build` (cached between runs), QEMU (KVM, or TCG where KVM cannot run),
mousepad observed through the guest server, an action whose effect is seen, reset by snapshot (the
effect is gone), and no QEMU or overlay left after the owner is SIGKILLed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from cua.actions import parse_action
from cua.env.base import EnvError
from cua.env.remote import RemoteEnv
from cua.env.vm import VMEnv
from vm.image.build import build_image

OWNER = """
import json, sys, time
from cua.env.vm import VMEnv
env = VMEnv(sys.argv[1])
print(json.dumps({"marker": env.marker, "root": str(env.root), "url": env.url, "token": env._token,
                  "ssh": env.ssh_command(["cat", "/etc/hostname"]), "timings": env.timings}), flush=True)
for line in sys.stdin:
    t0 = time.monotonic(); env.reset()
    print(json.dumps({"reset_s": time.monotonic() - t0}), flush=True)
"""


@pytest.fixture(scope="module")
def image():
    return build_image(["mousepad"], say=lambda s: print(s, file=sys.stderr))


def _doc(obs) -> str:
    return " ".join((e.value or "") for e in obs.elements if e.role == "text")


def _until(env, pred, timeout: float = 90.0):
    deadline = time.monotonic() + timeout
    while True:
        obs = env.observe()
        if pred(obs) or time.monotonic() > deadline:
            return obs
        time.sleep(1.0)


@pytest.mark.timeout(2400)  # one TCG boot: about 2.5 min on an idle host, 20+ min on a loaded 2-core one
def test_vm_boot_act_reset_and_owner_kill(image):
    import json

    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(image.disk.parent)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        info = json.loads(owner.stdout.readline() or "{}")
        assert info, "the VM did not boot in the owner process"
        ssh = subprocess.run(info["ssh"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert ssh.stdout.strip() == "cua-guest", ssh.stderr  # the guest's own hostname, over its pinned host key
        env = RemoteEnv(info["url"], token=info["token"])
        obs = _until(env, lambda o: any(e.role == "menu" and e.name == "File" for e in o.elements))
        assert any(e.role == "menu" and e.name == "File" for e in obs.elements), obs.window_title
        env.act(parse_action('type("hello vm")'))
        assert "hello vm" in _doc(_until(env, lambda o: "hello vm" in _doc(o)))
        owner.stdin.write("reset\n")
        owner.stdin.flush()
        reset_s = json.loads(owner.stdout.readline())["reset_s"]
        env._reconnect()
        after = _until(env, lambda o: any(e.role == "text" for e in o.elements))
        assert "hello vm" not in _doc(after), "the reset by snapshot did not undo the typing"
        print(f"reset by snapshot: {reset_s:.1f}s; boot: {info['timings']}", file=sys.stderr)
        env.close()
        assert subprocess.run(["pgrep", "-f", info["marker"]], capture_output=True).returncode == 0
    finally:
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
    deadline = time.monotonic() + 30
    while subprocess.run(["pgrep", "-f", info["marker"]], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "QEMU outlived its owner"
        time.sleep(0.5)
    while os.path.exists(info["root"]):
        assert time.monotonic() < deadline, f"the overlay folder {info['root']} outlived its owner"
        time.sleep(0.5)


def test_missing_image_says_how_to_build_one():
    with pytest.raises(EnvError, match="cua vm build"):
        VMEnv("no-such-image-anywhere")


def test_corrupt_image_is_named(tmp_path):
    for f in ("vmlinuz", "initrd.img"):
        (tmp_path / f).write_bytes(b"x")
    (tmp_path / "disk.qcow2").write_bytes(b"QFI\xfb" + b"\0" * 200)  # a qcow2 magic and a broken header
    with pytest.raises(EnvError, match="corrupt.*cua vm build"):
        VMEnv(str(tmp_path))


def test_port_taken_is_named(image):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(EnvError, match="port 127.0.0.1:.* is taken"):
            VMEnv(str(image.disk.parent), port=s.getsockname()[1])


def test_guest_that_never_answers_shows_the_serial_tail(image):
    with pytest.raises(EnvError, match=r"(?s)never answered.*serial console tail:\n.*\[ *\d+\.\d+\] "):
        VMEnv(str(image.disk.parent), boot_timeout=20)  # the kernel's own lines, not an empty tail


@pytest.fixture
def small_image(tmp_path):
    """A valid (empty) qcow2 and kernel files: enough to get past the image checks, never booted."""
    for f in ("vmlinuz", "initrd.img"):
        (tmp_path / f).write_bytes(b"x")
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(tmp_path / "disk.qcow2"), "16M"], check=True)
    return tmp_path


def _bin_dir(tmp_path, qemu_script: str | None):
    """A PATH folder with the real qemu-img and, if given, a stand-in qemu-system-x86_64 shell script."""
    import shutil

    b = tmp_path / "bin"
    b.mkdir()
    (b / "qemu-img").symlink_to(shutil.which("qemu-img"))
    if qemu_script is not None:
        (b / "qemu-system-x86_64").write_text("#!/bin/sh\n" + qemu_script)
        (b / "qemu-system-x86_64").chmod(0o755)
    return b


def test_qemu_missing_says_what_to_install(small_image, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_bin_dir(tmp_path, None)))
    with pytest.raises(EnvError, match="QEMU is not installed.*apt-get install qemu-system-x86"):
        VMEnv(str(small_image))


def test_no_kvm_and_no_tcg_is_named(small_image, tmp_path, monkeypatch):
    # a QEMU built without TCG lists only kvm; CUA_VM_ACCEL=tcg stands for a host without usable KVM
    fake = 'echo "Accelerators supported in QEMU binary:"; echo kvm\n'
    monkeypatch.setenv("PATH", str(_bin_dir(tmp_path, fake)))
    monkeypatch.setenv("CUA_VM_ACCEL", "tcg")
    with pytest.raises(EnvError, match=r"has no TCG \(its accelerators: kvm\).*host with KVM.*qemu-system-x86"):
        VMEnv(str(small_image))
    monkeypatch.delenv("CUA_VM_ACCEL")
    from cua.env.qemu import kvm_usable

    if not kvm_usable():  # no usable KVM on this host (here: /dev/kvm without vmx/svm): the plain message
        with pytest.raises(EnvError, match="no usable KVM.*has no TCG"):
            VMEnv(str(small_image))


FULL_DISK = """
import sys
from pathlib import Path
from cua.env.base import EnvError
from cua.env.qemu import make_overlay
from cua.env.vm import VMEnv
small, full = Path(sys.argv[1]), Path(sys.argv[2])
try:
    VMEnv(str(small))  # CUA_VM_DIR is the 8 MiB tmpfs: the up-front space check refuses
except EnvError as e:
    print("START:", e)
try:
    with open(full / "filler", "wb") as f:
        while True:
            f.write(b"\\0" * 65536)
except OSError:
    pass  # the tmpfs is full now
try:
    make_overlay(full / "run.qcow2", small / "disk.qcow2")  # a reset's overlay on the full disk
except EnvError as e:
    print("OVERLAY:", e)
"""


def test_disk_full_is_named_with_the_fix(small_image):
    # a real full filesystem: an 8 MiB tmpfs in a private mount namespace (gone when the process exits)
    script = 'mount -t tmpfs -o size=8m cua-full "$1" && CUA_VM_DIR="$1" exec "$2" -c "$3" "$4" "$1"'
    full = small_image / "full"
    full.mkdir()
    out = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(full),
                          sys.executable, FULL_DISK, str(small_image)], capture_output=True, text=True, timeout=120)
    assert "START: not enough space for the VM in" in out.stdout, out.stdout + out.stderr
    assert "MiB free" in out.stdout and "set CUA_VM_DIR to a larger tmpfs" in out.stdout
    assert "OVERLAY: cannot create the VM overlay" in out.stdout, out.stdout + out.stderr
    assert "No space left on device" in out.stdout and "the disk is full" in out.stdout and "CUA_VM_DIR" in out.stdout
