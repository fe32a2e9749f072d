"""Live view of an environment's X display in a browser: x11vnc + websockify + noVNC from Debian.

x11vnc serves the display on a loopback port behind a random VNC password (so other local users
cannot attach to it directly) and is view-only unless takeover is asked for; websockify serves a
private web folder (noVNC, our page, `status.json`) and the WebSocket bridge, both behind HTTP basic
auth whose password is the token (the guest server's kind: $CUA_TOKEN or a 0600 token file). The
page shows the desktop beside the agent's current step and outcome, which `update()` writes.

websockify routes by `?token=`: `vnc` goes to the VNC server, `done` to this process (the page's
"done" button, which must send the page's nonce). For a remote or VM env the VNC server is the
guest's: a loopback relay here opens the guest's WebSocket /vnc (vm/guest/vnc.py) with the guest's
bearer token for each connection, so that token stays in this process.
"""

from __future__ import annotations

import ctypes
import html
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from cua.env.base import EnvError
from recorder.probes import display_of
from vm.guest.auth import load_or_create_token
from vm.guest.vnc import PASSWORD_HEADER, new_password

NOVNC_DIR = Path("/usr/share/novnc")
_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>cua live view</title><style>
body{margin:0;display:flex;font:14px sans-serif;height:100vh} iframe{flex:1;border:0}
aside{width:300px;padding:12px;background:#f4f4f4;overflow:auto} .k{color:#666}
</style></head><body>
<iframe id="screen" src="vnc_lite.html?autoconnect=true&scale=true&path=websockify%3Ftoken%3Dvnc&password=__PASSWORD__"></iframe>
<aside><h3>cua: __TITLE__</h3><p class="k">mode: __MODE__</p>
<p><b>step</b> <span id="step">-</span></p><p><b>doing</b> <span id="doing">waiting</span></p>
<p><b>outcome</b> <span id="outcome">running</span></p><p id="note" class="k"></p>
<button id="done" __DONE_HIDDEN__ onclick="handBack()">done: hand back to the agent</button></aside>
<script>
function handBack(){const ws=new WebSocket((location.protocol==='https:'?'wss://':'ws://')+location.host+
'/websockify?token=done');ws.binaryType='arraybuffer';ws.onopen=()=>ws.send(new TextEncoder().encode('__NONCE__'));
const b=document.getElementById('done');b.disabled=true;b.textContent='handed back';}
async function poll(){try{const r=await fetch('status.json?'+Date.now(),{cache:'no-store'});const s=await r.json();
for(const k of ['step','doing','outcome','note']){document.getElementById(k).textContent=s[k]??''}}catch(e){}}
setInterval(poll,500);poll();
</script></body></html>"""


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the process that started us dies (even by SIGKILL)."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, what: str, log: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise EnvError(f"{what} exited with code {proc.returncode} before listening; "
                           f"its output: {log.read_text(errors='replace')[-800:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise EnvError(f"{what} did not listen on 127.0.0.1:{port} within {timeout:.0f}s")


class VncRelay:
    """A loopback TCP port for VNC clients; each connection to it becomes a WebSocket to `ws_url` (with `headers`).

    The live view uses it to reach a guest's /vnc with the guest's token; any VNC viewer can use it to reach a
    live view's `websockify?token=vnc` with the page's basic auth.
    """

    def __init__(self, ws_url: str, headers: dict[str, str], verify: Any = True):
        self.ws_url, self._headers = ws_url, headers
        self._ssl = (verify if isinstance(verify, ssl.SSLContext) else ssl.create_default_context()) \
            if ws_url.startswith("wss://") else None
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self.port = self._sock.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, name="cua-view-relay", daemon=True).start()

    def _connect(self) -> Any:
        from websockets.sync.client import connect  # the guest relay's only client library

        return connect(self.ws_url, additional_headers=self._headers, ssl=self._ssl, max_size=None,
                       open_timeout=60, compression=None)

    def check(self) -> None:
        """Open /vnc once and read the VNC server's greeting: a clear error now instead of a blank page later."""
        try:
            with self._connect() as ws:
                greeting = ws.recv(timeout=30)
        except Exception as e:  # noqa: BLE001 - handshake refusals, closes with a reason, timeouts
            raise EnvError(f"the live view at {self.ws_url} did not open: {e}. A guest needs a cua with the /vnc "
                           "route, x11vnc installed, an X display, and this client's token") from None
        if not bytes(greeting).startswith(b"RFB "):
            raise EnvError(f"{self.ws_url} answered {bytes(greeting)[:20]!r}, not a VNC greeting")

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), name="cua-view-relay-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            ws = self._connect()
        except Exception:  # noqa: BLE001 - the viewer sees a closed connection; check() named the cause at start
            conn.close()
            return

        def up() -> None:
            try:
                while data := conn.recv(65536):
                    ws.send(data)
            except OSError:
                pass
            finally:
                ws.close()

        with ws:
            threading.Thread(target=up, name="cua-view-relay-up", daemon=True).start()
            try:
                for msg in ws:
                    conn.sendall(msg if isinstance(msg, bytes) else msg.encode())
            except Exception:  # noqa: BLE001 - either side went away
                pass
            finally:
                conn.close()

    def close(self) -> None:
        self._closed = True
        self._sock.close()

    def __enter__(self) -> VncRelay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def guest_relay(url: str, token: str, password: str, takeover: bool, verify: Any = True) -> VncRelay:
    """A relay to the guest server at `url` (http[s]://): its WebSocket /vnc, opened with its bearer token."""
    ws_url = ("wss://" + url[len("https://"):]) if url.startswith("https://") else "ws://" + url[len("http://"):]
    return VncRelay(ws_url.rstrip("/") + "/vnc" + ("?takeover=1" if takeover else ""),
                    {"Authorization": f"Bearer {token}", PASSWORD_HEADER: password}, verify)


