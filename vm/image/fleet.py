"""VMs that outlive one command: `cua vm start|stop|list`.

`start` launches a detached supervisor (`python -m vm.image.fleet IMAGE NAME`) that boots the VM with
cua.env.vm.VMEnv, writes its state (URL, pid, a 0600 token file, the ssh command) under
~/.cache/cua/vms/, and closes the VM on SIGTERM; `stop` signals it, `list` reads the states (dropping
those whose supervisor died), `ssh_command` gives the ssh argument list into one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from cua.env.base import EnvError
from cua.env.vm import VMEnv

STATE = Path(os.environ.get("CUA_VM_STATE", "~/.cache/cua/vms")).expanduser()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def list_vms() -> list[dict]:
    out = []
    for f in sorted(STATE.glob("*.json")):
        try:
            st = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if _alive(int(st.get("pid", 0))):
            out.append(st)
        else:
            f.unlink(missing_ok=True)
            (STATE / f"{f.stem}.token").unlink(missing_ok=True)
    return out


def start(image: str, name: str, timeout: float = 1200.0, memory_mb: int = 1024, cpus: int = 1) -> dict:
    """Start a supervised VM named `name`; returns its state once the guest answers."""
    STATE.mkdir(parents=True, exist_ok=True, mode=0o700)
    if any(v["name"] == name for v in list_vms()):
        raise EnvError(f"a VM named {name!r} is already running; `cua vm stop {name}` first or pick another --name")
    log = STATE / f"{name}.log"
    with log.open("w") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "vm.image.fleet", image, name, str(memory_mb), str(cpus)],
                                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout
    state = STATE / f"{name}.json"
    while not state.exists():
        if proc.poll() is not None:
            raise EnvError(f"the VM supervisor exited ({proc.returncode}): {log.read_text()[-2000:]}")
        if time.monotonic() > deadline:
            proc.terminate()
            raise EnvError(f"the VM {name!r} was not ready within {timeout:.0f}s; see {log}")
        time.sleep(0.5)
    return json.loads(state.read_text())


def stop(name: str, timeout: float = 30.0) -> bool:
    for st in list_vms():
        if st["name"] == name:
            os.kill(int(st["pid"]), signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while _alive(int(st["pid"])) and time.monotonic() < deadline:
                time.sleep(0.2)
            return True
    return False


def ssh_command(name: str, command: list[str] | None = None) -> list[str]:
    """The ssh argument list into the running VM `name` (as root, its own key, its pinned host key)."""
    for st in list_vms():
        if st["name"] == name:
            if not st.get("ssh"):
                raise EnvError(f"VM {name!r} has no ssh (ssh-keygen was missing when it started)")
            return [*st["ssh"], *(command or [])]
    raise EnvError(f"no running VM named {name!r}; `cua vm list` shows them, `cua vm start` starts one")


def _supervise(image: str, name: str, memory_mb: int, cpus: int) -> None:
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    env = VMEnv(image, memory_mb=memory_mb, cpus=cpus)
    token_file = STATE / f"{name}.token"
    try:
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(env._token + "\n")
        state = {"name": name, "image": str(env.image), "url": env.url, "pid": os.getpid(), "kvm": env.kvm,
                 "token_file": str(token_file), "env": f"remote:{env.url}", "started": time.time(),
                 "memory_mb": memory_mb, "cpus": cpus, "ssh": env.ssh_command() if env.ssh_port else None,
                 "qemu_pid": env.proc.pid if env.proc else None}
        tmp = STATE / f".{name}.json"
        tmp.write_text(json.dumps(state))
        tmp.rename(STATE / f"{name}.json")
        done.wait()
    finally:
        env.close()
        (STATE / f"{name}.json").unlink(missing_ok=True)
        token_file.unlink(missing_ok=True)


if __name__ == "__main__":
    _supervise(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
