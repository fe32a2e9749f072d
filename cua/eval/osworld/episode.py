"""An OSWorld task inside cua's runner: the Task fields it maps to, its set-up, its score, result.txt.

The runner (cua/eval/runner.py) keeps its own loop (reset, set-up, agent or replay, check); for a
task with `osworld` data it calls OSWorldEpisode for the set-up and the check instead of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cua.env.remote import RemoteEnv
from cua.eval.osworld import assets
from cua.eval.osworld.check import check_task, skip_reason
from cua.eval.osworld.errors import Skip, StepError
from cua.eval.osworld.evaluate import mapped_steps, score
from cua.eval.osworld.remote import RemoteOSWorldEpisode
from cua.eval.osworld.runtime import Runtime
from cua.eval.osworld.spec import OSWorldTask, parse_task
from cua.eval.osworld.steps import run_steps

DESKTOP_ENV = f"sandbox:{sys.executable} -m cua.eval.osworld.desktop"
# Metrics that read a state this environment can already be in before the agent acts (docs/osworld.md,
# "Tasks a no-op passes"): such a task is probed right after set-up and skipped if doing nothing passes.
ALREADY_DONE = {"is_utc_0": "the time zone here is already UTC+0 (Debian's default; OSWorld's VM starts in "
                            "another zone), so doing nothing would pass"}


def task_fields(data: dict, source: str) -> dict[str, Any]:
    """The cua Task fields of an OSWorld task JSON (its own JSON kept whole under `osworld`)."""
    t = parse_task(data, source, Path(source).parent.name if source.endswith(".json") else "")
    return {"id": t.id, "instruction": t.instruction, "env": DESKTOP_ENV, "checkers": {"type": "osworld"},
            "osworld": t.model_dump(mode="json"), "tags": ["osworld", t.domain, *t.related_apps]}


class OSWorldEpisode:
    """Set-up (config steps) and evaluation (post-config, getters, metrics) of one task on one env."""

    def __init__(self, data: dict, env: Any, assets: str | None, online: bool = False, strict: bool = False):
        self.task: OSWorldTask = OSWorldTask.model_validate(data)
        self.env, self.assets, self.online, self.strict = env, Path(assets) if assets else None, online, strict
        self.rt: Runtime | None = None

    def setup(self) -> str:
        """Runs the config steps; returns the instruction with OSWorld's paths mapped. Raises Skip."""
        c = check_task(self.task, self.assets)
        reason = skip_reason(c, self.online)
        if reason:
            raise Skip(reason)
        if c.kind == "unsupported":
            raise StepError(c.status)
        for url in assets.task_urls(self.task):  # post-config and getter files too: skip now, not at scoring
            assets.resolve(self.assets, url)
        self.rt = Runtime(self.env, self.assets)
        run_steps(self.rt, mapped_steps(self.rt, self.task.config), "config")
        probe = ALREADY_DONE.get(self.task.evaluator.func) if isinstance(self.task.evaluator.func, str) else None
        if probe and score(self.task, self.rt, False, [], self.strict) == 1.0:
            raise Skip(probe)
        return self.rt.map(self.task.instruction)

    def score(self, declared_infeasible: bool, details: list[str]) -> float:
        if self.rt is None:
            raise StepError("the task was not set up")
        return score(self.task, self.rt, declared_infeasible, details, self.strict)

    def close(self) -> None:
        if self.rt is not None:
            self.rt.close()


def osworld_episode(data: dict, env: Any, assets: str | None, online: bool = False,
                    strict: bool = False) -> OSWorldEpisode | RemoteOSWorldEpisode:
    """The episode for this env: run here on a sandbox, or by the guest of a `remote:URL` env."""
    if isinstance(env, RemoteEnv):
        return RemoteOSWorldEpisode(data, env, assets, online, strict)
    return OSWorldEpisode(data, env, assets, online, strict)


def write_result_txt(out: Path, domain: str, task_id: str, value: float) -> Path:
    """OSWorld's layout: <out>/osworld/<domain>/<task_id>/result.txt holding the score."""
    d = Path(out) / "osworld" / (domain or "unknown") / task_id
    d.mkdir(parents=True, exist_ok=True)
    (d / "result.txt").write_text(f"{value}\n")
    return d / "result.txt"
