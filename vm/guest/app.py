"""The guest server: one environment behind an authenticated HTTP API (FastAPI app factory)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
import time
from pathlib import Path
from typing import Annotated, Any

from fastapi import Body, FastAPI, HTTPException, Query, Request
from fastapi import Path as FastPath
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel

from cua.actions import Action
from cua.env.base import ActionResult, EnvError, Environment
from cua.env.session_archive import tar_stream
from cua.perception.elements import UIElement
from vm.guest.auth import AuthGuard
from vm.guest.capture import EncodedScreens
from vm.guest.connections import ConnectionGuard
from vm.guest.exec import ExecError, ExecRequest, ExecResult, run_argv
from vm.guest.files import FileAccessError, FileRoot
from vm.guest.middleware import AuthMiddleware, BodyLimitMiddleware
from vm.guest.osworld import add_osworld_routes
from vm.guest.recording import SessionError
from vm.guest.statuses import document_statuses
from vm.guest.vnc import add_vnc_route
from cua.env.wire import MEDIA_TYPES, ImageFormat, ObservationWire, observation_to_wire

API_VERSION = "1"


@dataclass
class GuestConfig:
    """Everything the server needs; `env_factory` runs once, on the env thread, at first use."""

    token: str
    env_factory: Callable[[], Environment]
    env_spec: str = "desktop"
    root: Path | None = None
    allow_exec: bool = False
    max_body: int = 1024 * 1024
    max_file: int = 64 * 1024 * 1024
    guard_options: dict[str, Any] = field(default_factory=dict)
    connection_options: dict[str, Any] = field(default_factory=dict)
    recorder: Any = None
    call_timeout: float = 300.0
    osworld_assets: Path | None = None  # where PUT /osworld/assets stores files (default ~/.cache/cua/osworld-assets)


class GuestState:
    """The one environment, driven from one worker thread (Playwright, AT-SPI and X input are thread-bound)."""

    def __init__(self, cfg: GuestConfig):
        self.cfg = cfg
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cua-guest-env")
        self._env: Environment | None = None
        self.files = FileRoot(cfg.root) if cfg.root is not None else None
        self._generation = 0  # bumped by cancel(): calls of an older generation stop waiting / never start
        self._busy = 0

    def call(self, fn: Callable[[Environment], Any]) -> Any:
        """Run `fn(env)` on the worker thread (creating the env on first use) and return its result."""
        gen = self._generation

        def run() -> Any:
            if self._generation != gen:
                raise Cancelled()
            env = self._get()
            clear = getattr(env, "clear_cancel", None)
            if callable(clear):  # re-arm, then look again: a cancel from here on reaches this call
                clear()
                if self._generation != gen:
                    raise Cancelled()
            return fn(env)

        future = self._worker.submit(run)
        deadline = time.monotonic() + self.cfg.call_timeout
        self._busy += 1
        try:
            while True:
                try:
                    return future.result(timeout=0.1)
                except FutureTimeout:
                    if self._generation != gen:
                        raise Cancelled() from None
                    if time.monotonic() > deadline:
                        raise EnvError(f"the environment did not answer within {self.cfg.call_timeout:.0f} s; "
                                       "it may be hung: restart the guest") from None
        finally:
            self._busy -= 1

    def cancel(self) -> bool:
        """Stop the action in progress and drop queued ones; True if one was in progress.

        Its caller stops waiting at once. A backend with a `cancel()` method (the X11 desktops: typing, drags,
        scrolls and waits stop between two small steps) is told to stop too; one without finishes its current
        step in the background (the next call waits for it)."""
        busy = self._busy > 0
        self._generation += 1
        hook = getattr(self._env, "cancel", None)
        if busy and callable(hook):
            hook()
        return busy

    def _get(self) -> Environment:
        if self._env is None:
            self._env = self.cfg.env_factory()
        return self._env

    def env(self) -> Environment:
        return self.call(lambda env: env)

    def current(self) -> Environment | None:
        """The environment if it has been started, without starting it."""
        return self._env

    def close(self) -> None:
        def shut() -> None:
            try:
                if self.cfg.recorder is not None:
                    self.cfg.recorder.close()
            finally:  # the desktop goes away even if the recorder could not stop cleanly
                if self._env is not None:
                    env, self._env = self._env, None
                    env.close()

        self._worker.submit(shut).result()
        self._worker.shutdown(wait=True)


class Cancelled(EnvError):
    def __init__(self) -> None:
        super().__init__("cancelled by POST /cancel; the desktop may be mid-action: observe before acting again")


class CancelResult(BaseModel):
    cancelled: bool


class Health(BaseModel):
    ok: bool
    api: str
    env: str
    exec: bool
    files: bool
    recording: bool
    size: tuple[int, int] | None = None


class FileWritten(BaseModel):
    path: str
    bytes: int


class FileEntry(BaseModel):
    name: str
    type: str
    size: int
    mtime: float


class A11yTree(BaseModel):
    elements: list[UIElement]
    window_title: str = ""
    app: str = ""
    partial: bool = False
    error: str | None = None


class WindowInfo(BaseModel):
    id: int
    title: str
    app: str
    bbox: tuple[int, int, int, int]
    active: bool


def exec_env(env: Any) -> dict[str, str]:
    """What /exec programs see: the allow-listed environment (never the guest's token or keys), HOME, and the
    display and buses of the served desktop."""
    import os

    from cua.env.xauth import allowed_env

    out = {**allowed_env(), **({"HOME": os.environ["HOME"]} if "HOME" in os.environ else {})}
    desk = getattr(env, "env", None)
    source = desk if isinstance(desk, dict) else os.environ
    for k in ("DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS", "XDG_RUNTIME_DIR"):
        if source.get(k):
            out[k] = source[k]
    return out


def _env_call(state: GuestState, fn: Callable[[Environment], Any]) -> Any:
    """Run `fn(env)` on the env thread; EnvError -> 409 with its message, anything else -> 503."""
    try:
        return state.call(fn)
    except EnvError as e:
        raise HTTPException(409, f"environment error: {e}") from None
    except HTTPException:
        raise
    except Exception as e:  # noqa: BLE001 - a broken backend must not look like a bug in the request
        raise HTTPException(503, f"environment failed: {type(e).__name__}: {e}") from None


def create_app(cfg: GuestConfig) -> FastAPI:
    """Build the guest app; all routes (and the OpenAPI schema) sit behind the bearer token."""
    state = GuestState(cfg)

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        yield
        state.close()

    app = FastAPI(lifespan=lifespan, title="cua guest", version=API_VERSION, docs_url=None, redoc_url=None, debug=False,
                  description="Screen, input, files and (opt-in) exec of one desktop. Bearer token required.")
    app.state.guest = state
    screens = EncodedScreens()

    def files() -> FileRoot:
        if state.files is None:
            raise HTTPException(403, "file access is off; start the guest with --root DIR to serve a directory")
        return state.files

    def file_call(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except FileAccessError as e:
            raise HTTPException(e.status, str(e)) from None

    @app.get("/health", response_model=Health, summary="Liveness and what this guest allows")
    def health() -> Health:
        size = getattr(state.current(), "size", None)  # never starts the env: health stays cheap
        return Health(ok=True, api=API_VERSION, env=cfg.env_spec, exec=cfg.allow_exec,
                      files=state.files is not None, recording=cfg.recorder is not None,
                      size=tuple(size) if isinstance(size, (tuple, list)) and len(size) == 2 else None)

    @app.get("/screenshot", summary="The screen as PNG or JPEG",
             responses={200: {"content": {"image/png": {}, "image/jpeg": {}}}})
    def screenshot(fmt: Annotated[ImageFormat, Query(alias="format")] = "png",
                   scale: Annotated[float, Query(gt=0, le=1)] = 1.0,
                   quality: Annotated[int, Query(ge=1, le=100)] = 85,
                   reuse: Annotated[bool, Query(description="Reuse the last encoding if no pixel changed.")] = True,
                   ) -> Response:
        data = _env_call(state, lambda env: screens.get(env, fmt, quality, scale, reuse))
        return Response(data, media_type=MEDIA_TYPES[fmt])

    @app.get("/observe", response_model=ObservationWire, summary="Elements, window and (optionally) screenshot")
    def observe(screenshot: bool = True, fmt: Annotated[ImageFormat, Query(alias="format")] = "png",
                quality: Annotated[int, Query(ge=1, le=100)] = 85) -> ObservationWire:
        obs = _env_call(state, lambda env: env.observe())
        return observation_to_wire(obs, fmt if screenshot else None, quality)

    @app.post("/reset", response_model=ObservationWire, summary="Reset the environment to its start state")
    def reset(screenshot: bool = True, fmt: Annotated[ImageFormat, Query(alias="format")] = "png") -> ObservationWire:
        obs = _env_call(state, lambda env: env.reset())
        return observation_to_wire(obs, fmt if screenshot else None)

    @app.post("/act", response_model=ActionResult, summary="Run one typed action")
    def act(action: Annotated[Action, Body()]) -> ActionResult:
        return _env_call(state, lambda env: env.act(action))  # a point off the screen is a failed result

    @app.post("/cancel", response_model=CancelResult, summary="Stop the action in progress (its caller gets 409)")
    def cancel() -> CancelResult:
        return CancelResult(cancelled=state.cancel())

    @app.get("/a11y", response_model=A11yTree, summary="The accessibility (AT-SPI) elements of the screen")
    def a11y() -> A11yTree:
        def tree(env: Environment) -> A11yTree:
            reader = getattr(env, "reader", None)
            if callable(reader):
                snap = reader().snapshot(timeout=getattr(env, "a11y_timeout", 2.0))
                return A11yTree(elements=snap.elements, window_title=snap.window_title, app=snap.app,
                                partial=snap.partial, error=snap.error)
            obs = env.observe()
            return A11yTree(elements=[e for e in obs.elements if e.source == "a11y"],
                            window_title=obs.window_title, app=obs.app)

        return _env_call(state, tree)

    @app.get("/windows", response_model=list[WindowInfo], summary="Top-level windows of the display")
    def windows() -> list[WindowInfo]:
        from vm.guest.windows import display_of, list_windows

        def get(env: Environment) -> list[dict]:
            disp = display_of(env)
            if not disp:
                raise HTTPException(409, "this environment has no X display to list windows of")
            return list_windows(disp)

        return [WindowInfo(**w) for w in _env_call(state, get)]

    @app.get("/files", summary="Read a file under the root", responses={200: {"content": {"application/octet-stream": {}}}})
    def read_file(path: Annotated[str, Query(max_length=4096)]) -> Response:
        data = file_call(lambda: files().read(path))
        return Response(data, media_type="application/octet-stream")

    @app.put("/files", response_model=FileWritten, summary="Write a file under the root (raw body)",
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}})
    async def write_file(request: Request, path: Annotated[str, Query(max_length=4096)],
                         parents: bool = False) -> FileWritten:
        writer = file_call(lambda: files().writer(path, parents=parents))
        try:  # streamed to a temporary file: the body-limit middleware stops an oversized upload mid-way
            async for chunk in request.stream():
                if chunk:
                    writer.write(chunk)
            return FileWritten(path=path, bytes=file_call(writer.commit))
        finally:
            writer.abort()

    @app.get("/files/list", response_model=list[FileEntry], summary="List a directory under the root")
    def list_files(path: Annotated[str, Query(max_length=4096)] = "") -> list[FileEntry]:
        return [FileEntry(**e) for e in file_call(lambda: files().list(path))]

    @app.post("/exec", response_model=ExecResult, summary="Run a program (argument list; off by default)")
    def exec_(req: ExecRequest) -> ExecResult:
        if not cfg.allow_exec:
            raise HTTPException(403, "exec is off; start the guest with --allow-exec to enable it")
        cwd = str(state.files.root) if state.files is not None else str(Path.home())
        try:
            return run_argv(req, cwd, exec_env(state.current()))
        except ExecError as e:
            raise HTTPException(400, str(e)) from None

    @app.post("/recording/start", summary="Start recording a demonstration")
    def recording_start(task: Annotated[str, Query(max_length=2000)] = "",
                        fps: Annotated[float, Query(ge=0.2, le=30)] = 5.0,
                        stop_hotkey: Annotated[str, Query(max_length=40)] = "ctrl+alt+q",
                        pause_hotkey: Annotated[str, Query(max_length=40)] = "ctrl+alt+p",
                        scrub: bool = False, mask_unknown: bool = True) -> dict:
        rec = _recorder()
        opts = {"fps": fps, "stop_hotkey": stop_hotkey, "pause_hotkey": pause_hotkey, "scrub": scrub,
                "mask_unknown": mask_unknown}
        return _env_call(state, lambda env: rec.start(env, task, **opts))

    @app.get("/recording", summary="Whether a recording runs, its counts, and whether it stopped by itself")
    def recording_status() -> dict:
        return _recorder().status()

    @app.get("/recording/{session}/archive", summary="A finished recording as a tar, streamed",
             responses={200: {"content": {"application/x-tar": {}}}})
    def recording_archive(session: Annotated[str, FastPath(max_length=200)]) -> StreamingResponse:
        try:
            folder = _recorder().session_dir(session)
        except SessionError as e:
            raise HTTPException(e.status, str(e)) from None
        return StreamingResponse(tar_stream(folder), media_type="application/x-tar",
                                 headers={"Content-Disposition": f'attachment; filename="{folder.name}.tar"'})

    @app.post("/recording/stop", summary="Stop recording; returns where it was written")
    def recording_stop() -> dict:
        rec = _recorder()
        return _env_call(state, lambda env: rec.stop())

    def _recorder():
        if cfg.recorder is None:
            raise HTTPException(409, "recording is off on this guest (`cua serve --no-recordings`); restart it "
                                "without --no-recordings, or with --recordings DIR")
        return cfg.recorder

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:  # never leak a traceback
        return JSONResponse({"detail": f"internal error: {type(exc).__name__}"}, status_code=500)

    add_osworld_routes(app, lambda fn: _env_call(state, fn), cfg.allow_exec, cfg.osworld_assets)
    add_vnc_route(app, state.env)  # WebSocket /vnc: the live view of this desktop (behind the token too)
    document_statuses(app)
    guard = AuthGuard(cfg.token, **cfg.guard_options)
    app.add_middleware(BodyLimitMiddleware, default=cfg.max_body,
                       per_path={"/files": cfg.max_file, "/osworld/assets/": cfg.max_file})
    connections = ConnectionGuard(**cfg.connection_options)
    app.add_middleware(AuthMiddleware, guard=guard, connections=connections)
    app.state.auth_guard = guard
    app.state.connection_guard = connections
    return app
