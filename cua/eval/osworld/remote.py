"""An OSWorld task on a guest (`--env remote:URL`): the guest sets it up and scores it, the agent acts over /act.

The host sends the task's asset files from its cache (PUT /osworld/assets/NAME), then the task
(POST /osworld/setup); after the agent, POST /osworld/score runs the evaluator where the desktop is
(vm/guest/osworld.py). A file missing from the host's cache is not sent: the guest skips the task with
`asset missing: URL`, as a sandbox does. The guest must run with `--allow-exec`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from cua.env.base import EnvError
from cua.eval.osworld import assets
from cua.eval.osworld.errors import Skip, StepError
from cua.eval.osworld.spec import OSWorldTask


STEP_TIMEOUT = 600.0


class RemoteOSWorldEpisode:
    """The OSWorldEpisode interface (setup, score, close) over a RemoteEnv's guest."""

    def __init__(self, data: dict, env: Any, cache: str | None, online: bool = False, strict: bool = False):
        self.data, self.env, self.online, self.strict = data, env, online, strict
        self.task = OSWorldTask.model_validate(data)
        self.cache = Path(cache) if cache else assets.default_cache()
        self._open = False

    def _post(self, path: str, body: dict) -> dict:
        try:  # set-up and evaluation wait for apps, downloads and the task's own sleeps
            return self.env.request("POST", path, json=body, timeout=httpx.Timeout(STEP_TIMEOUT, connect=10)).json()
        except EnvError as e:
            raise StepError(f"{path} on the guest: {e}") from None

    def setup(self) -> str:
        """Sends the assets this host has, then the task; returns the instruction the guest mapped. Raises Skip."""
        for url in assets.task_urls(self.task):
            if url.startswith(("http://", "https://")) and self.cache is not None:
                local = assets.cache_path(self.cache, url)
                if local.is_file():
                    try:
                        self.env.request("PUT", f"/osworld/assets/{local.name}", content=local.read_bytes(),
                                         headers={"Content-Type": "application/octet-stream"})
                    except EnvError as e:
                        raise StepError(f"sending the asset {url} to the guest: {e}") from None
        r = self._post("/osworld/setup", {"task": self.data, "online": self.online, "strict": self.strict})
        self._open = True
        if r.get("status") == "skipped":
            raise Skip(r.get("reason", "skipped by the guest"))
        return r["instruction"]

    def score(self, declared_infeasible: bool, details: list[str]) -> float:
        if not self._open:
            raise StepError("the task was not set up")
        r = self._post("/osworld/score", {"declared_infeasible": declared_infeasible})
        details.extend(r.get("details", []))
        return float(r["score"])

    def close(self) -> None:
        if self._open:
            self._open = False
            try:
                self.env.request("POST", "/osworld/close")
            except EnvError:
                pass  # the guest's next set-up closes it too
