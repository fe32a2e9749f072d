"""Capture a human demonstration on an X11 display: input events, frames, elements, windows.

Threads: one pynput listener whose XRecord context takes keys and pointer together (so events
keep the server's order), a frame thread (mss at `fps` into a ring of recent frames and the
H.264 video, with the active window read before each grab), an element probe (AT-SPI or DOM
snapshots, recorder/probes.py) and an events thread (recorder/events.py) that attaches the
pre-action frame, element and window to each event, masks password input and hands rows to the
store. Times are seconds on one monotonic clock since the start.
"""

from __future__ import annotations

import collections
import itertools
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from PIL import Image

from recorder.events import EventState, WindowProbe
from recorder.privacy import PrivacyLog, blur_regions, scrub_identity
from recorder.reduce import gtk_thresholds
from recorder.store import RecordingError, SessionWriter, VideoWriter

PROBE_READY_S = 30.0
CHANGE_MIN_PX = 1024  # changed pixels of a UI change (menu, dialog); a caret blink or a typed key is less


def changed_box(prev: np.ndarray | None, arr: np.ndarray) -> tuple[int, int, int, int] | None:
    """Where (x, y, w, h) a frame differs from the previous one, when more than CHANGE_MIN_PX differ (on
    a 4 px grid); the whole frame when there is no previous one of its size; None for no UI change."""
    if prev is None or prev.shape != arr.shape:
        return (0, 0, arr.shape[1], arr.shape[0])
    diff = np.any(prev[::4, ::4, :3] != arr[::4, ::4, :3], axis=2)
    if int(np.count_nonzero(diff)) * 16 < CHANGE_MIN_PX:
        return None
    ys, xs = np.nonzero(diff)
    x0, y0 = int(xs.min()) * 4, int(ys.min()) * 4
    return (x0, y0, int(xs.max()) * 4 + 4 - x0, int(ys.max()) * 4 + 4 - y0)


def ui_changed(prev: np.ndarray | None, arr: np.ndarray) -> bool:
    """Whether a frame differs from the previous one by more than CHANGE_MIN_PX (on a 4 px grid)."""
    return changed_box(prev, arr) is not None


class ContextProbe(Protocol):
    """Where an input landed: the element at a point, the focused element (dicts of UIElement fields)."""

    def element_at(self, x: int, y: int) -> dict[str, Any] | None: ...

    def focused(self) -> dict[str, Any] | None: ...


def _grabber(display: str) -> Any:
    """An mss screen grabber bound to `display` (mss >= 10 renamed mss.mss to mss.MSS)."""
    import mss

    return getattr(mss, "MSS", None)(display=display) if hasattr(mss, "MSS") else mss.mss(display=display)


def _check_frames(display: str, tries: int = 3) -> None:
    """One frame can be grabbed from `display`, else RecordingError; a refused or reset connection (a
    server just started, or resetting) is tried again."""
    for attempt in range(tries):
        try:
            with _grabber(display) as grab:
                shot = grab.grab(grab.monitors[0])
            if shot.width * shot.height == 0:
                raise RecordingError(f"display {display!r} shows an empty screen")
            return
        except RecordingError:
            raise
        except Exception as e:  # noqa: BLE001 - any mss failure means: cannot record
            if attempt == tries - 1:
                raise RecordingError(f"cannot capture frames from display {display!r}: {e}") from None
            time.sleep(0.2 * (attempt + 1))


def parse_hotkey(spec: str) -> tuple[frozenset[str], str]:
    """'ctrl+alt+q' -> ({'ctrl', 'alt'}, 'q')."""
    from cua.actions import ActionParseError, normalize_key

    try:
        parts = [normalize_key(p.strip()) for p in spec.split("+") if p.strip()]
    except ActionParseError as e:  # a request's bad hotkey is refused like any other bad recording option
        raise RecordingError(f"hotkey {spec!r}: {e}") from None
    if not parts:
        raise RecordingError(f"hotkey {spec!r} is empty; write it like ctrl+alt+q")
    return frozenset(parts[:-1]), parts[-1].lower()


