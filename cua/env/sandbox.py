"""A private X desktop for one app: Xvfb + openbox + a D-Bus session with the AT-SPI bus + the app.

Each sandbox gets its own display (Xvfb picks a free number via -displayfd, so parallel sandboxes
never race), its own session bus, and a fresh temporary HOME/XDG tree, so runs never share config.
Its processes start from an allow-listed environment (never the caller's keys; `pass_env` adds names),
and its Xvfb requires a fresh MIT-MAGIC-COOKIE (cua.env.xauth): a local client without it is refused.
Every process it starts carries CUA_SANDBOX_ID in its environment; close() kills their process
groups and then anything else still carrying that id (D-Bus-activated services), and removes the
temporary tree.

Example:
    with Sandbox("mousepad") as sb:
        subprocess.run(["xdotool", "getactivewindow", "getwindowname"], env=sb.env)
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import weakref
from pathlib import Path

from cua.env import xauth
from cua.env.base import EnvError

APT_OF = {"Xvfb": "xvfb", "openbox": "openbox", "dbus-daemon": "dbus",
          "/usr/libexec/at-spi-bus-launcher": "at-spi2-core"}
AT_SPI_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
GTK_SETTINGS = "[Settings]\ngtk-cursor-blink=false\ngtk-enable-animations=false\ngtk-enable-event-sounds=false\n"
OPENBOX_RC = """<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <focus><focusNew>yes</focusNew></focus>
  <placement><policy>Smart</policy></placement>
  <desktops><number>1</number></desktops>
  <applications>
    <application class="*" type="normal"><maximized>%s</maximized><focus>yes</focus></application>
  </applications>
</openbox_config>
"""


def default_timeout() -> float:
    """Seconds to wait for the desktop and the app window (CUA_SANDBOX_TIMEOUT, default 45)."""
    try:
        return float(os.environ.get("CUA_SANDBOX_TIMEOUT", "45"))
    except ValueError:
        return 45.0


def _need(binary: str) -> str:
    path = binary if binary.startswith("/") else shutil.which(binary)
    if not path or not os.access(path, os.X_OK):
        raise EnvError(f"{binary} is not installed; install it with `apt-get install {APT_OF.get(binary, binary)}` "
                       "(or run `make setup`)")
    return path


def _read_line(fd: int, timeout: float, what: str) -> str:
    """Read one line a child writes to a pipe (display number, bus address), bounded."""
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    buf, deadline = b"", time.monotonic() + timeout
    try:
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise EnvError(f"{what} did not start within {timeout:.0f}s")
            chunk = os.read(fd, 4096)
            if not chunk:
                raise EnvError(f"{what} exited before it was ready")
            buf += chunk
    finally:
        sel.close()
        os.close(fd)
    return buf.split(b"\n", 1)[0].decode().strip()


def _kill_group(proc: subprocess.Popen | None, grace: float = 2.0, term: bool = True) -> None:
    """Stop a process group: SIGTERM, then SIGKILL after `grace` seconds (`term=False`: SIGKILL at once)."""
    if proc is None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL) if term else (signal.SIGKILL,):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    # the group may outlive its leader (forked children)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def pids_with_marker(marker: str) -> list[int]:
    """Pids of live processes whose environment holds CUA_SANDBOX_ID=marker."""
    needle = f"CUA_SANDBOX_ID={marker}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def _kill_marked(marker: str) -> None:
    for _ in range(3):
        pids = pids_with_marker(marker)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") and _alive(p) for p in pids):
            time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# Runs in a separate tiny process: when its stdin closes (our process exited, even by SIGKILL),
# it kills whatever still carries the sandbox's marker and removes the temporary tree.
GUARD = """
import os, shutil, signal, sys
if os.fork():  # not the owner's child: Ray kills a dying worker's children, which would skip the clean-up
    os._exit(0)
