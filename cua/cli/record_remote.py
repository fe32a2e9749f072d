"""`cua record --env remote:URL | vm:IMAGE`: record on the guest, then copy the finished session back.

The guest's own recorder captures its display (the same Recorder as a local `cua record`); this side starts
it, waits for a stop (Ctrl-C / SIGTERM, --duration, the stop hotkey pressed on the guest's desktop, or the
live view's "done" button), stops it and fetches the session as a tar into `--out`: a normal local recording.
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from pathlib import Path
from typing import Any

from cua.cli.common import console, fail

GUEST_KINDS = ("remote", "vm")


def is_guest_env(spec: str) -> bool:
    """True for the env strings whose desktop lives behind a guest server."""
    return (spec or "").partition(":")[0].strip().lower() in GUEST_KINDS


def _hints(env: Any, stop_hotkey: str, live: bool) -> None:
    """How to drive the guest while it records: machine-readable lines on stdout, advice on stderr."""
    url = env.url
    print(f"GUEST_URL={url}", flush=True)
    token_file = getattr(env, "_token_file", None)  # a VM's fresh token; a remote: guest's is the caller's own
    if token_file is not None:
        print(f"CUA_TOKEN_FILE={token_file}", flush=True)
    auth = f"CUA_TOKEN_FILE={token_file} " if token_file is not None else ""
    if not live:
        console.print(f"drive it in a browser: add --live (a takeover page), or from another terminal "
                      f"`{auth}cua view --env remote:{url} --takeover`; or act on it: "
                      f"`{auth}cua act --env remote:{url} 'type(\"hello\")'`")
    console.print(f"stop with Ctrl-C, SIGTERM, --duration, or {stop_hotkey} on the guest's desktop")


def record_on_guest(spec: str, out: Path, task: str, fps: float, duration: float | None, stop_hotkey: str,
                    pause_hotkey: str, scrub: bool, mask_unknown: bool, live: bool) -> None:
    """The whole remote recording: start on the guest, wait for a stop, stop there, fetch into `out`."""
    from cua.env import EnvError, make_env
    from cua.env.session_archive import check_new_folder
    from cua.liveview import live_or_not

    try:
        check_new_folder(out)  # before a VM boots for nothing
    except EnvError as e:
        fail(str(e))
    try:
        env = make_env(spec)  # a vm: boots here (minutes under TCG); a remote: is checked with /health
    except EnvError as e:
        fail(str(e))
    view, running = None, False
    try:
        view = live_or_not(env, live, console.print, takeover=True, done_button=True)
        started = env.start_recording(task, fps=fps, stop_hotkey=stop_hotkey, pause_hotkey=pause_hotkey,
                                      scrub=scrub, mask_unknown=mask_unknown)
        session, running = started["session"], True
        console.print(f"recording [bold]{spec}[/] on the guest as {session} ({started.get('dir')}); "
                      f"it is copied into {out} when it stops")
        _hints(env, stop_hotkey, live)
        _wait_for_stop(env, view, duration)
        running = False  # whatever the stop answers, do not try again
        stats = env.stop_recording().get("stats", {})
        try:
            env.fetch_recording(session, out)
        except EnvError as e:
            fail(f"{e}; the recording stays on the guest in {started.get('dir')} "
                 f"(GET /recording/{session}/archive fetches it)")
    except EnvError as e:
        fail(str(e))
    finally:
        if running:  # an error or an interrupt before the stop: do not leave the guest recording
            with contextlib.suppress(EnvError):
                env.stop_recording()
        if view is not None:
            view.close()
        env.close()  # a vm: shuts down here, after the copy
    console.print(f"saved {out}: {stats.get('events', 0)} events, {stats.get('frames', 0)} frames, "
                  f"{stats.get('keyframes', 0)} keyframes (recorded on the guest as {session})")
    print(json.dumps({"out": str(out), "session": session,
                      **{k: v for k, v in stats.items() if isinstance(v, (int, float))}}))


def _wait_for_stop(env: Any, view: Any, duration: float | None) -> None:
    """Until Ctrl-C / SIGTERM, --duration, the guest's stop hotkey, or the live view's done button."""
    import time

    stop = threading.Event()
    old = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    t0 = time.monotonic()
    try:
        with console.status("recording on the guest...") as status:
            while not stop.wait(1.0 if duration is None else min(1.0, max(0.01, duration - (time.monotonic() - t0)))):
                if (duration is not None and time.monotonic() - t0 >= duration) or view.done.is_set():
                    return
                st = env.recording_status()
                if not st.get("recording") or st.get("stopped"):
                    return  # the stop hotkey on the guest's desktop (or a failed writer): collect it now
                status.update(f"recording on the guest: {st.get('events', 0)} events, {st.get('frames', 0)} "
                              f"frames, {st.get('seconds', 0):.0f}s")
                view.update(step=st.get("events", 0), doing=f"recording: {st.get('frames', 0)} frames",
                            outcome="recording", note="stop with the done button")
    finally:
        for s, h in old.items():
            signal.signal(s, h)
