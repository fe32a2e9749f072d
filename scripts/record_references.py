"""Record the human reference of each bundled mousepad task with the recorder.

For every tasks/mousepad/*.yaml: a sandbox mousepad is reset and set up exactly as `cua eval`
does (cua.eval.runner.Episode), the recorder starts on its display, and the task is driven the
way a person would, with real X input from a separate process (xdotool): the pointer glides to
the centre of the element the task's reference action names (grounded on a fresh observation),
keys go through `xdotool type --delay 60`, and between steps the person waits for the screen to
settle (the menu or dialog to show) and reads it for 300-700 ms. The recording
is checked by replaying it on a freshly set-up sandbox and running the task's checkers; it is
then slimmed (no video: the keyframes are what replay and export read) and stored as
tasks/mousepad/refs/<task_id>/, and the task's `reference:` block gets its demonstration,
duration (first to last input event) and step count (reduced actions).

Example: .venv/bin/python scripts/record_references.py --only mousepad-save-file
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cua.actions import Action, Target, parse_actions
from cua.eval.checkers import evaluate
from cua.eval.runner import Episode, EvalConfig, _quiesce
from cua.eval.task import Task, load_tasks
from cua.perception.ground import GroundingError, ground

SUITE = ROOT / "tasks" / "mousepad"
ENV_SPEC = "sandbox:mousepad"
FPS = 2.0
TYPE_DELAY_MS = 60
INPUT_KINDS = {"move", "press", "release", "scroll", "key_down", "key_up"}
POINTER_KINDS = {"click", "double_click", "right_click"}


class Person:
    """Drives an X display the way a person does: xdotool from its own process, human pacing."""

    def __init__(self, env: Any, seed: str):
        self.env = env
        self.xenv = {**env.sandbox.env, "DISPLAY": env.sandbox.display}
        self.rng = random.Random(seed)

    def xdo(self, *args: str) -> str:
        r = subprocess.run(
            ["xdotool", *args], env=self.xenv, capture_output=True, text=True, timeout=60, check=False
        )
        if r.returncode != 0:
            raise RuntimeError(f"xdotool {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
        return r.stdout

    def pause(self, lo: float = 0.3, hi: float = 0.7) -> None:
        time.sleep(self.rng.uniform(lo, hi))

    def pointer(self) -> tuple[int, int]:
        out = dict(kv.split(":", 1) for kv in self.xdo("getmouselocation").split() if ":" in kv)
        return int(out.get("x", 0)), int(out.get("y", 0))

    def glide(self, x: int, y: int) -> None:
        """Ease the pointer to (x, y) in a dozen motion events over ~0.3 s."""
        x0, y0 = self.pointer()
        n = max(4, min(14, int(math.hypot(x - x0, y - y0) / 40)))
        for i in range(1, n + 1):
            f = 0.5 - 0.5 * math.cos(math.pi * i / n)
            self.xdo("mousemove", str(round(x0 + (x - x0) * f)), str(round(y0 + (y - y0) * f)))
            time.sleep(0.3 / n)

    def find(self, target: Target, timeout: float = 8.0) -> tuple[int, int]:
        """The element's centre on the screen as it is now; waits (bounded) for it to appear."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return ground(target, self.env.observe()).point
            except GroundingError as e:
                if time.monotonic() >= deadline:
                    raise RuntimeError(f"cannot see {target} within {timeout:.0f}s: {e}") from None
                time.sleep(0.2)

    def do(self, action: Action) -> None:
        kind = action.kind
        if kind in POINTER_KINDS:
            target = getattr(action, "target", None)
            x, y = self.find(target) if target is not None else (action.x, action.y)
            self.glide(int(x), int(y))
            self.pause(0.1, 0.2)
            button = {"right_click": "3"}.get(kind, "1")
            for _ in range(2 if kind == "double_click" else 1):
                self.xdo("mousedown", button)
                time.sleep(self.rng.uniform(0.06, 0.1))
                self.xdo("mouseup", button)
                time.sleep(0.08)
        elif kind == "type":
            # A person types the home folder as `~`; the sandbox home of this run would not replay.
            # Enter as its own key: xdotool types "\n" as Linefeed, which is not the key a person presses.
            for i, line in enumerate(action.text.split("\n")):
                if i:
                    time.sleep(TYPE_DELAY_MS / 1000)
                    self.xdo("key", "Return")
                    time.sleep(TYPE_DELAY_MS / 1000)
                if line:
                    self.xdo("type", "--delay", str(TYPE_DELAY_MS), "--", line)
        elif kind == "hotkey":
            self.xdo("key", "--delay", str(TYPE_DELAY_MS), "+".join(_xkey(k) for k in action.keys))
        elif kind == "key":
            self.xdo("key", "--delay", str(TYPE_DELAY_MS), "+".join(_xkey(k) for k in action.key.split("+")))
        else:
            raise RuntimeError(f"no human way to perform {action.to_call()} (kind {kind!r})")