class Recorder:
    """Record one session into `out` from X display `display` (e.g. ':7')."""

    def __init__(
        self,
        out: Path | str,
        display: str,
        *,
        task: str = "",
        env_spec: str = "",
        fps: float = 5.0,
        probe: ContextProbe | None = None,
        x_env: dict[str, str] | None = None,
        stop_hotkey: str = "ctrl+alt+q",
        pause_hotkey: str = "ctrl+alt+p",
        scrub: bool = False,
        ring: int = 24,
        on_status: Callable[[str], None] | None = None,
        mask_unknown: bool = True,
    ):
        if not (0.2 <= fps <= 30):
            raise RecordingError(f"--fps {fps} is out of range; use 0.2..30 frames per second")
        self.out, self.display, self.task, self.env_spec, self.fps = Path(out), display, task, env_spec, fps
        self.probe, self.scrub, self.mask_unknown = probe, scrub, mask_unknown
        self.privacy = PrivacyLog(mask_unknown, scrub, type(probe).__name__ if probe is not None else None)
        self.x_env = {k: v for k, v in (x_env or {}).items() if k in ("DISPLAY", "XAUTHORITY")}
        self.x_env_all = dict(x_env or {})
        self.stop_combo, self.pause_combo = parse_hotkey(stop_hotkey), parse_hotkey(pause_hotkey)
        self.hotkeys = {"stop": stop_hotkey, "pause": pause_hotkey}
        self.on_status = on_status or (lambda s: None)
        self.ring: collections.deque = collections.deque(maxlen=ring)
        self.ring_lock = threading.Lock()
        self.sensitive: list[tuple[int, int, int, int]] = []
        self.raw: queue.Queue = queue.Queue()
        self.stopped = threading.Event()
        self.first_frame = threading.Event()
        self.paused = threading.Event()
        self._counter = itertools.count()
        self._threads: list[threading.Thread] = []
        self._listeners: list[Any] = []
        self.writer: SessionWriter | None = None
        self.video: VideoWriter | None = None
        self.t0 = 0.0
        self.frame_seq = 0
        self.errors: list[str] = []
        self.stats: dict[str, Any] = {}

    @classmethod
    def for_env(cls, env: Any, out: Path | str, **options: Any) -> Recorder:
        """A recorder on the X display of a SandboxEnv / DesktopEnv, with its AT-SPI probe (not started)."""
        from recorder.probes import A11yProbe, display_of

        display, x_env = display_of(env)
        if not display:
            raise RecordingError(f"{type(env).__name__} has no X display to record; use a sandbox or desktop")
        options.setdefault("probe", A11yProbe(x_env or None, tuple(getattr(env, "size", (1280, 800)))))
        spec = getattr(env, "spec", "")
        options.setdefault("env_spec", spec() if callable(spec) else str(spec))
        return cls(out, display, x_env=x_env, **options)

    def now(self) -> float:
        return time.monotonic() - self.t0

    # ---- start / stop -------------------------------------------------------------------
    def start(self) -> Recorder:
        """Check that input and frames can be captured, then start; else raise RecordingError."""
        try:
            import Xlib.display

            d = Xlib.display.Display(self.display)
            has_record = d.has_extension("RECORD")
            self.size = (d.screen().width_in_pixels, d.screen().height_in_pixels)
        except Exception as e:  # noqa: BLE001 - any Xlib failure means: cannot record
            raise RecordingError(
                f"cannot open X display {self.display!r} ({e}); start the sandbox/desktop first "
                "or pass the right --env"
            ) from None
        try:  # kept open meanwhile: a server without -noreset resets when its last client leaves
            if not has_record:
                raise RecordingError(
                    f"X display {self.display} lacks the RECORD extension, so input cannot be captured; "
                    "start Xvfb/Xorg with +extension RECORD"
                )
            _check_frames(self.display)
        finally:
            d.close()
        self._turn_accessibility_on()
        self.t0 = time.monotonic()
        self.writer = SessionWriter(
            self.out,
            scrub_identity(
                {
                    "task": self.task,
                    "env": self.env_spec,
                    "screen_size": list(self.size),
                    "fps": self.fps,
                    "started": time.time(),
                    "hotkeys": self.hotkeys,
                    "video": "video.mp4",
                    "privacy": {"state": "recording: filled in from what happened at stop",
                                "mask_unknown": self.mask_unknown, "scrub": self.scrub},
                    "thresholds": gtk_thresholds(self.x_env_all.get("XDG_CONFIG_HOME")),
                }
            ),
            on_error=self._writer_failed,
        )
        self.video = VideoWriter(self.out / "video.mp4", self.size, self.fps)
        self._spawn("recorder-frames", self._frame_loop)
        if not self.first_frame.wait(15) or self.errors:  # every event must have a frame before it
            self._teardown()
            raise RecordingError(f"no frame captured from display {self.display}: {self.errors or 'timeout'}")
        try:
            self._start_listeners()
        except Exception as e:  # noqa: BLE001 - whatever pynput raises, refuse to start and say why
            self._teardown()
            raise RecordingError(f"cannot capture input on display {self.display}: {e}") from None
        if hasattr(self.probe, "start"):
            self.probe.start(self.now)
            ready = not hasattr(self.probe, "wait_ready") or self.probe.wait_ready(PROBE_READY_S)
            self.privacy.probe_ready = bool(ready)
            if not ready:
                why = getattr(self.probe, "error", None) or "no snapshot yet"
                self.privacy.notes.append(f"element probe not ready: {why}")
                self.on_status(f"warning: element lookups are not available ({why}); typed keys are "
                               + ("masked" if self.mask_unknown else "stored UNMASKED (--no-mask-unknown)"))
        else:
            self.privacy.probe_ready = False
            self.privacy.notes.append("no element probe: no window can be classified")
        self._spawn("recorder-events", self._event_loop)
        self.on_status(f"recording on DISPLAY={self.display} into {self.out}")
        return self

    def _turn_accessibility_on(self) -> None:
        """AT-SPI probes need org.a11y.Status IsEnabled; apps started while it was off stay unseen."""
        if type(self.probe).__name__ != "A11yProbe":
            return
        from recorder.a11y_status import ensure_enabled, open_apps

        before, err = ensure_enabled(self.x_env_all or None)
        if err:
            self.privacy.notes.append(f"accessibility status unknown: {err}")
        elif before is False:
            apps = open_apps(self.display)
            note = ("accessibility was off and is now on; restart these applications so their fields can be "
                    f"classified (until then their typed keys count as unclassified): {', '.join(apps) or 'none'}")
            self.privacy.notes.append(note)
            self.on_status("warning: " + note)

    def _writer_failed(self, error: BaseException) -> None:
        """The events writer died (disk full, SQLite error): stop the recording now, loudly."""
        self.errors.append(f"writer: {type(error).__name__}: {error}")
        self.on_status(f"error: the recording writer failed ({error}); stopping")
        self.stopped.set()

    def _spawn(self, name: str, fn: Callable[[], None]) -> None:
        th = threading.Thread(target=fn, name=name, daemon=True)
        th.start()
        self._threads.append(th)

    def _start_listeners(self) -> None:
        saved = {k: os.environ.get(k) for k in ("DISPLAY", "XAUTHORITY")}
        os.environ.update({"DISPLAY": self.display, **self.x_env})
        try:
            from pynput import keyboard
            from Xlib import X

            rec = self
            live = threading.Event()
            buttons = {1: "left", 2: "middle", 3: "right"}
            scrolls = {4: (0, -1), 5: (0, 1), 6: (-1, 0), 7: (1, 0)}  # ours: dy > 0 = down

            class _Input(keyboard.Listener):
                """One XRecord context for keys and pointer: the server's own event order, no merging."""

                _EVENTS = (X.KeyPress, X.MotionNotify)  # a range: KeyPress..MotionNotify

                def _handle_message(self, display, event, injected):
                    self.xtime = event.time
                    if not live.is_set():  # before start() returns: only watch for the liveness nudge
                        if event.type == X.MotionNotify:
                            live.set()
                        return
                    if event.type in (X.KeyPress, X.KeyRelease):
                        super()._handle_message(display, event, injected)
                        return
                    x, y = int(event.root_x), int(event.root_y)
                    if event.type == X.MotionNotify:
                        put("move", x=x, y=y)
                    elif event.detail in scrolls:
                        if event.type == X.ButtonPress:
                            dx, dy = scrolls[event.detail]
                            put("scroll", x=x, y=y, dx=dx, dy=dy)
                    elif event.type in (X.ButtonPress, X.ButtonRelease):
                        put(
                            "press" if event.type == X.ButtonPress else "release",
                            x=x,
                            y=y,
                            button=buttons.get(event.detail, f"button{event.detail}"),
                        )

            def put(kind: str, **kw: Any) -> None:
                rec.raw.put((getattr(lst, "xtime", 0), next(rec._counter), rec.now(), kind, kw))

            lst = _Input(
                on_press=lambda key, *a: put("key_down", key=key),
                on_release=lambda key, *a: put("key_up", key=key),
            )
            for one in (lst,):
                one.daemon = True
                one.start()
                self._listeners.append(one)
                one.wait()
                if not one.running:
                    raise RecordingError("the pynput listener stopped at start")
            self._await_live_input(live)
        finally:
            for key, val in saved.items():
                if val is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = val

    def _await_live_input(self, live: threading.Event, timeout: float = 10.0) -> None:
        """pynput marks its listener ready just before it enables the XRecord context, so the first
        input could be lost. Nudge the pointer by one pixel (back and forth) until the listener sees
        a motion: only then is capture live and start() may return."""
        import Xlib.display
        from Xlib import X
        from Xlib.ext import xtest

        d = Xlib.display.Display(self.display)
        try:
            deadline, step = time.monotonic() + timeout, 1
            while not live.wait(0.05):
                if time.monotonic() > deadline:
                    raise RecordingError(f"input capture on display {self.display} did not start "
                                         f"within {timeout:.0f}s (no XRecord events)")
                pos = d.screen().root.query_pointer()
                xtest.fake_input(d, X.MotionNotify, x=pos.root_x + step, y=pos.root_y)
                d.sync()
                step = -step
        finally:
            d.close()

    def _unblock_listeners(self) -> None:
        """pynput's record thread blocks on the server; disable its context from a fresh connection."""
        try:
            import Xlib.display

            d = Xlib.display.Display(self.display)
            d.set_error_handler(lambda *a: None)  # the context may already be gone: that is fine
            for lst in self._listeners:
                ctx = getattr(lst, "_context", None)
                if ctx is not None:
                    d.record_disable_context(ctx)
            d.flush()
            d.sync()
            d.close()
        except Exception:  # noqa: BLE001, S110 - the context may be gone: nothing to unblock
            pass

    def wait(self, duration: float | None = None) -> None:
        """Block until the stop hotkey, stop(), or `duration` seconds."""
        self.stopped.wait(duration)

    def pause(self) -> None:
        self.paused.set()
        self.raw.put((0, next(self._counter), self.now(), "pause", {"marker": True}))

    def resume(self) -> None:
        self.paused.clear()
        self.raw.put((0, next(self._counter), self.now(), "resume", {"marker": True}))

    def stop(self) -> dict[str, Any]:
        """Stop capture, drain everything to disk, set the complete flag; returns the stats."""
        t_stop = time.monotonic()
        self.stopped.set()
        self._teardown(final=True)
        assert self.writer is not None
        self.stats["stop_to_complete_s"] = round(time.monotonic() - t_stop, 4)
        self.writer.manifest["privacy"] = scrub_identity(self.privacy.report())
        self.writer.close(duration=round(self.now(), 3), **self.stats, errors=self.errors[:20])
        if self.writer.error is not None:
            raise RecordingError(f"the recording in {self.out} failed: {self.writer.error}; what was written "
                                 "before the failure is readable, and the manifest says complete: false")
        return {**self.writer.counts, **self.stats}

    def _final_frame(self) -> None:
        """One last frame and the active window at stop: the end state replay and skills compare against."""
        try:
            with _grabber(self.display) as grab:
                arr = np.asarray(grab.grab(grab.monitors[0]))
        except Exception as e:  # noqa: BLE001 - no final frame; the recording stays valid
            self.errors.append(f"final frame: {e}")
            return
        t = self.now()
        seq = self.frame_seq
        self.frame_seq += 1
        if self.sensitive:
            img = blur_regions(Image.fromarray(arr[:, :, 2::-1]), list(self.sensitive))
            arr = np.dstack([np.asarray(img)[:, :, ::-1], arr[:, :, 3:]])
        self.video.add(arr, t)
        self.writer.frame(seq, t)
        self.writer.keyframe(
            seq,
            Image.frombuffer(
                "RGB", (arr.shape[1], arr.shape[0]), np.ascontiguousarray(arr).tobytes(), "raw", "BGRX"
            ),
        )
        window = {"title": "", "app": ""}
        try:
            wp = WindowProbe(self.display)
            window = wp.active()
            wp.close()
        except Exception:  # noqa: BLE001, S110 - a title is optional at the end
            pass
        self.writer.event({"t": t, "kind": "end", "frame": seq, "data": scrub_identity({"window": window})})

    def _teardown(self, final: bool = False) -> None:
        self.stopped.set()
        # Disabling the record context first makes the server deliver every event it took before
        # the stop, then end the listener's loop; pynput's own stop() would drop that tail.
        self._unblock_listeners()
        for lst in self._listeners:
            lst.join(5)
            if lst.is_alive():
                try:
                    lst.stop()
                except Exception:  # noqa: BLE001, S110 - best effort, the thread is a daemon
                    pass
                lst.join(5)
        self.raw.put(None)
        for th in self._threads:
            th.join(30)
        if hasattr(self.probe, "stop"):
            self.probe.stop()
        if final and self.video is not None and self.writer is not None:
            self._final_frame()
        if self.video is not None:
            self.video.close()
            self.video = None

    def __enter__(self) -> Recorder:  # noqa: PYI034 - start() returns self
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.writer is not None and not self.writer.manifest.get("complete"):
            self.stop()

    # ---- frames ---------------------------------------------------------------------------
    def _frame_loop(self) -> None:
        period = 1.0 / self.fps
        try:
            win: WindowProbe | None = WindowProbe(self.display)
        except Exception:  # noqa: BLE001 - frames without window titles beat no frames
            win = None
        note_frame = getattr(self.probe, "note_frame", None)  # the probe looks again once the UI settles
        prev: tuple[np.ndarray | None, dict | None] = (None, None)
        with _grabber(self.display) as grab:
            mon = grab.monitors[0]
            nxt = time.monotonic()
            while not self.stopped.is_set():
                if not self.paused.is_set():
                    window = win.active() if win is not None else None  # read before the grab
                    try:
                        arr = np.asarray(grab.grab(mon))  # BGRA, H x W x 4
                    except Exception as e:  # noqa: BLE001 - a lost frame grab ends frames, reported
                        self.errors.append(f"frame: {e}")
                        break
                    t = self.now()
                    if note_frame is not None:
                        note_frame(t, changed_box(prev[0] if window == prev[1] else None, arr))  # a new window: all of it
                        prev = (arr, window)
                    seq = self.frame_seq
                    if self.sensitive:
                        img = blur_regions(Image.fromarray(arr[:, :, 2::-1]), list(self.sensitive))
                        arr = np.dstack([np.asarray(img)[:, :, ::-1], arr[:, :, 3:]])
                        self.privacy.blurred()
                    with self.ring_lock:
                        self.ring.append((seq, t, arr, window))
                    self.video.add(arr, t)
                    self.writer.frame(seq, t)
                    self.frame_seq += 1
                    self.first_frame.set()
                nxt += period
                self.stopped.wait(max(0.0, nxt - time.monotonic()))
                if time.monotonic() - nxt > period:  # fell behind: skip, do not burst
                    nxt = time.monotonic()
        if win is not None:
            win.close()

    def _frame_before(self, t: float) -> tuple[int, np.ndarray, dict | None] | None:
        """The latest frame taken before `t` (seq, BGRA pixels, active window then)."""
        with self.ring_lock:
            best = None
            for seq, ft, arr, window in self.ring:
                if ft <= t:
                    best = (seq, arr, window)
            if best is None and self.ring:
                seq, _, arr, window = self.ring[0]
                best = (seq, arr, window)
            return best

    # ---- events ---------------------------------------------------------------------------
    def _event_loop(self) -> None:
        """Process raw events in arrival order (the X server's order: one record context)."""
        state = EventState(self)
        while True:
            item = self.raw.get()
            if item is None:
                break
            xtime, _, t, kind, kw = item
            try:
                state.handle(xtime, t, kind, kw)
            except Exception as e:  # noqa: BLE001 - one bad event must not end the recording
                self.errors.append(f"{kind}: {e}")
        state.close()