sys.stdin.buffer.read()
needle = ("CUA_SANDBOX_ID=" + sys.argv[1]).encode()
for _ in range(3):
    for pid in [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
        try:
            with open("/proc/%s/environ" % pid, "rb") as fh:
                if needle in fh.read().split(b"\\0"):
                    os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
shutil.rmtree(sys.argv[2], ignore_errors=True)
"""


def _start_guard(marker: str, root: str) -> subprocess.Popen | None:
    """A watchdog that cleans up after us if this process dies without close()."""
    env = xauth.allowed_env()
    try:
        return subprocess.Popen([sys.executable, "-c", GUARD, marker, root], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                start_new_session=True)
    except OSError:
        return None


def _cleanup(procs: list, marker: str, root: str, guard: subprocess.Popen | None) -> None:
    for p in reversed(procs):
        _kill_group(p)
    _kill_marked(marker)
    shutil.rmtree(root, ignore_errors=True)
    if guard is not None:
        with contextlib.suppress(OSError):
            guard.stdin.close()  # nothing left for it to do; it exits at once
        with contextlib.suppress(subprocess.TimeoutExpired):
            guard.wait(timeout=5)


class Sandbox:
    """Xvfb + openbox + D-Bus/AT-SPI + one app on a fresh HOME; `display` and `env` for other processes."""

    def __init__(self, app_cmd: str | list[str], size: tuple[int, int] = (1280, 800), depth: int = 24,
                 timeout: float | None = None, maximize: bool = True, pass_env: tuple[str, ...] | list[str] = ()
                 ) -> None:
        self.argv = shlex.split(app_cmd) if isinstance(app_cmd, str) else [str(a) for a in app_cmd]
        if not self.argv:
            raise EnvError("the sandbox needs an app command, e.g. Sandbox('mousepad')")
        if not (isinstance(size, (tuple, list)) and len(size) == 2 and all(isinstance(v, int) and 64 <= v <= 8192 for v in size)):
            raise EnvError(f"sandbox size {size!r} must be (width, height) in pixels, each 64..8192, e.g. (1280, 800)")
        self.size = (int(size[0]), int(size[1]))
        self.depth, self.maximize = depth, maximize
        self.pass_env = tuple(pass_env or ())
        self.timeout = default_timeout() if timeout is None else timeout
        self.app_name = os.path.basename(self.argv[0])
        for b in ("Xvfb", "openbox", "dbus-daemon", AT_SPI_LAUNCHER):
            _need(b)
        app_bin = shutil.which(self.argv[0])
        if not app_bin:
            raise EnvError(f"app {self.argv[0]!r} not found on PATH; install it (e.g. `apt-get install "
                           f"{self.app_name}`) or give a full path: sandbox:/path/to/app")
        self.marker = uuid.uuid4().hex
        self.root = tempfile.mkdtemp(prefix="cua-sandbox-")
        self._procs: list[subprocess.Popen] = []
        self.app: subprocess.Popen | None = None
        self.display = ""
        self.env: dict[str, str] = {}
        self._x = None
        self._guard = _start_guard(self.marker, self.root)
        self._finalizer = weakref.finalize(self, _cleanup, self._procs, self.marker, self.root, self._guard)
        try:
            self._start_desktop()
            self._start_app()
        except BaseException:
            self.close()
            raise

    # -- start-up -------------------------------------------------------------------------
    def _spawn(self, argv: list[str], env: dict[str, str], pass_fds: tuple[int, ...] = (), log: str = "") -> subprocess.Popen:
        with open(os.path.join(self.root, f"{log or os.path.basename(argv[0])}.log"), "ab") as out:
            p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 pass_fds=pass_fds, start_new_session=True, cwd=self.root)
        self._procs.append(p)
        return p

    def _base_env(self) -> dict[str, str]:
        env = xauth.allowed_env(self.pass_env)
        root = Path(self.root)
        env.update({
            "CUA_SANDBOX_ID": self.marker, "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "home/.config"), "XDG_DATA_HOME": str(root / "home/.local/share"),
            "XDG_CACHE_HOME": str(root / "home/.cache"), "XDG_STATE_HOME": str(root / "home/.local/state"),
            "XDG_RUNTIME_DIR": str(root / "run"), "GTK_A11Y": "atspi", "GNOME_ACCESSIBILITY": "1",
            "QT_ACCESSIBILITY": "1", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "GSETTINGS_BACKEND": "memory",
        })
        return env

    def _fresh_home(self) -> None:
        home = Path(self.root) / "home"
        shutil.rmtree(home, ignore_errors=True)
        for sub in (".config/gtk-3.0", ".config/openbox", ".local/share", ".local/state", ".cache"):
            (home / sub).mkdir(parents=True, exist_ok=True)
        (home / ".config/gtk-3.0/settings.ini").write_text(GTK_SETTINGS)
        (home / ".config/openbox/rc.xml").write_text(OPENBOX_RC % ("yes" if self.maximize else "no"))
        run = Path(self.root) / "run"
        run.mkdir(mode=0o700, exist_ok=True)

    def _start_desktop(self) -> None:
        self._fresh_home()
        env = self._base_env()
        cookie = xauth.new_cookie()
        server_auth = Path(self.root) / "xauth-server"
        xauth.write_server_file(server_auth, cookie)
        r, w = os.pipe()
        try:
            self._spawn(["Xvfb", "-displayfd", str(w), "-auth", str(server_auth), "-screen", "0",
                         f"{self.size[0]}x{self.size[1]}x{self.depth}", "-nolisten", "tcp", "+extension", "RECORD",
                         "-noreset"], env, pass_fds=(w,), log="xvfb")
        finally:
            os.close(w)
        num = _read_line(r, self.timeout, "Xvfb")
        if not num.isdigit():
            raise EnvError(f"Xvfb reported no display number ({num!r}); see {self.root}/xvfb.log")
        self.display = f":{num}"
        env["DISPLAY"] = self.display
        env["XAUTHORITY"] = str(Path(self.root) / "Xauthority")
        xauth.write_client_file(Path(env["XAUTHORITY"]), self.display, cookie)
        xauth.share_with_this_process(self.display, cookie)  # in-process clients: Xlib, mss, pynput
        r, w = os.pipe()
        try:
            self._spawn(["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--print-address={w}"], env,
                        pass_fds=(w,), log="dbus")
        finally:
            os.close(w)
        env["DBUS_SESSION_BUS_ADDRESS"] = _read_line(r, self.timeout, "dbus-daemon (session bus)")
        launcher = self._spawn([AT_SPI_LAUNCHER, "--launch-immediately"], env, log="at-spi")
        self._spawn(["openbox", "--config-file", str(Path(env["XDG_CONFIG_HOME"]) / "openbox/rc.xml")], env,
                    log="openbox")
        from Xlib import display as xdisplay

        self._x = xdisplay.Display(self.display)
        deadline = time.monotonic() + self.timeout
        while self._root_prop("_NET_SUPPORTING_WM_CHECK") is None:
            if time.monotonic() > deadline:
                raise EnvError(f"openbox did not start on {self.display} within {self.timeout:.0f}s; "
                               f"see {self.root}/openbox.log")
            self._check_alive()
            time.sleep(0.02)
        # the AT-SPI bus is optional (apps still run without it): wait while its launcher lives
        deadline = time.monotonic() + min(self.timeout, 15.0)
        while self._root_prop("AT_SPI_BUS") is None and launcher.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        bus = self._root_prop("AT_SPI_BUS")
        if bus:
            env["AT_SPI_BUS_ADDRESS"] = bus
            self._enable_a11y(env, deadline)
        self.env = env

    def _enable_a11y(self, env: dict[str, str], deadline: float) -> None:
        """Wait until org.a11y.Bus answers, then set org.a11y.Status.IsEnabled: a Qt app started before
        that stays without a tree for its whole life."""
        dbus_send = shutil.which("dbus-send")
        if not dbus_send:
            return
        base = [dbus_send, "--session", "--print-reply", "--dest=org.a11y.Bus", "/org/a11y/bus"]
        enable = base + ["org.freedesktop.DBus.Properties.Set", "string:org.a11y.Status", "string:IsEnabled",
                         "variant:boolean:true"]
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                if subprocess.run(enable, env=env, capture_output=True, timeout=2, check=False).returncode == 0:
                    return
            time.sleep(0.05)

    def _root_prop(self, name: str) -> str | None:
        atom = self._x.intern_atom(name)
        prop = self._x.screen().root.get_full_property(atom, 0)
        if prop is None or not len(prop.value):
            return None
        val = prop.value
        return val.decode(errors="replace") if isinstance(val, bytes) else str(list(val))

    def _check_alive(self) -> None:
        for p in self._procs[:2]:
            if p.poll() is not None:
                raise EnvError(f"{p.args[0]} exited with code {p.returncode} while starting the sandbox; "
                               f"see the logs in {self.root}")

    def _client_windows(self) -> list[int]:
        from Xlib import X

        atom = self._x.intern_atom("_NET_CLIENT_LIST")
        prop = self._x.screen().root.get_full_property(atom, X.AnyPropertyType)
        return list(prop.value) if prop is not None else []

    def _start_app(self) -> None:
        before = set(self._client_windows())
        self.app = self._spawn(self.argv, self.env, log="app")
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            from Xlib import X

            for wid in self._client_windows():
                if wid in before:
                    continue
                try:
                    if self._x.create_resource_object("window", wid).get_attributes().map_state == X.IsViewable:
                        self._park_pointer()
                        return
                except Exception:  # noqa: BLE001, S112 - the window vanished between list and query
                    continue
            code = self.app.poll()
            if code is not None and code != 0:
                raise EnvError(f"app {shlex.join(self.argv)!r} exited with code {code} before showing a window: "
                               f"{self._log_tail('app')}")
            time.sleep(0.02)
        raise EnvError(f"app {shlex.join(self.argv)!r} did not map a window within {self.timeout:.0f}s on "
                       f"{self.display}; is it a GUI app? (raise CUA_SANDBOX_TIMEOUT if the machine is slow)")

    def _park_pointer(self) -> None:
        """Rest the pointer in the screen's bottom-right corner, away from the app's controls: a pointer left
        where the last run clicked (or the screen's centre, at the first start) hovers over a control of
        the new window, whose tooltip then shows up in some looks at the start state and not in others."""
        self._x.screen().root.warp_pointer(self.size[0] - 1, self.size[1] - 1)
        self._x.sync()

    def _log_tail(self, name: str, n: int = 400) -> str:
        try:
            return Path(self.root, f"{name}.log").read_text(errors="replace")[-n:].strip() or "(no output)"
        except OSError:
            return "(no log)"

    # -- life cycle -------------------------------------------------------------------------
    @property
    def home(self) -> Path:
        """The app's fresh HOME (wiped and recreated by reset())."""
        return Path(self.root) / "home"

    def alive(self) -> bool:
        """True while Xvfb runs."""
        return bool(self._procs) and self._procs[0].poll() is None

    def reset(self) -> None:
        """Kill the app, give it a fresh HOME, start it again and wait for its window."""
        if not self.alive():
            raise EnvError(f"the sandbox display {self.display or '(none)'} is gone; create a new sandbox")
        if self.app is not None:  # killed outright: whatever it would save on the way out is wiped below
            _kill_group(self.app, term=False)
            if self.app in self._procs:
                self._procs.remove(self.app)
        self._wait_no_clients()
        home = Path(self.root) / "home"
        for child in home.iterdir():
            if child.name != ".config":
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink(missing_ok=True)
        for child in (home / ".config").iterdir():
            if child.name not in ("gtk-3.0", "openbox"):
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink(missing_ok=True)
        self._fresh_home_dirs(home)
        self._start_app()

    @staticmethod
    def _fresh_home_dirs(home: Path) -> None:
        for sub in (".local/share", ".local/state", ".cache"):
            (home / sub).mkdir(parents=True, exist_ok=True)

    def _wait_no_clients(self, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while self._client_windows() and time.monotonic() < deadline:
            time.sleep(0.02)

    def close(self) -> None:
        """Kill everything this sandbox started and remove its temporary tree (idempotent)."""
        if self._x is not None:
            with contextlib.suppress(Exception):
                self._x.close()
            self._x = None
        self._finalizer()

    def pids(self) -> list[int]:
        """Live processes started by this sandbox (for tests and diagnostics)."""
        return pids_with_marker(self.marker)

    def __enter__(self) -> Sandbox:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Sandbox({shlex.join(self.argv)!r}, display={self.display!r})"
