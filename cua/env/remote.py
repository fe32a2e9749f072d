"""RemoteEnv: the Environment protocol over HTTP to a `cua serve` guest (a VM or container desktop)."""

from __future__ import annotations

import os
import ssl
import time
from pathlib import Path
from typing import Any

import httpx

from cua.actions import Action
from cua.env.base import ActionResult, EnvBase, EnvError, resolve_point
from cua.perception.elements import Observation

RETRY_STATUSES = {429, 502, 503, 504}
MAX_RETRY_AFTER = 10.0


def find_token(token: str | None = None, token_file: Path | str | None = None) -> str:
    """The client token: the argument, else $CUA_TOKEN, else the token file (default ~/.config/cua/token)."""
    if token:
        return token.strip()
    if os.environ.get("CUA_TOKEN"):
        return os.environ["CUA_TOKEN"].strip()
    path = Path(token_file or os.environ.get("CUA_TOKEN_FILE") or "~/.config/cua/token").expanduser()
    try:
        text = path.read_text().strip()
    except OSError:
        raise EnvError(
            f"no token for the guest: set CUA_TOKEN, or copy the guest's token file to {path} "
            "(on the guest: cat ~/.config/cua/token)"
        ) from None
    if not text:
        raise EnvError(f"token file {path} is empty; copy the guest's token into it or set CUA_TOKEN")
    return text


def _verify(ca: Path | str | None) -> ssl.SSLContext | bool:
    """Certificate verification for https:// guests: the system store, or only `ca` (a self-signed cert)."""
    if not ca:
        return True
    path = Path(ca).expanduser()
    if not path.is_file():
        raise EnvError(f"CA file {path} does not exist; give the guest's certificate (PEM): --ca guest-cert.pem")
    try:
        return ssl.create_default_context(cafile=str(path))
    except (ssl.SSLError, ValueError) as e:
        raise EnvError(f"CA file {path} is not a PEM certificate ({e}); give the cert.pem the guest serves "
                       "(`cua serve --tls-cert cert.pem`)") from None