class LiveView:
    """A running live view of one env; `url` for people, `update()` for the agent, `close()` ends it.

    `done` is set when someone clicks the page's "done" button (shown with `done_button=True`).
    """

    def __init__(self, env: Any, token: str, *, takeover: bool = False, title: str = "",
                 host: str = "127.0.0.1", port: int | None = None, done_button: bool = False):
        for tool in ("x11vnc", "websockify"):
            if shutil.which(tool) is None:
                raise EnvError(f"{tool} is not installed; `apt-get install x11vnc websockify novnc` (make setup does)")
        if not (NOVNC_DIR / "vnc_lite.html").exists():
            raise EnvError("noVNC is not installed in /usr/share/novnc; `apt-get install novnc`")
        display, x_env = display_of(env)
        guest = getattr(env, "url", None) if hasattr(env, "_token") else None
        if not display and not guest:
            raise EnvError(f"{type(env).__name__} has no X display to show; the live view serves sandbox, desktop, "
                           "remote and VM envs")
        self.takeover = takeover
        self.host, self.port = host, port or _free_port()
        self.token = token
        self.done = threading.Event()
        self._nonce = secrets.token_urlsafe(16)
        self.dir = Path(tempfile.mkdtemp(prefix="cua-view-"))  # 0700: holds the VNC password
        self._procs: list[subprocess.Popen] = []
        self._relay: VncRelay | None = None
        self._done_sock: socket.socket | None = None
        try:
            password = new_password()
            if display:
                vnc_port = self._start_x11vnc(display, x_env, password)
            else:
                self._relay = guest_relay(guest, env._token, password, takeover, getattr(env, "_verify", True))
                self._relay.check()
                vnc_port = self._relay.port
            self._start_web(title or getattr(env, "name", "env"), password, vnc_port, done_button)
        except BaseException:
            self.close()
            raise

    def _start_x11vnc(self, display: str, x_env: dict[str, str], password: str) -> int:
        pw_file = self.dir / "vncpass"
        pw_file.write_text(password + "\n")
        pw_file.chmod(0o600)
        vnc_port = _free_port()
        xauth = x_env.get("XAUTHORITY") or os.environ.get("XAUTHORITY")
        argv = ["x11vnc", "-display", display, "-rfbport", str(vnc_port), "-localhost", "-passwdfile",
                str(pw_file), "-shared", "-forever", "-noxdamage", "-quiet"]
        if xauth:
            argv += ["-auth", xauth]
        if not self.takeover:  # view-only is enforced by x11vnc, not by the page: input from any client is dropped
            argv.append("-viewonly")
        self._spawn(argv, "x11vnc", vnc_port)
        return vnc_port

    def _spawn(self, argv: list[str], what: str, port: int) -> None:
        """Start `argv` (its output to a log in the private folder, never a pipe nobody reads) until it listens."""
        log = self.dir / f"{what}.log"
        with open(log, "wb") as out:
            self._procs.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
                                                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                                     "HOME": str(self.dir)}))
        _wait_port(port, self._procs[-1], what, log)

    def _start_web(self, title: str, password: str, vnc_port: int, done_button: bool) -> None:
        web = self.dir / "web"
        web.mkdir(mode=0o700)
        for name in ("app", "core", "vendor", "vnc_lite.html"):
            (web / name).symlink_to(NOVNC_DIR / name)
        page = (_PAGE.replace("__PASSWORD__", password).replace("__TITLE__", html.escape(title))
                .replace("__NONCE__", self._nonce).replace("__DONE_HIDDEN__", "" if done_button else "hidden")
                .replace("__MODE__", "takeover: your input reaches the app" if self.takeover else "view only"))
        (web / "index.html").write_text(page)
        self.update(step=0, doing="waiting for the agent", outcome="running")
        self._done_sock = socket.socket()
        self._done_sock.bind(("127.0.0.1", 0))
        self._done_sock.listen(4)
        threading.Thread(target=self._await_done, args=(self._done_sock,), name="cua-view-done", daemon=True).start()
        targets = self.dir / "targets"
        targets.write_text(f"vnc: 127.0.0.1:{vnc_port}\ndone: 127.0.0.1:{self._done_sock.getsockname()[1]}\n")
        ws = ["websockify", "--web", str(web), "--web-auth", "--auth-plugin",
              "websockify.auth_plugins.BasicHTTPAuth", "--auth-source", f"cua:{self.token}",
              "--token-plugin", "websockify.token_plugins.TokenFile", "--token-source", str(targets),
              f"{self.host}:{self.port}"]
        self._spawn(ws, "websockify", self.port)

    def _await_done(self, sock: socket.socket) -> None:
        """The page's "done" button: a connection relayed by websockify (so it passed the token) with the nonce."""
        while not self.done.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                got = b""
                try:
                    while len(got) < len(self._nonce) and (chunk := conn.recv(64)):
                        got += chunk
                except OSError:
                    continue
                if secrets.compare_digest(got, self._nonce.encode()):
                    self.done.set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/index.html"

    def update(self, **status: Any) -> None:
        """Show the agent's state on the page: step, doing, outcome, note (any JSON values)."""
        path = self.dir / "web" / "status.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(status))
        os.replace(tmp, path)

    def close(self) -> None:
        for p in reversed(self._procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
        self._procs.clear()
        if self._relay is not None:
            self._relay.close()
        if self._done_sock is not None:
            self._done_sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> LiveView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_live(env: Any, takeover: bool = False, token_file: Path | None = None, say: Any = print,
              port: int | None = None, done_button: bool = False) -> LiveView:
    """A live view of `env` with the guest's token ($CUA_TOKEN or the 0600 token file); prints its URL."""
    token, origin = load_or_create_token(token_file)
    view = LiveView(env, token, takeover=takeover, title=getattr(env, "name", ""), port=port,
                    done_button=done_button)
    say(f"live view: {view.url} (user cua, password: the token from {origin}; "
        f"{'takeover: your input reaches the app' if takeover else 'view only'})")
    return view


class NoView:
    """Stands in for a live view that was not asked for: `update()` does nothing, `done` never fires."""

    def __init__(self) -> None:
        self.done = threading.Event()

    def update(self, **status: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> NoView:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def live_or_not(env: Any, live: bool, say: Any = print, **options: Any) -> LiveView | NoView:
    """`open_live(env, ...)` when `live` (the commands' --live), else a `NoView`: callers update either alike."""
    return open_live(env, say=say, **options) if live else NoView()
