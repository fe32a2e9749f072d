"""Live view latency and MCP overhead, each against its baseline in the same run.

- live view: from an action on the sandbox (a mousepad menu opening) to the changed frame in the noVNC
  page (Chromium polls the canvas), against the same change seen by a direct mss capture.
- remote live view: the same through a guest (`cua serve` in a subprocess): the host's relay to the guest's
  WebSocket /vnc, against the same change seen by polling the guest's /screenshot.
- MCP: one `act` (a neutral key) through the official SDK client over stdio, against env.act directly.

    python benchmarks/liveview_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from mcp import Client, StdioServerParameters
from PIL import Image
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import BenchRun, row  # noqa: E402

from cua.actions import parse_action  # noqa: E402
from cua.env.chromium import CHROMIUM_ARGS, find_chromium  # noqa: E402
from cua.env.desktop import SandboxEnv  # noqa: E402
from cua.env.remote import RemoteEnv  # noqa: E402
from cua.liveview import LiveView  # noqa: E402

TOKEN = "liveview-bench-" + "k" * 32
OPEN, CLOSE = parse_action('click(text="File", role="menu")'), parse_action('key("Escape")')


def _gray(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.int16)


def _until_changed(grab, ref: np.ndarray, timeout: float = 10.0) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if np.abs(grab() - ref).mean() > 0.5:
            return time.monotonic() - t0
    return float("nan")


def liveview_latency(env, n: int, grab_direct=None) -> dict:
    page_ms, direct_ms = [], []
    with LiveView(env, TOKEN) as view, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        page = browser.new_context(http_credentials={"username": "cua", "password": TOKEN},
                                   viewport={"width": 1400, "height": 900}).new_page()
        page.goto(view.url)
        canvas = page.frame_locator("#screen").locator("canvas")
        canvas.wait_for(timeout=20000)
        time.sleep(2)
        grab_page = lambda: _gray(canvas.screenshot())  # noqa: E731
        grab_direct = grab_direct or (lambda: np.asarray(env.x.screenshot().convert("L"), dtype=np.int16))  # noqa: E731
        for _ in range(n):
            ref_page, ref_direct = grab_page(), grab_direct()
            t0 = time.monotonic()
            env.act(OPEN)  # returns once the screen settled: both clocks start at the click
            act_s = time.monotonic() - t0
            direct_ms.append(1000 * (act_s + _until_changed(grab_direct, ref_direct)))
            page_ms.append(1000 * (time.monotonic() - t0 + _until_changed(grab_page, ref_page)))
            env.act(CLOSE)
            time.sleep(0.5)
        browser.close()
    return {"page_ms": page_ms, "direct_ms": direct_ms}


@contextmanager
def guest_env():
    """`cua serve --env sandbox:mousepad` in a subprocess on a free loopback port, and a RemoteEnv to it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "cua.cli", "serve", "--env", "sandbox:mousepad", "--port",
                             str(port), "--sources", "a11y"], env={**os.environ, "CUA_TOKEN": TOKEN},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                env = RemoteEnv(f"http://127.0.0.1:{port}", token=TOKEN, retries=0)
                break
            except Exception:  # noqa: BLE001 - not listening yet
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("cua serve did not start") from None
                time.sleep(0.5)
        env.observe()  # starts the guest's sandbox
        try:
            yield env
        finally:
            env.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def mcp_overhead(n: int) -> dict:
    key = 'key("shift")'
    with SandboxEnv("mousepad", sources="a11y") as env:
        direct = []
        for _ in range(n):
            t0 = time.monotonic()
            env.act(parse_action(key))
            direct.append(1000 * (time.monotonic() - t0))
    params = StdioServerParameters(command=sys.executable, args=["-m", "cua.cli", "mcp", "--env", "sandbox:mousepad"],
                                   env=dict(os.environ))

    async def go() -> list[float]:
        out = []
        async with Client(params, read_timeout_seconds=120) as client:
            await client.call_tool("act", {"action": key})  # starts the sandbox
            for _ in range(n):
                t0 = time.monotonic()
                res = await client.call_tool("act", {"action": key})
                out.append(1000 * (time.monotonic() - t0))
                assert json.loads(res.content[0].text)["ok"], res.content[0].text
        return out

    return {"mcp_ms": asyncio.run(go()), "direct_ms": direct}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 repetitions instead of 15")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    n = 3 if args.quick else 15
    run = BenchRun("liveview_bench", args.quick, args.out)
    with SandboxEnv("mousepad", sources="a11y") as env:
        live = liveview_latency(env, n)
    with guest_env() as guest:
        remote = liveview_latency(guest, n, lambda: _gray(guest.screenshot_bytes(fmt="png", reuse=False)))
    mcp = mcp_overhead(n)
    med = lambda xs: statistics.median([x for x in xs if x == x]) if any(x == x for x in xs) else None  # noqa: E731
    summary = [
        row("live view: action to changed frame in the page (median)", med(live["page_ms"]), med(live["direct_ms"]),
            "same change seen by a direct capture", "ms"),
        row("remote live view (guest /vnc via the host relay): action to changed frame (median)",
            med(remote["page_ms"]), med(remote["direct_ms"]), "same change polled from the guest's /screenshot", "ms"),
        row("MCP act over stdio (median)", med(mcp["mcp_ms"]), med(mcp["direct_ms"]), "env.act directly", "ms"),
    ]
    path = run.write({"liveview": live, "remote_liveview": remote, "mcp": mcp, "repetitions": n}, summary)
    print(f"{'measure':86} {'value':>9} {'baseline':>9} {'ratio':>6}")
    for s in summary:
        print(f"{s['metric']:86} {s['value'] or float('nan'):9.1f} {s['baseline'] or float('nan'):9.1f} "
              f"{s['ratio'] or float('nan'):6.2f}")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
