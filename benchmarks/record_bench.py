"""Recorder benchmark: events lost / reordered in a burst, CPU at 5 fps, storage per minute, stop latency.

Baselines measured in the same run: a bare pynput listener (no processing, no storage) for the
burst; a bare mss grab loop at the same fps for CPU; one PNG per frame for storage.

    python benchmarks/record_bench.py [--quick] [--out bench-results/record.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

SIZE = (1280, 800)


def inject(display: str, n: int, rate: float) -> None:
    """Inject `n` X events through XTEST at `rate`/s: unique pointer moves and a/b/c key taps."""
    import Xlib.display
    from Xlib import X
    from Xlib.ext import xtest

    d = Xlib.display.Display(display)
    nxt = time.monotonic()
    for ev in script(n):
        if ev[0] == "move":
            xtest.fake_input(d, X.MotionNotify, x=ev[1], y=ev[2])
        else:
            code = d.keysym_to_keycode(ord(ev[1]))
            xtest.fake_input(d, X.KeyPress if ev[0] == "key_down" else X.KeyRelease, code)
        d.sync()
        nxt += 1.0 / rate
        time.sleep(max(0.0, nxt - time.monotonic()))
    d.close()


def script(n: int) -> list[tuple]:
    out: list[tuple] = []
    for i in range(n):
        if i % 10 == 8:
            out.append(("key_down", "abc"[(i // 10) % 3]))
        elif i % 10 == 9:
            out.append(("key_up", "abc"[(i // 10) % 3]))
        else:
            out.append(("move", 10 + i % 1000, 10 + (i // 1000) * 10 + (i % 7)))
    return out


def _captured(events: list[dict]) -> list[tuple]:
    out = []
    for e in events:
        if e["kind"] == "move":
            out.append(("move", e["x"], e["y"]))
        elif e["kind"] in ("key_down", "key_up"):
            out.append((e["kind"], e["char"]))
    return out


def _injector(display: str, n: int, rate: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "--inject", display, str(n), str(rate)])


def burst(display: str, n: int, rate: float, tmp: Path) -> dict:
    from recorder.capture import Recorder
    from recorder.store import Session

    xdo_home(display)
    rec = Recorder(tmp / "burst", display, fps=5).start()
    _injector(display, n, rate).wait()
    time.sleep(0.3)  # let the last events arrive before stopping
    stats = rec.stop()
    got = _captured(Session(tmp / "burst").events())
    want = script(n)
    lost = len(want) - sum(1 for w in want if w in set(got))
    return {
        "injected": n,
        "captured": len(got),
        "lost": max(0, lost),
        "order_kept": got == want,
        "stop_to_complete_s": stats["stop_to_complete_s"],
    }


def bare_listener(display: str, n: int, rate: float) -> dict:
    """Baseline: pynput listeners that only count (no ordering, frames, storage)."""
    os.environ["DISPLAY"] = display
    from pynput import keyboard, mouse

    xdo_home(display)
    got: list[tuple] = []
    m = mouse.Listener(on_move=lambda x, y, *a: got.append(("move", int(x), int(y))))
    k = keyboard.Listener(
        on_press=lambda key, *a: got.append(("key_down", getattr(key, "char", None))),
        on_release=lambda key, *a: got.append(("key_up", getattr(key, "char", None))),
    )
    for lst in (m, k):
        lst.start()
        lst.wait()
    _injector(display, n, rate).wait()
    time.sleep(0.3)
    m.stop()
    k.stop()
    return {"captured": len(got), "order_kept": got == script(n)}


def xdo_home(display: str) -> None:
    subprocess.run(["xdotool", "mousemove", "0", "0"], env={**os.environ, "DISPLAY": display}, check=True)


def cpu_run(display: str, seconds: float, fps: float, tmp: Path, bare: bool) -> dict:
    """CPU share of one core used by the recorder (or a bare grab loop) while mousepad is typed into."""
    typer = subprocess.Popen(
        ["xdotool", "type", "--delay", "200", "lorem ipsum dolor sit amet " * 40],
        env={**os.environ, "DISPLAY": display},
    )
    try:
        c0, w0 = time.process_time(), time.monotonic()
        if bare:
            from recorder.capture import _grabber

            with _grabber(display) as g:
                nxt = time.monotonic()
                while time.monotonic() - w0 < seconds:
                    g.grab(g.monitors[0])
                    nxt += 1 / fps
                    time.sleep(max(0.0, nxt - time.monotonic()))
            size = 0
        else:
            from recorder.capture import Recorder

            rec = Recorder(tmp / f"cpu{fps}", display, fps=fps).start()
            time.sleep(seconds)
            rec.stop()
            size = sum(f.stat().st_size for f in (tmp / f"cpu{fps}").rglob("*") if f.is_file())
        cpu, wall = time.process_time() - c0, time.monotonic() - w0
    finally:
        typer.kill()
        typer.wait()
    return {"cpu_pct": 100 * cpu / wall, "wall_s": wall, "bytes": size, "mb_per_min": size / 1e6 / wall * 60}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="short run (500 events, 8 s CPU windows)")
    ap.add_argument("--out", type=Path, default=Path("bench-results/record.json"))
    ap.add_argument("--inject", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.inject:
        inject(a.inject[0], int(a.inject[1]), float(a.inject[2]))
        return 0
    from tests.recorder_fixtures import xvfb

    n, rate = (500, 100.0) if a.quick else (2000, 100.0)
    secs, reps = (8.0, 1) if a.quick else (30.0, 3)
    con = Console()
    tmp = Path(tempfile.mkdtemp(prefix="record-bench-"))
    res: dict = {"quick": a.quick, "events": n, "rate": rate}
    app = None
    try:
        with xvfb(SIZE) as display:
            res["baseline_listener"] = bare_listener(display, n, rate)
            res["burst"] = burst(display, n, rate, tmp)
            app = subprocess.Popen(
                ["mousepad"],
                env={**os.environ, "DISPLAY": display},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(2.0)  # benchmark set-up only: give mousepad time to map its window
            runs = [cpu_run(display, secs, 5.0, tmp / str(i), bare=False) for i in range(reps)]
            bases = [cpu_run(display, secs, 5.0, tmp, bare=True) for _ in range(reps)]
            cpu = statistics.median(r["cpu_pct"] for r in runs)
            base = statistics.median(r["cpu_pct"] for r in bases)
            mb = statistics.median(r["mb_per_min"] for r in runs)
            png_mb = _png_per_min(display, 5.0)
            res["cpu"] = {
                "recorder_pct": round(cpu, 2),
                "bare_grab_pct": round(base, 2),
                "ratio": round(cpu / base, 2) if base else None,
                "runs": runs,
            }
            res["storage"] = {
                "mb_per_min": round(mb, 3),
                "png_per_frame_mb_per_min": round(png_mb, 2),
                "ratio": round(mb / png_mb, 4) if png_mb else None,
            }
    finally:
        if app is not None:
            app.terminate()
            app.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    b = res["burst"]
    targets = {
        "lost": b["lost"] == 0 and b["order_kept"],
        "cpu": res["cpu"]["recorder_pct"] <= 25,
        "storage": res["storage"]["mb_per_min"] <= 15,
    }
    res["targets_met"] = targets
    t = Table(title="record_bench" + (" (quick)" if a.quick else ""))
    for c in ("metric", "recorder", "baseline", "ratio", "target"):
        t.add_column(c)
    bl = res["baseline_listener"]
    t.add_row(
        f"events captured of {n} @ {rate:.0f}/s",
        f"{b['captured']} (lost {b['lost']}, order {'kept' if b['order_kept'] else 'BROKEN'})",
        f"{bl['captured']} two bare listeners (order {'kept' if bl['order_kept'] else 'broken'})",
        f"{b['captured'] / max(1, bl['captured']):.3f}",
        "0 lost, order kept",
    )
    t.add_row(
        "CPU % of one core @ 5 fps",
        f"{res['cpu']['recorder_pct']:.1f}",
        f"{res['cpu']['bare_grab_pct']:.1f} bare grab",
        str(res["cpu"]["ratio"]),
        "<= 25%",
    )
    t.add_row(
        "storage MB/min",
        f"{res['storage']['mb_per_min']:.2f}",
        f"{res['storage']['png_per_frame_mb_per_min']:.1f} PNG/frame",
        str(res["storage"]["ratio"]),
        "<= 15 MB/min",
    )
    t.add_row("stop -> complete flag (s)", f"{b['stop_to_complete_s']:.3f}", "-", "-", "-")
    con.print(t)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(res, indent=1))
    con.print(f"wrote {a.out}")
    return 0


def _png_per_min(display: str, fps: float) -> float:
    import io

    from PIL import Image

    from recorder.capture import _grabber

    with _grabber(display) as g:
        shot = g.grab(g.monitors[0])
    buf = io.BytesIO()
    Image.frombytes("RGB", shot.size, shot.rgb).save(buf, format="PNG", compress_level=1)
    return len(buf.getvalue()) / 1e6 * fps * 60


if __name__ == "__main__":
    sys.exit(main())
