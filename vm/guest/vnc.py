"""The guest's live-view route: WebSocket /vnc bridges to an x11vnc it starts on the guest's own display.

Each connection gets its own x11vnc, bound to the guest's loopback, protected by the VNC password the caller
sends (`X-Cua-Vnc-Password`, chosen by the host's live view), view-only unless `?takeover=1`, and ended when
the connection ends. The route sits behind the guest's bearer token like every other route; the host's
`cua view` relays its noVNC page to it, so the guest token never reaches a browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from fastapi import FastAPI, WebSocket, WebSocketDisconnect

from recorder.probes import display_of

PASSWORD_HEADER = "x-cua-vnc-password"
CHUNK = 65536


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _start_x11vnc(display: str, x_env: dict[str, str], password: str, takeover: bool,
                        work: Path) -> tuple[subprocess.Popen, int]:
    """x11vnc on `display`, loopback only, one client, behind `password`; (process, port) once it listens."""
    pw_file = work / "vncpass"
    pw_file.write_text(password + "\n")
    pw_file.chmod(0o600)
    port = _free_port()
    argv = ["x11vnc", "-display", display, "-rfbport", str(port), "-localhost", "-passwdfile", str(pw_file),
            "-noxdamage", "-quiet", "-once"]
    if x_env.get("XAUTHORITY"):
        argv += ["-auth", x_env["XAUTHORITY"]]
    if not takeover:
        argv.append("-viewonly")
    proc = subprocess.Popen(argv, env={"PATH": "/usr/bin:/bin", "HOME": str(work)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    for _ in range(200):
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace")[-500:] if proc.stderr else ""
            raise RuntimeError(f"x11vnc exited with code {proc.returncode}: {err}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        await asyncio.sleep(0.05)
    proc.kill()
    raise RuntimeError("x11vnc did not listen within 10 s")


async def _pump_ws_to_tcp(ws: WebSocket, writer: asyncio.StreamWriter) -> None:
    while True:
        msg = await ws.receive()
        if msg["type"] == "websocket.disconnect":
            return
        data = msg.get("bytes") or (msg.get("text") or "").encode()
        writer.write(data)
        await writer.drain()


async def _pump_tcp_to_ws(reader: asyncio.StreamReader, ws: WebSocket) -> None:
    while data := await reader.read(CHUNK):
        await ws.send_bytes(data)


async def bridge(ws: WebSocket, env: Any) -> None:
    """Accept `ws` and relay it to a fresh x11vnc on `env`'s display until either side ends."""
    password = ws.headers.get(PASSWORD_HEADER, "")
    if not 6 <= len(password) <= 8:
        await ws.close(code=1008, reason=f"send the VNC password (6-8 characters) in {PASSWORD_HEADER}")
        return
    display, x_env = display_of(env)
    if not display:
        await ws.close(code=1011, reason=f"{type(env).__name__} has no X display to show")
        return
    work = Path(tempfile.mkdtemp(prefix="cua-guest-vnc-"))  # 0700: holds the password file
    proc = None
    try:
        proc, port = await _start_x11vnc(display, x_env, password, ws.query_params.get("takeover") == "1", work)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        await ws.accept()
        pumps = [asyncio.create_task(_pump_ws_to_tcp(ws, writer)), asyncio.create_task(_pump_tcp_to_ws(reader, ws))]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for p in pumps:
                p.cancel()
            writer.close()
            with contextlib.suppress(Exception):
                await ws.close()
    except (RuntimeError, OSError) as e:
        with contextlib.suppress(Exception):
            await ws.close(code=1011, reason=str(e)[:120])
    except WebSocketDisconnect:
        pass
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(work, ignore_errors=True)


def add_vnc_route(app: FastAPI, get_env: Any) -> None:
    """Register WebSocket /vnc on the guest app; `get_env()` returns the (started) environment, blocking."""

    @app.websocket("/vnc")
    async def vnc(ws: WebSocket) -> None:
        if shutil.which("x11vnc") is None:
            await ws.close(code=1011, reason="x11vnc is not installed on the guest; apt-get install x11vnc")
            return
        env = await asyncio.to_thread(get_env)
        await bridge(ws, env)


def new_password() -> str:
    """An RFB password (8 characters at most) for one live-view connection."""
    return secrets.token_urlsafe(6)[:8]
