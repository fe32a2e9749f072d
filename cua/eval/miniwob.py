"""MiniWoB++ tasks from the `miniwob` PyPI package, run in cua's browser env.

The package's task pages are served from a local HTTP server on 127.0.0.1 (one per process,
started lazily in a daemon thread). An episode starts the way the package's own selenium
environment starts it (`Math.seedrandom(seed)`, `core.setDataMode(mode)`,
`core.startEpisodeReal()`, then wait for `WOB_TASK_READY`); the instruction is
`core.getUtterance()` and the reward is the page's own (`WOB_RAW_REWARD_GLOBAL` with the episode
limit lifted, the default; `WOB_REWARD_GLOBAL` with the page's own limit).

Example:
    with make_env("browser:about:blank") as env:
        task = MiniWoBTask("click-button", seed=3)
        instruction = task.start(env)        # 'Click on the "ok" button.'
        ...                                  # act
        task.reward(env), task.done(env)
"""

from __future__ import annotations

import functools
import json
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from cua.env.base import EnvError

_SERVER: ThreadingHTTPServer | None = None
_LOCK = threading.Lock()
DEFAULT_TIME_LIMIT_S = 24 * 3600.0  # the page's 10 s default would expire during slow agent steps


def html_dir() -> Path:
    """The `html/` folder of the installed miniwob package."""
    try:
        import miniwob
    except ImportError:
        raise EnvError("the `miniwob` package is not installed: `pip install miniwob`") from None
    d = Path(miniwob.__file__).parent / "html"
    if not (d / "miniwob").is_dir():
        raise EnvError(f"the miniwob package at {d.parent} has no html/miniwob task pages; reinstall it")
    return d