def _tls_problem(e: BaseException | None, url: str) -> str | None:
    """What a TLS failure means and what to do about it, or None if `e` is no TLS failure."""
    while e is not None:
        if isinstance(e, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(e):
            code = getattr(e, "verify_code", None)
            why = getattr(e, "verify_message", None) or str(e)
            if code == 62 or "mismatch" in why.lower():  # X509_V_ERR_HOSTNAME_MISMATCH / IP_ADDRESS_MISMATCH
                return (f"the TLS certificate of guest {url} names another host ({why}); use the host or IP it "
                        "was made for, or make one with subjectAltName=IP:ADDR (docs/security.md)")
            if code == 10 or "expired" in why.lower():
                return f"the TLS certificate of guest {url} has expired; make a new one on the guest (docs/security.md)"
            return (f"the TLS certificate of guest {url} is not trusted ({why}); for a self-signed one pass the "
                    "guest's certificate: --ca cert.pem (or CUA_CA=cert.pem, or RemoteEnv(..., ca='cert.pem'))")
        if isinstance(e, ssl.SSLError) and ("WRONG_VERSION_NUMBER" in str(e) or "record layer" in str(e)):
            return (f"guest {url} does not speak TLS (it answered plain HTTP to https://); use "
                    f"{url.replace('https://', 'http://', 1)}, or start it with --tls-cert/--tls-key")
        e = e.__cause__ or e.__context__
    return None


def _retry_after(r: httpx.Response) -> float:
    """The server's Retry-After in seconds (bounded), or 0 for the default backoff."""
    try:
        return min(MAX_RETRY_AFTER, max(0.0, float(r.headers.get("retry-after", "0"))))
    except ValueError:
        return 0.0


class RemoteEnv(EnvBase):
    """A guest desktop driven over HTTP: observe/act/reset map to /observe, /act, /reset.

    Element ids and targets are resolved to points here, against the last observation this client saw,
    so an action means what the caller saw even if the guest observed again in between.
    """

    name = "remote"

    def __init__(self, url: str, token: str | None = None, token_file: Path | str | None = None,
                 timeout: float = 60.0, connect_timeout: float = 5.0, retries: int = 2,
                 sources: str = "auto", image_format: str = "png", check: bool = True,
                 ca: Path | str | None = None, **_ignored: Any):
        if not url.startswith(("http://", "https://")):
            raise EnvError(f"remote URL {url!r} must start with http:// or https://, e.g. remote:http://127.0.0.1:8765")
        if image_format not in ("png", "jpeg"):
            raise EnvError(f"image_format {image_format!r} must be 'png' or 'jpeg'")
        self.url = url.rstrip("/")
        self.name = f"remote:{self.url}"
        self.sources, self.image_format, self.retries = sources, image_format, retries
        self._token = find_token(token, token_file)
        self._timeout = httpx.Timeout(timeout, connect=connect_timeout)
        self._verify = _verify(ca or os.environ.get("CUA_CA"))
        self._client = self._new_client()
        self.last_obs: Observation | None = None
        self._size: tuple[int, int] | None = None
        if check:
            self.health()

    @property
    def last(self) -> Observation | None:
        """The last observation this client saw (the desktop env's name for it)."""
        return self.last_obs

    @property
    def size(self) -> tuple[int, int]:
        """The guest's screen size (width, height)."""
        if self.last_obs is not None and self.last_obs.size[0]:
            return tuple(self.last_obs.size)
        if self._size is None:
            self._size = tuple(self.health().get("size") or self.screenshot(scale=1.0).size)
        return self._size

    def _reconnect(self) -> None:
        self._client.close()
        self._client = self._new_client()

    def _new_client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=self._timeout, trust_env=False, verify=self._verify,
                            headers={"Authorization": f"Bearer {self._token}"})

    # -- transport --------------------------------------------------------------------------------------
    def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """One call with retries on connection errors and 502/503/504; errors become EnvError."""
        last: str = ""
        idempotent = method in ("GET", "PUT", "HEAD")
        wait = 0.0
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(wait or min(2.0, 0.25 * 2 ** (attempt - 1)))
                wait = 0.0
            try:
                r = self._client.request(method, path, **kw)
            except (httpx.ConnectError, httpx.ConnectTimeout) as e:  # never reached the guest: safe to retry
                problem = _tls_problem(e, self.url)
                if problem:
                    raise EnvError(problem) from None
                last = f"cannot connect ({type(e).__name__}: {e})"
                self._reconnect()
                continue
            except httpx.TransportError as e:
                problem = _tls_problem(e, self.url)
                if problem:
                    raise EnvError(problem) from None
                last = f"{type(e).__name__}: {e}"
                if self.url.startswith("http://") and isinstance(e, httpx.RemoteProtocolError):
                    last += " (if the guest was started with --tls-cert, use https://)"
                self._reconnect()
                if idempotent:
                    continue
                break  # the guest may have run it: do not repeat a non-idempotent call
            # 429 is answered by the auth layer before anything runs: safe to repeat for any method. A 5xx
            # may come after a POST ran (the action happened), so only reads are repeated.
            if r.status_code in RETRY_STATUSES and attempt < self.retries and (idempotent or r.status_code == 429):
                last = f"HTTP {r.status_code}"
                wait = _retry_after(r)
                continue
            return self._check(r)
        raise EnvError(
            f"guest {self.url} is unreachable: {last}. Start it there with `cua serve` (and check the URL, "
            "the port and any SSH tunnel or firewall)"
        )

    def _check(self, r: httpx.Response) -> httpx.Response:
        if r.status_code < 400:
            return r
        try:
            detail = r.json().get("detail", r.text)
        except ValueError:
            detail = r.text[:500]
        if r.status_code == 401:
            raise EnvError(f"token rejected by guest {self.url}: set CUA_TOKEN (or the token file) to the "
                           "guest's token (on the guest: cat ~/.config/cua/token)")
        if r.status_code == 429:
            raise EnvError(f"guest {self.url} is refusing this client after failed logins: {detail}")
        raise EnvError(f"guest {self.url} answered {r.status_code} to {r.request.method} "
                       f"{r.request.url.path}: {detail}")

    # -- Environment ------------------------------------------------------------------------------------
    def health(self) -> dict:
        return self.request("GET", "/health").json()

    def _obs(self, method: str, path: str, screenshot: bool = True) -> Observation:
        from cua.env.wire import observation_from_wire

        params = {"screenshot": str(screenshot).lower(), "format": self.image_format}
        obs = observation_from_wire(self.request(method, path, params=params).json(), self.name)
        if self.sources not in ("", "auto"):
            keep = {s.strip() for s in self.sources.split(",")}
            obs.elements = [e for e in obs.elements if e.source in keep]
        self.last_obs = obs
        return obs

    def observe(self) -> Observation:
        return self._obs("GET", "/observe")

    def reset(self) -> Observation:
        return self._obs("POST", "/reset")

    def _resolve(self, action: Action) -> Action:
        """Turn element ids / targets into points using the last observation this client saw."""
        obs = self.last_obs
        if obs is None:
            return action
        upd: dict[str, Any] = {}
        for end, (fx, fy, fe, ft) in ((False, ("x", "y", "element_id", "target")),
                                      (True, ("to_x", "to_y", "to_element_id", "to_target"))):
            if getattr(action, fe, None) is None and getattr(action, ft, None) is None:
                continue
            pt = resolve_point(action, obs, obs.size or obs.image().size, end=end)
            if pt is not None:
                upd.update({fx: pt[0], fy: pt[1], fe: None, ft: None})
        if not upd:
            return action
        data = {**action.model_dump(), **upd}
        return type(action).model_validate(data)

    def act(self, action: Action) -> ActionResult:
        """Run one action on the guest; like the local backends, a target that cannot be resolved is a
        failed result (ok=False), while an unreachable guest or a rejected token raises EnvError."""
        try:
            sent = self._resolve(action)
        except EnvError as e:
            return ActionResult(action=action.to_json(), ok=False, error=str(e))
        r = self.request("POST", "/act", json=sent.model_dump(mode="json", exclude_none=True))
        return ActionResult.model_validate(r.json())

    def cancel(self) -> bool:
        """Stop the guest's action in progress (POST /cancel; safe from another thread); True if one was."""
        return bool(self.request("POST", "/cancel").json().get("cancelled"))

    def screenshot_bytes(self, fmt: str = "jpeg", scale: float = 1.0, quality: int = 85, reuse: bool = True) -> bytes:
        """The encoded screen (JPEG or PNG bytes), e.g. to stream or store without decoding."""
        params = {"format": fmt, "scale": scale, "quality": quality, "reuse": str(reuse).lower()}
        return self.request("GET", "/screenshot", params=params).content

    def screenshot(self, fmt: str = "jpeg", scale: float = 1.0, quality: int = 85, reuse: bool = True):
        """Only the screen image (no perception), decoded: fast polling."""
        import io

        from PIL import Image

        img = Image.open(io.BytesIO(self.screenshot_bytes(fmt, scale, quality, reuse)))
        img.load()
        return img

    # -- extras: windows, files, exec ---------------------------------------------------------------------
    def windows(self) -> list[dict]:
        return self.request("GET", "/windows").json()

    def read_file(self, path: str) -> bytes:
        return self.request("GET", "/files", params={"path": path}).content

    def write_file(self, path: str, data: bytes | str, parents: bool = False) -> int:
        body = data.encode() if isinstance(data, str) else data
        r = self.request("PUT", "/files", params={"path": path, "parents": str(parents).lower()}, content=body,
                         headers={"Content-Type": "application/octet-stream"})
        return r.json()["bytes"]

    def list_files(self, path: str = "") -> list[dict]:
        return self.request("GET", "/files/list", params={"path": path}).json()

    def exec(self, argv: list[str], timeout: float = 30.0) -> dict:
        if isinstance(argv, str):
            raise EnvError("exec takes an argument list, e.g. ['ls', '-l'], never a shell string")
        return self.request("POST", "/exec", json={"argv": list(argv), "timeout": timeout},
                            timeout=httpx.Timeout(timeout + 10, connect=self._timeout.connect)).json()

    def start_recording(self, task: str = "", **options: Any) -> dict:
        """Start a demonstration recording on the guest; `options`: fps, stop_hotkey, pause_hotkey, scrub,
        mask_unknown. Answers the session name (for fetch_recording) and the guest-side folder."""
        params = {"task": task, **{k: (str(v).lower() if isinstance(v, bool) else v) for k, v in options.items()}}
        return self.request("POST", "/recording/start", params=params).json()

    def recording_status(self) -> dict:
        """{"recording": bool, and while one runs: session, events, frames, seconds, stopped (by the guest's
        stop hotkey or a failed writer: stop_recording() then collects it)}."""
        return self.request("GET", "/recording").json()

    def stop_recording(self) -> dict:
        """Stop it; returns the session name, the guest-side folder and the recorder's counts."""
        return self.request("POST", "/recording/stop").json()

    def fetch_recording(self, session: str, out: Path | str) -> Path:
        """Copy a finished recording from the guest into the new local folder `out` (GET
        /recording/{session}/archive, a tar): no file access needed on the guest. Members that are absolute,
        climb out with `..`, or are links are refused before anything is unpacked."""
        import tempfile

        from cua.env.session_archive import check_new_folder, unpack, valid_session

        if not valid_session(session):
            raise EnvError(f"{session!r} is not a session name (e.g. rec-20260101-120000)")
        out = Path(out)
        check_new_folder(out)  # before the download, not only before unpacking it
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(prefix=f".{out.name}.", suffix=".tar", dir=out.parent) as tmp:  # 0600
            self._download(f"/recording/{session}/archive", tmp)
            tmp.flush()
            return unpack(Path(tmp.name), out)

    def _download(self, path: str, sink: Any) -> None:
        try:
            with self._client.stream("GET", path) as r:  # the read timeout bounds each chunk, not the whole
                if r.status_code >= 400:
                    r.read()
                    self._check(r)
                for chunk in r.iter_bytes(1 << 20):
                    sink.write(chunk)
        except httpx.TransportError as e:
            raise EnvError(f"downloading {path} from guest {self.url} failed: {type(e).__name__}: {e}") from None

    def close(self) -> None:
        self._client.close()
