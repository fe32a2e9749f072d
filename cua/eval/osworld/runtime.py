"""What OSWorld's VM server does (execute, launch, files, windows, a11y), done on a cua sandbox desktop.

OSWorld's tasks assume an Ubuntu VM with user `user`, Google Chrome and GNOME. Here they run in a
sandbox (fresh HOME, private X display and D-Bus), with these mappings (docs/osworld.md lists them):
- `/home/user` -> the sandbox's HOME, in every path and command string of the task;
- `google-chrome` -> Debian's `/usr/bin/chromium`, its profile at `~/.config/google-chrome` (so the
  task's Chrome paths hold) and its remote-debugging port -> a free port of this episode;
- `python`/`python3` -> a Python that has pyautogui and reaches the sandbox display;
- `vlc` -> VLC with its HTTP interface (password `password`) on a free port of this episode;
- `pkill` -> only processes of this sandbox; `socat` (OSWorld's port forward) -> not needed, a no-op;
- `unix:path=/run/user/1000/bus` -> the sandbox's session bus.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

OSWORLD_HOME = "/home/user"
OSWORLD_BUS = "unix:path=/run/user/1000/bus"
APP_BINARIES = {"google-chrome": "chromium", "google-chrome-stable": "chromium", "/usr/bin/thunderbird": "thunderbird"}

LIBREOFFICE_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" oor:op="fuse">\
<value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value>\
</prop></item>
<item oor:path="/org.openoffice.Setup/Product"><prop oor:name="ooSetupLastVersion" oor:op="fuse"><value>99.9</value>\
</prop></item>
</oor:items>
"""

_PKILL = '''
import os, re, signal, sys
args = sys.argv[1:]
full = "-f" in args
sig = signal.SIGTERM
rest = []
for a in args:
    if a.startswith("-") and a[1:].isdigit():
        sig = int(a[1:])
    elif a.startswith("-") and a[1:].upper() in ("KILL", "9"):
        sig = signal.SIGKILL
    elif not a.startswith("-"):
        rest.append(a)
if not rest:
    sys.exit(2)
pat = re.compile(rest[0])
marker = ("CUA_SANDBOX_ID=" + os.environ.get("CUA_SANDBOX_ID", "")).encode()
hit = 1
for pid in filter(str.isdigit, os.listdir("/proc")):
    if int(pid) in (os.getpid(), os.getppid()):
        continue
    try:
        env = open(f"/proc/{pid}/environ", "rb").read().split(b"\\0")
        comm = open(f"/proc/{pid}/comm").read().strip()
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ").decode(errors="replace")
    except OSError:
        continue
    if marker in env and pat.search(cmd if full else comm):
        try:
            os.kill(int(pid), sig)
            hit = 0
        except OSError:
            pass
sys.exit(hit)
'''