XKEYS = {
    "ctrl": "ctrl",
    "alt": "alt",
    "shift": "shift",
    "super": "super",
    "enter": "Return",
    "esc": "Escape",
    "delete": "Delete",
    "backspace": "BackSpace",
    "tab": "Tab",
    "end": "End",
    "home": "Home",
    "space": "space",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "pageup": "Prior",
    "pagedown": "Next",
}


def _xkey(key: str) -> str:
    k = key.strip().lower()
    return XKEYS.get(k, k.upper() if len(k) > 1 and k[0] == "f" and k[1:].isdigit() else k)


def human_actions(task: Task) -> list[Action]:
    """The task's reference actions as a person would do them (`{home}` typed as `~`)."""
    out: list[Action] = []
    for item in task.reference.actions if task.reference else []:
        out += parse_actions(item.replace("{home}", "~") if isinstance(item, str) else item)
    if not out:
        raise RuntimeError(f"task {task.id} has no reference.actions to demonstrate")
    return out


def fresh_episode(task: Task, env: Any) -> Episode:
    ep = Episode(task, env, EvalConfig(replay="reference", out=tempfile.gettempdir()))
    env.reset()
    ep.setup()
    return ep


def record(task: Task, env: Any, out: Path) -> None:
    from recorder.capture import Recorder

    ep = fresh_episode(task, env)
    try:
        _quiesce(env)
        person = Person(env, task.id)
        rec = Recorder.for_env(env, out, task=task.instruction, fps=FPS).start()
        try:
            person.pause(0.6, 0.9)  # a person first looks at the screen
            for i, action in enumerate(human_actions(task)):
                if i:
                    _quiesce(env)  # a person waits for the menu / dialog to show before going on
                    fresh_snapshot(rec)
                    person.pause()
                person.do(action)
            _quiesce(env)
            person.pause(0.4, 0.6)
        finally:
            stats = rec.stop()
        if stats.get("errors"):
            print(f"  recorder warnings: {stats['errors']}", file=sys.stderr)
    finally:
        ep.close()


def fresh_snapshot(rec: Any, timeout: float = 5.0) -> None:
    """Have the recorder's element probe look at the screen as it is now (the dialog that opened).

    The probe snapshots the UI right after each input and every 3 s when idle; a dialog that opens
    a moment after the click that asked for it is missing from that snapshot, and a click on it
    within 3 s would be attributed to the window underneath and replay there. So, like the
    recorder's own post-input refresh, ask for one more snapshot once the screen has settled.
    """
    probe = rec.probe
    if not hasattr(probe, "kick"):
        return
    t = rec.now()
    probe.kick.set()
    deadline = time.monotonic() + timeout
    with probe.cond:
        while not (probe.snaps and probe.snaps[-1][0] >= t) and time.monotonic() < deadline:
            probe.cond.wait(0.2)


def targets_match(task: Task, rec_dir: Path) -> str | None:
    """Each recorded click landed on the element the reference action names (by name and role)."""
    from recorder.demo import load_demo

    wanted = [a for a in human_actions(task) if a.kind in POINTER_KINDS and getattr(a, "target", None)]
    got = [s for s in load_demo(rec_dir).steps if s.action.kind in POINTER_KINDS]
    if len(wanted) != len(got):
        return f"{len(got)} clicks recorded, {len(wanted)} expected"
    for a, s in zip(wanted, got):
        el = s.element or {}
        if (a.target.text or "") not in (el.get("name") or "") or (
            a.target.role and a.target.role != el.get("role")
        ):
            return f"click on {a.target} recorded on {el.get('role')!r} {el.get('name')!r}"
    return None


def verify(task: Task, env: Any, rec_dir: Path) -> str | None:
    """Replay the recording on a fresh set-up and run the checkers: None when it passes, else why."""
    from recorder.replay import replay_path

    why = targets_match(task, rec_dir)
    if why:
        return why
    ep = fresh_episode(task, env)
    try:
        rep = replay_path(rec_dir, env)
        if not rep.ok:
            return "; ".join(f"step {s.index}: {s.error}" for s in rep.steps if s.error) or "replay failed"
        _quiesce(env)
        ep.ctx._obs = None
        return None if evaluate(task.checker_tree(), ep.ctx) else f"checkers failed: {ep.ctx.details}"
    finally:
        ep.close()


