"""Helpers for guest tests: a network namespace joined by a veth pair, and a `cua serve` child process."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
CUA = str(Path(sys.executable).with_name("cua"))
TOKEN = "guest-live-token-0123456789abcdef"
# 198.18.0.0/15 is reserved for benchmarking (RFC 2544): never routed, so it cannot collide with a real network.
NET_PREFIX = "198.18"


def desktop_env_spec(app: str = "mousepad") -> str:
    """The real sandbox desktop when it is available; a real headless Chromium page otherwise."""
    if importlib.util.find_spec("cua.env.desktop") is not None:
        return f"sandbox:{app}"
    return "browser:data:text/html,<title>guest</title><button>Hello</button><input aria-label=name>"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@contextlib.contextmanager
def netns_pair() -> Iterator[tuple[str, str, str] | None]:
    """A namespace with a veth pair: yields (namespace, host address, guest address), or None if refused."""
    tag = f"{os.getpid() % 100000}{int(time.time() * 1000) % 100}"
    ns, host_if, guest_if = f"cuag{tag}", f"cg{tag}h", f"cg{tag}g"
    third = os.getpid() % 250 + 1
    host_ip, guest_ip = f"{NET_PREFIX}.{third}.1", f"{NET_PREFIX}.{third}.2"
    made: list[str] = []
    try:
        _ip("netns", "add", ns)
        made.append("ns")
        _ip("link", "add", host_if, "type", "veth", "peer", "name", guest_if)
        made.append("veth")
        _ip("link", "set", guest_if, "netns", ns)
        _ip("addr", "add", f"{host_ip}/30", "dev", host_if)
        _ip("link", "set", host_if, "up")
        _ip("-n", ns, "addr", "add", f"{guest_ip}/30", "dev", guest_if)
        _ip("-n", ns, "link", "set", guest_if, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
    except (OSError, subprocess.SubprocessError):
        _cleanup_ns(ns, host_if, made)
        yield None
        return
    try:
        yield ns, host_ip, guest_ip
    finally:
        _cleanup_ns(ns, host_if, made)


def _cleanup_ns(ns: str, host_if: str, made: list[str]) -> None:
    if "veth" in made:
        subprocess.run(["ip", "link", "del", host_if], check=False, capture_output=True, timeout=10)
    if "ns" in made:
        subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True, timeout=10)


def private_x11_dir(cmd: list[str]) -> list[str]:
    """Run `cmd` with a private /tmp/.X11-unix (own mount namespace).

    Abstract X sockets are per network namespace but /tmp/.X11-unix is shared: an Xvfb in a fresh namespace
    would pick display :0 and replace the filesystem socket of another desktop's :0. A private tmpfs there keeps
    the guest's displays invisible to (and safe from) the rest of the machine, as in a real VM.
    """
    script = 'mount -t tmpfs -o mode=1777,size=1m cua-x11 /tmp/.X11-unix && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *cmd]


@contextlib.contextmanager
def guest_process(env_spec: str, host: str, port: int, root: Path, netns: str | None = None,
                  extra: list[str] | None = None, token: str = TOKEN, wait_s: float = 120.0) -> Iterator[str]:
    """Run `cua serve` (in `netns` if given) until it answers /health; yields its URL; stops it after."""
    cmd = [CUA, "serve", "--host", host, "--port", str(port), "--env", env_spec, "--root", str(root), *(extra or [])]
    if netns:
        cmd = ["ip", "netns", "exec", netns, *private_x11_dir(cmd)]
    env = {**os.environ, "CUA_TOKEN": token}
    log = root.parent / f"guest-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://{host}:{port}"
    try:
        deadline = time.monotonic() + wait_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"cua serve exited {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                r = httpx.get(url + "/health", headers={"Authorization": f"Bearer {token}"}, timeout=2,
                              trust_env=False)
                if r.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"cua serve did not answer within {wait_s}s: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield url
    finally:
        stop_process(proc)


def stop_process(proc: subprocess.Popen, grace: float = 20.0) -> None:
    """SIGTERM (the guest closes its environment), then SIGKILL the whole process group if it lingers."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