class NotASandbox(RuntimeError):
    """The environment cannot run OSWorld set-up (not a sandbox), or a launched app is not installed."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sandbox_of(env: Any) -> Any:
    sb = getattr(env, "sandbox", None)
    if sb is None or not hasattr(sb, "home"):
        raise NotASandbox("OSWorld tasks run on a sandbox desktop (their set-up runs commands and writes "
                            "/home/user): use --env sandbox:... or leave --env out")
    return sb


class Runtime:
    """One episode's OSWorld controller: owns the processes it launched and a private work directory."""

    def __init__(self, env: Any, assets: Path | None = None):
        self.env = env
        self.sandbox = sandbox_of(env)
        self.home = Path(self.sandbox.home)
        self.assets = assets
        self.work = Path(tempfile.mkdtemp(prefix="cua-osworld-"))
        self.cache_dir = self.work / "cache"
        self.cache_dir.mkdir()
        self.chrome_port = free_port()
        self.vlc_port = free_port()
        self.launched: list[subprocess.Popen] = []
        self._bin = self.work / "bin"
        self._write_shims()
        base = dict(self.sandbox.env)
        # LibreOffice draws with GTK 3 as on OSWorld's GNOME VM (its own X11 look has no accessibility tree)
        self.proc_env = {**base, "PATH": f"{self._bin}:{base.get('PATH', os.defpath)}", "USER": "user",
                         "SAL_USE_VCLPLUGIN": "gtk3"}
        self.bus = base.get("DBUS_SESSION_BUS_ADDRESS", "")
        self._seed_profiles()

    def _seed_profiles(self) -> None:
        """App profiles as OSWorld's VM snapshot has them (apps used before): LibreOffice without its
        first-start Tip of the Day and what's-new bar, which would take the keyboard from the task."""
        lo = self.home / ".config/libreoffice/4/user/registrymodifications.xcu"
        if shutil.which("libreoffice") and not lo.exists():
            lo.parent.mkdir(parents=True, exist_ok=True)
            lo.write_text(LIBREOFFICE_PROFILE)

    # -- mappings ------------------------------------------------------------------------------
    def _write_shims(self) -> None:
        self._bin.mkdir()
        chromium = shutil.which("chromium") or "/usr/bin/chromium"
        root_flag = " --no-sandbox" if os.geteuid() == 0 else ""  # Chromium refuses root without it
        chrome = ("#!/bin/sh\nfor a do\n  shift\n  case \"$a\" in --remote-debugging-port=*) ;; "
                  "*) set -- \"$@\" \"$a\" ;; esac\ndone\n"
                  f"exec {shlex.quote(chromium)} --remote-debugging-port={self.chrome_port}{root_flag} "
                  '--user-data-dir="$HOME/.config/google-chrome" --no-first-run --no-default-browser-check '
                  '--password-store=basic --disable-dev-shm-usage "$@"\n')
        shims = {"google-chrome": chrome, "google-chrome-stable": chrome,
                 "python": f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n',
                 "python3": f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n',
                 "socat": "#!/bin/sh\nexit 0\n",
                 "pkill": f"#!{sys.executable}\n{_PKILL}"}
        vlc = shutil.which("vlc")
        if vlc:  # VLC's HTTP interface, which OSWorld's VLC getters read, on this episode's port
            shims["vlc"] = (f"#!/bin/sh\nexec {shlex.quote(vlc)} --extraintf=http --http-host=127.0.0.1 "
                            f'--http-port={self.vlc_port} --http-password=password "$@"\n')
        for name, text in shims.items():
            p = self._bin / name
            p.write_text(text)
            p.chmod(0o700)

    def map(self, value: Any) -> Any:
        """OSWorld's VM paths and names -> this sandbox's, recursively through strings, lists and dicts."""
        if isinstance(value, str):
            out = value.replace(OSWORLD_HOME, str(self.home))
            return out.replace(OSWORLD_BUS, self.bus) if self.bus else out
        if isinstance(value, list):
            return [self.map(v) for v in value]
        if isinstance(value, dict):
            return {k: self.map(v) for k, v in value.items()}
        return value

    def path(self, p: str) -> Path:
        p = self.map(p)
        if p.startswith("~"):
            p = str(self.home) + p[1:]
        return Path(p) if os.path.isabs(p) else self.home / p

    def argv(self, command: str | list[str], shell: bool = False) -> list[str]:
        command = self.map(command)
        if shell:
            return ["sh", "-c", command if isinstance(command, str) else " ".join(command)]
        argv = shlex.split(command) if isinstance(command, str) else [str(c) for c in command]
        if argv and argv[0] in APP_BINARIES and not argv[0].startswith("google-chrome"):
            argv[0] = shutil.which(APP_BINARIES[argv[0]]) or argv[0]
        return argv

    # -- processes -----------------------------------------------------------------------------
    def run(self, command: str | list[str], shell: bool = False, timeout: float = 120) -> dict[str, Any]:
        """OSWorld's /execute: {output, error, returncode}; a command that cannot start is returncode -1."""
        argv = self.argv(command, shell)
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=self.proc_env,
                               cwd=self.home, stdin=subprocess.DEVNULL, start_new_session=True)
        except FileNotFoundError as e:
            return {"status": "error", "output": "", "error": f"{e.filename}: command not found", "returncode": 127}
        except subprocess.TimeoutExpired as e:
            return {"status": "error", "output": (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes)
                    else (e.stdout or ""), "error": f"timed out after {timeout:.0f}s", "returncode": -1}
        return {"status": "success", "output": r.stdout, "error": r.stderr, "returncode": r.returncode}

    def launch(self, command: str | list[str], shell: bool = False) -> subprocess.Popen:
        argv = self.argv(command, shell)
        try:
            p = subprocess.Popen(argv, env=self.proc_env, cwd=self.home, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        except FileNotFoundError:
            raise NotASandbox(f"cannot launch {argv[0]!r}: not installed here") from None
        self.launched.append(p)
        return p

    # -- files ---------------------------------------------------------------------------------
    def read_file(self, path: str) -> bytes | None:
        try:
            return self.path(path).read_bytes()
        except OSError:
            return None

    def write_file(self, path: str, data: bytes) -> Path:
        p = self.path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        return p

    # -- desktop -------------------------------------------------------------------------------
    @property
    def screen_size(self) -> tuple[int, int]:
        return tuple(getattr(self.sandbox, "size", (1920, 1080)))  # type: ignore[return-value]

    def xdotool(self, *args: str) -> str:
        r = self.run(["xdotool", *args], timeout=10)
        return r["output"]

    def close_windows(self) -> None:
        """Disconnect every visible client but the desktop (apps the agent started too), so the next
        episode starts from the empty desktop OSWorld's snapshot revert gives."""
        desktop = set(self.xdotool("search", "--classname", "cua-desktop").split())
        for wid in self.xdotool("search", "--onlyvisible", "--name", ".").split():
            if wid not in desktop:
                self.xdotool("windowkill", wid)

    def close(self) -> None:
        try:
            self.close_windows()
        except Exception:  # noqa: BLE001 - the display may be gone already; the sandbox reaps the rest
            pass
        for p in self.launched:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.launched.clear()
        shutil.rmtree(self.work, ignore_errors=True)