def slim(rec_dir: Path) -> None:
    """Keep what replay and export read: manifest, events, keyframes (video dropped, PNGs optimised).

    Every reduced step's pre-action frame is kept as a PNG keyframe first (the recorder saves some
    only in the video, e.g. the second run of typing), so replay's same-effect checks and dataset
    export lose nothing with the video.
    """
    from recorder.reduce import reduce_events
    from recorder.store import Session

    session = Session(rec_dir)
    wanted = {a.frame for a in reduce_events(session.events(), session.manifest.get("thresholds"))}
    db = sqlite3.connect(rec_dir / "events.sqlite")
    for seq in sorted(s for s in wanted if s is not None):
        rel = f"keyframes/{seq:06d}.png"
        if not (rec_dir / rel).exists():
            img = session.frame_image(seq)
            if img is None:
                raise RuntimeError(f"{rec_dir}: frame {seq} of a step is neither a keyframe nor in the video")
            img.save(rec_dir / rel, format="PNG")
            db.execute("UPDATE frames SET keyframe=? WHERE seq=?", (rel, seq))
    db.commit()
    db.close()
    (rec_dir / "video.mp4").unlink(missing_ok=True)
    mp = rec_dir / "manifest.json"
    manifest = json.loads(mp.read_text())
    manifest["video"] = None
    manifest["reference"] = {
        "driven_by": "scripts/record_references.py (xdotool, human pacing)",
        "fps": FPS,
        "type_delay_ms": TYPE_DELAY_MS,
    }
    mp.write_text(json.dumps(manifest, indent=1) + "\n")
    db = sqlite3.connect(rec_dir / "events.sqlite")
    db.execute("PRAGMA journal_mode=DELETE")  # read-only use from now on: no -wal/-shm files next to it
    db.execute("VACUUM")
    db.close()
    for p in rec_dir.glob("*.sqlite-*"):
        p.unlink()
    for png in (rec_dir / "keyframes").glob("*.png"):
        Image.open(png).save(png, format="PNG", optimize=True)


def summarise(rec_dir: Path) -> tuple[float, int]:
    """(seconds from the first to the last input event, number of reduced actions)."""
    from recorder.demo import load_demo
    from recorder.store import Session

    ts = [e["t"] for e in Session(rec_dir).events() if e["kind"] in INPUT_KINDS]
    return round(max(ts) - min(ts), 1) if ts else 0.0, len(load_demo(rec_dir).steps)


def _steps(rec_dir: Path) -> list[str]:
    try:
        from recorder.demo import load_demo

        return [st.action.to_call() for st in load_demo(rec_dir).steps]
    except Exception as e:  # noqa: BLE001 - diagnostics only
        return [f"unreadable: {e}"]


def write_reference(task_file: Path, demonstration: str, seconds: float, steps: int) -> None:
    """Rewrite the top-level `reference:` block of the task file only (actions unchanged)."""
    lines = task_file.read_text().splitlines(keepends=True)
    data = yaml.safe_load("".join(lines))
    ref = {
        "demonstration": demonstration,
        "seconds": seconds,
        "steps": steps,
        "actions": (data.get("reference") or {}).get("actions", []),
    }
    block = yaml.safe_dump({"reference": ref}, sort_keys=False, allow_unicode=True, width=1000)
    start = next((i for i, ln in enumerate(lines) if ln.startswith("reference:")), None)
    if start is None:
        lines.append(block)
    else:
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i][:1] not in (" ", "-", "\n", "")), len(lines)
        )
        lines[start:end] = [block]
    task_file.write_text("".join(lines))
    if yaml.safe_load(task_file.read_text()).get("reference") != ref:
        raise RuntimeError(f"{task_file}: the rewritten reference block does not read back")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--only", action="append", default=[], help="Task id to (re-)record; repeatable. Default: all."
    )
    ap.add_argument("--tries", type=int, default=3, help="Recordings per task before giving up on it.")
    ap.add_argument("--suite", default=str(SUITE), help="Task folder; recordings go to its refs/.")
    ap.add_argument("--no-verify", action="store_true", help="Skip the replay-and-check of each recording.")
    args = ap.parse_args()

    from cua.env import make_env

    suite = Path(args.suite).resolve()
    refs = suite / "refs"
    tasks = load_tasks([suite])
    unknown = set(args.only) - {t.id for t in tasks}
    if unknown:
        ap.error(f"unknown task id(s) {', '.join(sorted(unknown))}; e.g. {tasks[0].id}")
    chosen = [t for t in tasks if not args.only or t.id in args.only]
    refs.mkdir(parents=True, exist_ok=True)
    failed: list[str] = []
    with make_env(ENV_SPEC, sources="a11y") as env:
        for task in chosen:
            why = "not recorded"
            for attempt in range(1, args.tries + 1):
                tmp = Path(tempfile.mkdtemp(prefix=f"ref-{task.id}-")) / task.id
                try:
                    record(task, env, tmp)
                    why = None if args.no_verify else verify(task, env, tmp)
                except Exception as e:  # noqa: BLE001 - a failed attempt is retried, then reported
                    why = f"{type(e).__name__}: {e}"
                if why is None:
                    break
                print(f"{task.id}: attempt {attempt} failed: {why}; recorded {_steps(tmp)}", file=sys.stderr)
                shutil.rmtree(tmp.parent, ignore_errors=True)
            if why is not None:
                failed.append(task.id)
                continue
            slim(tmp)
            dest = refs / task.id
            shutil.rmtree(dest, ignore_errors=True)
            shutil.move(str(tmp), dest)
            shutil.rmtree(tmp.parent, ignore_errors=True)
            seconds, steps = summarise(dest)
            write_reference(Path(task.source), f"refs/{task.id}", seconds, steps)
            size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
            print(f"{task.id}: {steps} steps, {seconds:.1f} s, {size / 1024:.0f} KiB -> {dest}")
    if failed:
        print(f"not recorded: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
