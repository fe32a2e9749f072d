"""OSWorld episodes on the guest: set-up and evaluation run where the desktop is, the agent acts over /act.

An OSWorld task's set-up runs commands, writes the user's files, starts Chrome with a debugging port
and reads it back; its evaluator reads files, windows and the accessibility tree. All of that needs
the desktop's machine, so the guest runs the same `OSWorldEpisode` as a local sandbox does, on its own
env, and the host only sends the task and its assets:

    PUT  /osworld/assets/{name}   one file of the asset cache (the name `cua osworld assets` gives it)
    POST /osworld/setup           {task, online, strict} -> {status: ok|skipped, instruction, reason}
    POST /osworld/score           {declared_infeasible}   -> {score, details}
    POST /osworld/close           ends the episode (kills what its set-up launched)

Every route needs `--allow-exec`: task files are the user's own input, and they run commands.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import Body, FastAPI, HTTPException, Request
from fastapi import Path as FastPath
from pydantic import BaseModel

from cua.eval.osworld.episode import OSWorldEpisode
from cua.eval.osworld.errors import Skip, StepError

ASSET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,250}$")
DEFAULT_ASSETS = Path("~/.cache/cua/osworld-assets")


class SetupRequest(BaseModel):
    task: dict[str, Any]
    online: bool = False
    strict: bool = False


class SetupResult(BaseModel):
    status: str
    instruction: str = ""
    reason: str = ""


class ScoreRequest(BaseModel):
    declared_infeasible: bool = False


class ScoreResult(BaseModel):
    score: float
    details: list[str]


class AssetWritten(BaseModel):
    name: str
    bytes: int


def add_osworld_routes(app: FastAPI, on_env: Callable[[Callable[[Any], Any]], Any], allow_exec: bool,
                       assets: Path | None = None) -> None:
    """The /osworld routes; `on_env(fn)` runs `fn(env)` on the guest's env thread (errors as HTTP errors)."""
    folder = (assets or DEFAULT_ASSETS).expanduser()
    current: dict[str, OSWorldEpisode] = {}

    def need_exec() -> None:
        if not allow_exec:
            raise HTTPException(403, "OSWorld tasks run commands on the guest: start it with --allow-exec "
                                "(cua serve --allow-exec)")

    def close_current() -> None:
        ep = current.pop("episode", None)
        if ep is not None:
            ep.close()

    @app.put("/osworld/assets/{name}", response_model=AssetWritten, summary="Store one OSWorld asset file",
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}})
    async def osworld_asset(request: Request, name: Annotated[str, FastPath(max_length=251)]) -> AssetWritten:
        need_exec()
        if not ASSET_NAME.match(name):
            raise HTTPException(400, f"asset name {name!r} is not a cache file name (letters, digits, . _ -)")
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".upload-")
        size = 0
        try:
            with os.fdopen(fd, "wb") as f:  # streamed: the body-limit middleware stops an oversized upload
                async for chunk in request.stream():
                    f.write(chunk)
                    size += len(chunk)
            os.replace(tmp, folder / name)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return AssetWritten(name=name, bytes=size)

    @app.post("/osworld/setup", response_model=SetupResult, summary="Set up an OSWorld task on this desktop")
    def osworld_setup(req: Annotated[SetupRequest, Body()]) -> SetupResult:
        need_exec()

        def run(env: Any) -> SetupResult:
            close_current()
            ep = OSWorldEpisode(req.task, env, str(folder), req.online, req.strict)
            current["episode"] = ep
            try:
                return SetupResult(status="ok", instruction=ep.setup())
            except Skip as e:
                close_current()
                return SetupResult(status="skipped", reason=str(e))
            except StepError as e:
                raise HTTPException(409, f"set-up failed: {e}") from None

        return on_env(run)

    @app.post("/osworld/score", response_model=ScoreResult, summary="Run the task's evaluator; its score")
    def osworld_score(req: Annotated[ScoreRequest, Body()]) -> ScoreResult:
        need_exec()

        def run(env: Any) -> ScoreResult:
            ep = current.get("episode")
            if ep is None:
                raise HTTPException(409, "no OSWorld task is set up on this guest: POST /osworld/setup first")
            details: list[str] = []
            try:
                value = ep.score(req.declared_infeasible, details)
            except StepError as e:
                raise HTTPException(409, f"evaluation failed: {e}") from None
            return ScoreResult(score=value, details=details)

        return on_env(run)

    @app.post("/osworld/close", summary="End the OSWorld episode (stops what its set-up launched)")
    def osworld_close() -> dict:
        need_exec()
        on_env(lambda env: close_current())
        return {"closed": True}
