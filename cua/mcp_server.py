"""`cua mcp`: an MCP server (official `mcp` SDK) that lets coding assistants and other agents drive
an environment: observe, act, run a task, search and run skills, record demonstrations.

Each verified skill of `--skills` is its own typed tool (`skill_<name>`), run through the skill
runner with its postcondition. Every environment call runs on one worker thread that owns the
environment (Playwright and Xlib objects are bound to the thread that made them). Over streamable
HTTP the server binds 127.0.0.1, refuses any request without `Authorization: Bearer <token>` and cuts
strangers' idle or slow-header sockets (the guest server's defences, `http_app`).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image

from cua.actions import ActionParseError, parse_action
from cua.agent.computer import skill_tool_name
from cua.agent.loop import run_task
from cua.env import make_env
from cua.env.base import EnvError
from recorder.capture import Recorder
from skills.library import SkillLibrary
from skills.runner import run_skill

_PY_TYPES: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}


class EnvWorker:
    """One thread that creates, uses and closes the environment; calls from any thread are queued."""

    def __init__(self, env_spec: str, env_options: dict[str, Any] | None = None):
        self.env_spec = env_spec
        self.env_options = env_options or {}
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cua-mcp-env")
        self._env: Any = None

    def _get(self) -> Any:
        if self._env is None:
            self._env = make_env(self.env_spec, **self.env_options)
        return self._env

    def call(self, fn: Callable[[Any], Any]) -> Any:
        """Run fn(env) on the env thread and wait for it."""
        return self.pool.submit(lambda: fn(self._get())).result()

    async def acall(self, fn: Callable[[Any], Any]) -> Any:
        return await asyncio.wrap_future(self.pool.submit(lambda: fn(self._get())))

    def close(self) -> None:
        if self._env is not None:
            self.pool.submit(self._env.close).result()
            self._env = None
        self.pool.shutdown(wait=True)


def _png(image: Any) -> Image:
    import io

    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG", compress_level=1)
    return Image(data=buf.getvalue(), format="png")


def _elements(obs: Any, limit: int = 300) -> str:
    rows = [{"id": e.id, "role": e.role, "name": e.name[:100], "value": (e.value or "")[:200],
             "bbox": list(e.bbox), "source": e.source} for e in obs.elements[:limit]]
    return json.dumps({"window_title": obs.window_title, "app": obs.app, "url": obs.url,
                       "size": list(obs.size), "elements": rows})


class CuaMCP:
    """The tools, bound to one environment worker and an optional skill library."""

    def __init__(self, env_spec: str, skills: Path | str | None = None, model: str = "none",
                 out: Path | str = "mcp-runs", env_options: dict[str, Any] | None = None):
        self.worker = EnvWorker(env_spec, env_options)
        self.skills = Path(skills) if skills else None
        self._library: SkillLibrary | None = None  # opened on the env thread (SQLite objects stay on theirs)
        self.model = model
        self.out = Path(out)
        self._recorder: Recorder | None = None
        self._rec_dir: Path | None = None
        self._lock = threading.Lock()
        self.server = MCPServer(name="cua", instructions=(
            "Drive a computer: `observe` to see the screen and its elements, `act` for one action, "
            "`run` for a whole task, and `skill_*` tools for verified skills of this app."))
        for fn in (self.observe, self.act, self.run, self.skills_search, self.record_start, self.record_stop):
            self.server.add_tool(fn, name=fn.__name__, description=inspect.getdoc(fn), structured_output=False)
        if self.skills is not None:
            with SkillLibrary(self.skills) as lib:
                for skill in lib.list(status="verified"):
                    self._add_skill_tool(skill)

    def _lib(self) -> SkillLibrary | None:
        """The skill library, on the env thread only."""
        if self._library is None and self.skills is not None:
            self._library = SkillLibrary(self.skills)
        return self._library

    # -- tools -------------------------------------------------------------------------------
    async def observe(self) -> list[Any]:
        """Screenshot of the screen (PNG) and its elements as JSON (id, role, name, bbox, source)."""
        obs = await self.worker.acall(lambda env: env.observe())
        return [_png(obs.image()), _elements(obs)]

    async def act(self, action: str) -> str:
        """One action in any supported format: e.g. 'click(text="File")', 'hotkey("ctrl","s")',
        '{"kind": "type", "text": "hi"}', pyautogui code or an Anthropic/OpenAI computer action as JSON."""
        try:
            parsed = parse_action(json.loads(action) if action.lstrip().startswith("{") else action)
        except (ActionParseError, json.JSONDecodeError) as e:
            return json.dumps({"ok": False, "error": f"bad action: {e}"})
        try:
            result = await self.worker.acall(lambda env: env.act(parsed))
        except EnvError as e:
            return json.dumps({"ok": False, "error": str(e)})
        return result.model_dump_json()

    async def run(self, task: str, max_steps: int = 30) -> str:
        """Run a natural-language task with the configured model (or skills only); says how it ended.
        With no model, a task outside the known skills is refused at once."""
        out = self.out / time.strftime("%Y%m%d-%H%M%S")
        res = await self.worker.acall(lambda env: run_task(task, env, self.model, self._lib(),
                                                           max_steps=max_steps, out=out, yes=False))
        return json.dumps({"outcome": res.outcome, "message": res.message, "steps": res.steps,
                           "trajectory": str(res.trajectory_dir), "nearest_skills": res.nearest_skills})

    async def skills_search(self, query: str, k: int = 5) -> str:
        """Search the skill library; each hit with its tool name, status and score."""
        if self.skills is None:
            return json.dumps({"error": "no skill library; start `cua mcp` with --skills LIB.db"})
        hits = await self.worker.acall(lambda env: self._lib().search(query, k=k))
        return json.dumps([{"skill": s.name, "tool": skill_tool_name(s.name), "status": s.status,
                            "description": s.description, "score": round(float(score), 4)} for s, score in hits])

    async def record_start(self, out: str, task: str = "") -> str:
        """Start recording a human demonstration (frames, input events, accessibility) into `out`."""
        with self._lock:
            if self._recorder is not None:
                return json.dumps({"ok": False, "error": f"already recording into {self._rec_dir}"})
            try:
                rec = await self.worker.acall(lambda env: Recorder.for_env(env, out, task=task))
                self._recorder, self._rec_dir = rec.start(), Path(out)
            except Exception as e:  # noqa: BLE001 - RecordingError and OS errors go back as the reason
                return json.dumps({"ok": False, "error": str(e)})
        return json.dumps({"ok": True, "dir": out})

    def record_stop(self) -> str:
        """Stop the running recording; returns its directory and statistics."""
        with self._lock:
            if self._recorder is None:
                return json.dumps({"ok": False, "error": "no recording is running; call record_start first"})
            rec, out, self._recorder, self._rec_dir = self._recorder, self._rec_dir, None, None
        return json.dumps({"ok": True, "dir": str(out), "stats": rec.stop()}, default=str)

    # -- skills as typed tools ---------------------------------------------------------------
    def _add_skill_tool(self, skill: Any) -> None:
        name = skill.name

        def run_verified(env: Any, kwargs: dict[str, Any]) -> Any:
            fresh = self._lib().get(name)  # type: ignore[union-attr]
            if fresh is None or fresh.status != "verified":
                return None
            return run_skill(fresh, env, kwargs, self._lib(), relative=True)  # on the caller's screen

        async def call(**kwargs: Any) -> list[Any]:
            res = await self.worker.acall(lambda env: run_verified(env, kwargs))
            if res is None:
                return [json.dumps({"ok": False, "error": f"skill {name!r} is no longer verified; refused"})]
            text = json.dumps({"ok": res.ok, "error": res.error, "skill": name})
            return [text, _png(res.observation.image())] if res.observation is not None else [text]

        params = [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY,
                                    default=inspect.Parameter.empty if p.default is None else p.default,
                                    annotation=_PY_TYPES.get(p.type, str)) for p in skill.parameters]
        call.__signature__ = inspect.Signature(params, return_annotation=list[Any])  # type: ignore[attr-defined]
        call.__annotations__ = {p.name: p.annotation for p in params} | {"return": list[Any]}
        desc = " ".join(x for x in (f"Verified skill of {skill.app}:", skill.description or name,
                                    skill.when_to_use) if x)
        self.server.add_tool(call, name=skill_tool_name(name), description=desc, structured_output=False)

    def close(self) -> None:
        if self._recorder is not None:
            self.record_stop()
        if self._library is not None:
            lib, self._library = self._library, None
            self.worker.pool.submit(lib.close).result()
        self.worker.close()


def http_app(server: CuaMCP, token: str, host: str = "127.0.0.1", connection_options: dict | None = None):
    """The MCP streamable-HTTP app behind the guest server's defences: the bearer token (constant time; wrong
    tokens slowed down, the right one always served), body limits that count real bytes (CL+TE refused), and
    the connection guard (`app.state.connection_guard`, run by `vm.guest.server.server_config`) that cuts
    strangers' idle or slow-header sockets."""
    from types import SimpleNamespace

    from vm.guest.auth import AuthGuard
    from vm.guest.connections import ConnectionGuard
    from vm.guest.middleware import AuthMiddleware, BodyLimitMiddleware

    connections = ConnectionGuard(**(connection_options or {}))
    app = BodyLimitMiddleware(server.server.streamable_http_app(host=host), default=1024 * 1024)
    app = AuthMiddleware(app, guard=AuthGuard(token), connections=connections)
    app.state = SimpleNamespace(connection_guard=connections)
    return app


def serve_http(server: CuaMCP, token: str, host: str = "127.0.0.1", port: int = 8766) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp, guarded and configured as the guest server is."""
    import uvicorn

    from vm.guest.server import server_config

    uvicorn.Server(server_config(http_app(server, token, host), host, port)).run()
