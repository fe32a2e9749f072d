"""MIT-MAGIC-COOKIE files for the X displays the project starts, and the allow-listed child environment.

Each sandbox's Xvfb runs with `-auth FILE` (a fresh 128-bit cookie, mode 0600), so a local process without
the cookie is refused. Clients the project starts get the cookie through XAUTHORITY: child processes through
the sandbox's environment, and in-process clients (python-xlib, mss/libX11, pynput) through one private
per-process file that holds the caller's own entries plus one entry per sandbox display.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import shutil
import socket
import struct
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

COOKIE_NAME = b"MIT-MAGIC-COOKIE-1"
FAMILY_LOCAL = 256
FAMILY_WILD = 65535
# What a sandbox's processes inherit from the caller: locale, PATH, terminal, user identity, system data dirs.
# Never keys or tokens (OPENAI_API_KEY, CUA_TOKEN, AWS_*...): `--pass-env NAME` adds one explicitly.
ENV_ALLOW = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "SHELL", "XDG_DATA_DIRS",
             "XDG_CONFIG_DIRS", "TMPDIR")

_lock = threading.Lock()
_process_file: Path | None = None


def allowed_env(pass_env: Iterable[str] = (), source: dict[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of `source` (default os.environ), plus the names in `pass_env`."""
    src = os.environ if source is None else source
    names = set(ENV_ALLOW) | {n.strip() for n in pass_env if n and n.strip()}
    return {k: v for k, v in src.items() if k in names or k.startswith("LC_")}


# A browser also gets its home (profile, font cache) and, headed, the display and session buses it shows on.
BROWSER_KEEP = ("HOME", "DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS")


def browser_env(pass_env: Iterable[str] = ()) -> dict[str, str]:
    """What a Chromium the project launches sees: the allow-list, BROWSER_KEEP and `pass_env`; never API keys."""
    return allowed_env([*BROWSER_KEEP, *pass_env])


def _field(b: bytes) -> bytes:
    return struct.pack(">H", len(b)) + b


def entry(family: int, address: bytes, number: bytes, cookie: bytes) -> bytes:
    """One Xauthority record (the libXau format)."""
    return struct.pack(">H", family) + _field(address) + _field(number) + _field(COOKIE_NAME) + _field(cookie)


def parse(data: bytes) -> list[tuple[int, bytes, bytes, bytes, bytes]]:
    """Records of an Xauthority file: (family, address, number, name, data); a truncated tail is dropped."""
    out, i = [], 0
    try:
        while i + 2 <= len(data):
            (family,) = struct.unpack_from(">H", data, i)
            i += 2
            fields = []
            for _ in range(4):
                (n,) = struct.unpack_from(">H", data, i)
                fields.append(data[i + 2:i + 2 + n])
                i += 2 + n
            if i > len(data):
                break
            out.append((family, *fields))
    except struct.error:
        pass
    return out


def _without_display(data: bytes, number: bytes) -> bytes:
    """`data` minus the records for display `number` (a stale cookie of an earlier display :N would win)."""
    return b"".join(struct.pack(">H", rec[0]) + b"".join(_field(x) for x in rec[1:])
                    for rec in parse(data) if rec[2] != number)


def _write_private(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def new_cookie() -> bytes:
    return secrets.token_bytes(16)


def write_server_file(path: Path, cookie: bytes) -> None:
    """The file for `Xvfb -auth`: the server reads every cookie in it whatever its address/display."""
    _write_private(path, entry(FAMILY_WILD, b"", b"", cookie))


def client_entries(display: str, cookie: bytes) -> bytes:
    """Entries a client of `display` (':N') finds by libXau's and python-xlib's lookup rules."""
    number = display.lstrip(":").split(".")[0].encode()
    host = socket.gethostname().encode()
    return entry(FAMILY_LOCAL, host, number, cookie) + entry(FAMILY_WILD, b"", number, cookie)


def write_client_file(path: Path, display: str, cookie: bytes) -> None:
    _write_private(path, client_entries(display, cookie))


def share_with_this_process(display: str, cookie: bytes) -> Path:
    """Add the cookie to this process's private Xauthority (created on first use, 0600 in a 0700 dir) and
    point $XAUTHORITY at it, keeping the entries of the file it pointed at before (the user's desktop)."""
    global _process_file
    with _lock:
        if _process_file is None or not _process_file.exists():
            d = Path(tempfile.mkdtemp(prefix="cua-xauth-"))
            atexit.register(shutil.rmtree, d, True)
            _process_file = d / "Xauthority"
            before = b""
            old = os.environ.get("XAUTHORITY") or os.path.expanduser("~/.Xauthority")
            with contextlib.suppress(OSError):
                before = Path(old).read_bytes()
            _write_private(_process_file, before)
        number = display.lstrip(":").split(".")[0].encode()
        rest = _without_display(_process_file.read_bytes(), number)
        _write_private(_process_file, client_entries(display, cookie) + rest)
        os.environ["XAUTHORITY"] = str(_process_file)
        return _process_file