class _QuietHandler(SimpleHTTPRequestHandler):
    # Some pages (unicode-test) carry no <meta charset>: say UTF-8 so their text is not mojibake.
    extensions_map: ClassVar[dict[str, str]] = {**SimpleHTTPRequestHandler.extensions_map, ".html": "text/html; charset=utf-8",
                      ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

    def log_message(self, format: str, *args: Any) -> None:
        pass


def base_url() -> str:
    """URL of the local server for the package's html/ folder (started on first use)."""
    global _SERVER
    with _LOCK:
        if _SERVER is None:
            handler = functools.partial(_QuietHandler, directory=str(html_dir()))
            _SERVER = ThreadingHTTPServer(("127.0.0.1", 0), handler)
            _SERVER.daemon_threads = True
            threading.Thread(target=_SERVER.serve_forever, name="miniwob-http", daemon=True).start()
        host, port = _SERVER.server_address[:2]
    return f"http://{host}:{port}/"


def stop_server() -> None:
    """Stop the local page server (tests; it is a daemon thread otherwise)."""
    global _SERVER
    with _LOCK:
        if _SERVER is not None:
            _SERVER.shutdown()
            _SERVER.server_close()
            _SERVER = None


def list_tasks() -> list[str]:
    """Every MiniWoB++ task page in the package, e.g. 'click-button', 'enter-text', sorted."""
    return sorted(p.stem for p in (html_dir() / "miniwob").glob("*.html"))


def _page(env: Any) -> Any:
    page = getattr(env, "page", None)
    if page is None or not hasattr(env, "evaluate"):
        raise EnvError(f"MiniWoB++ tasks need the browser env (browser:URL), not {type(env).__name__}")
    return page


class MiniWoBTask:
    """One MiniWoB++ episode: `start(env)` -> instruction, then `reward(env)` / `done(env)`.

    `time_limit` (seconds) replaces the page's episode limit (10 s by default in core.js), so slow
    agents are not timed out; None keeps the page's own limit (and its time-scaled reward).
    """

    def __init__(self, name: str, seed: int | str = 0, mode: str = "train",
                 time_limit: float | None = DEFAULT_TIME_LIMIT_S, ready_timeout: float = 10.0) -> None:
        known = list_tasks()
        if name not in known:
            near = [t for t in known if name.split("-")[0] in t][:8]
            raise EnvError(f"unknown MiniWoB++ task {name!r}; e.g. {', '.join(near or known[:8])} "
                           f"({len(known)} tasks: cua.eval.miniwob.list_tasks())")
        self.name, self.seed, self.mode = name, seed, mode
        self.time_limit, self.ready_timeout = time_limit, ready_timeout
        self.instruction: str = ""
        self.fields: dict[str, Any] = {}

    @property
    def url(self) -> str:
        return f"{base_url()}miniwob/{self.name}.html"

    def __repr__(self) -> str:
        return f"MiniWoBTask({self.name!r}, seed={self.seed!r})"

    def _wait_for(self, env: Any, js: str, what: str) -> None:
        try:
            _page(env).wait_for_function(js, timeout=self.ready_timeout * 1000, polling=25)
        except Exception as e:  # noqa: BLE001
            raise EnvError(f"MiniWoB++ task {self.name}: {what} not reached within {self.ready_timeout:g} s "
                           f"at {self.url} ({str(e).splitlines()[0]})") from None

    def start(self, env: Any, reload: bool = True) -> str:
        """Open the page (fresh unless reload=False), seed it, start an episode; return the instruction."""
        page = _page(env)
        if reload or page.url.split("?")[0] != self.url:
            from cua.actions import Goto

            res = env.act(Goto(url=self.url))
            if not res.ok:
                raise EnvError(f"could not open MiniWoB++ task page {self.url}: {res.error}")
        self._wait_for(env, "() => typeof core !== 'undefined' && !!document.getElementById('sync-task-cover')",
                       "the task page's start screen")
        limit = "" if self.time_limit is None else f"core.EPISODE_MAX_TIME = {int(self.time_limit * 1000)};"
        env.evaluate(
            f"() => {{ Math.seedrandom({json.dumps(self.seed)}); core.setDataMode({json.dumps(self.mode)}); "
            f"{limit} core.startEpisodeReal(); }}"
        )
        self._wait_for(env, "() => WOB_TASK_READY === true", "WOB_TASK_READY")
        utt = env.evaluate("() => core.getUtterance()")
        if isinstance(utt, dict):
            self.fields = dict(utt.get("fields") or {})
            utt = utt.get("utterance", "")
        self.instruction = str(utt or "")
        self.started_at = time.time()
        if hasattr(env, "last_obs"):
            env.last_obs = None  # the page changed under the env: observe before acting
        return self.instruction

    def metadata(self, env: Any) -> dict[str, Any]:
        """The page's episode state: done, env_reward (time-scaled), raw_reward, reason."""
        _page(env)
        return env.evaluate(
            "() => ({done: WOB_DONE_GLOBAL, env_reward: WOB_REWARD_GLOBAL, "
            "raw_reward: WOB_RAW_REWARD_GLOBAL, reason: WOB_REWARD_REASON})"
        )

    def reward(self, env: Any) -> float:
        """The page's own reward: 0 until done, then -1..1.

        With the episode limit lifted (`time_limit` set, the default) it is WOB_RAW_REWARD_GLOBAL, since
        scaling by the time used against a lifted limit means nothing; with `time_limit=None` it is
        WOB_REWARD_GLOBAL, scaled by the page's own limit as in the package's environment.
        """
        meta = self.metadata(env)
        return float(meta["env_reward" if self.time_limit is None else "raw_reward"] or 0.0)

    def time_scaled_reward(self, env: Any) -> float:
        """WOB_REWARD_GLOBAL: positive rewards scaled by the share of the episode limit left."""
        return float(self.metadata(env)["env_reward"] or 0.0)

    def raw_reward(self, env: Any) -> float:
        """The reward without the time scaling (WOB_RAW_REWARD_GLOBAL)."""
        return float(self.metadata(env)["raw_reward"] or 0.0)

    def done(self, env: Any) -> bool:
        """Whether the episode ended (WOB_DONE_GLOBAL)."""
        return bool(self.metadata(env)["done"])


__all__ = ["MiniWoBTask", "base_url", "html_dir", "list_tasks", "stop_server"]
