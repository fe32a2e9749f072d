"""Run tasks: fresh env (reset + setup), then the agent or a replay, then the checkers.

Episodes run one after another, in N local worker processes (each owning its own environment), or
on Ray actors (each owning its own sandbox or remote guest). Results are appended to results.jsonl
as they finish, so a killed eval resumes by skipping the task ids already there.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from cua.env.qemu import die_with_parent
from cua.eval.ray_runner import run_on_ray
from cua.eval.checkers import CheckContext, CheckerError, evaluate
from cua.eval.osworld.episode import osworld_episode, write_result_txt
from cua.eval.osworld.errors import Skip
from cua.eval.task import SetupStep, Task


class SetupError(RuntimeError):
    """A set-up step failed; the episode scores as an error."""


class EvalConfig(BaseModel):
    env: str | None = Field(None, description="ENV string overriding each task's own env.")
    model: str = "none"
    skills: str | None = None
    replay: str | None = Field(None, description="'reference', or a directory holding <task_id>/ recordings.")
    out: str = "eval-out"
    max_steps: int | None = None
    env_options: dict[str, Any] = Field(default_factory=dict)
    retrieval: str = Field("fused", description="How a task is matched to skills: fused | bm25 | heuristic.")
    model_options: dict[str, Any] = Field(default_factory=dict, description="computer_tool, thread, keep_images")
    grounder: str = Field("perception", description="perception | openai:MODEL (cua.models.grounder)")
    assets: str | None = Field(None, description="OSWorld asset cache directory (cua osworld assets --fetch).")
    online: bool = Field(False, description="The internet is reachable: run OSWorld tasks that open live websites.")
    strict_metrics: bool = Field(False, description="OSWorld metrics with the reference's known bugs fixed.")


class EpisodeResult(BaseModel):
    task_id: str
    outcome: str = Field(..., description="success | failure | error | skipped (cannot run here; `error` says why)")
    agent_outcome: str | None = None
    error: str | None = None
    steps: int = 0
    seconds: dict[str, float] = Field(default_factory=dict, description="reset, setup, act, check, total")
    cost: float = 0.0
    details: list[str] = Field(default_factory=list)
    trajectory: str | None = None
    report: str | None = None
    reference_seconds: float | None = None
    reference_steps: int | None = None
    instruction: str = ""
    score: float | None = Field(None, description="OSWorld's score in [0, 1] (OSWorld tasks only).")
    domain: str | None = Field(None, description="OSWorld domain (OSWorld tasks only).")


# ------------------------------------------------------------------------------------ env access
def env_home(env: Any) -> Path | None:
    """The environment's home directory, where relative task paths live (sandboxes have a fresh one)."""
    for obj in (env, getattr(env, "sandbox", None)):
        home = getattr(obj, "home", None) or (getattr(obj, "env", None) or {}).get("HOME") if obj is not None else None
        if isinstance(home, (str, Path)) and home:
            return Path(home)
    return None


def env_process_vars(env: Any) -> dict[str, str] | None:
    """The environment of processes a task's set-up starts on `env`'s display: the sandbox's own allow-listed
    environment (never the caller's API keys or tokens), or None where the env starts no local processes."""
    for obj in (env, getattr(env, "sandbox", None)):
        vars_ = getattr(obj, "child_env", None) or (getattr(obj, "env", None) if obj is not env else None)
        if isinstance(vars_, dict):
            return dict(vars_)
    return None


class Episode:
    """One task on one environment; owns the processes its set-up launched."""

    def __init__(self, task: Task, env: Any, cfg: EvalConfig):
        self.task, self.env, self.cfg = task, env, cfg
        self.ctx = CheckContext(env=env, home=env_home(env), proc_env=env_process_vars(env))
        self.launched: list[subprocess.Popen] = []
        self.instruction = task.instruction
        self.osworld = (osworld_episode(task.osworld, env, cfg.assets, cfg.online, cfg.strict_metrics)
                        if task.osworld else None)

    def setup(self) -> None:
        if self.osworld is not None:
            self.instruction = self.osworld.setup()
            return
        for i, step in enumerate(self.task.setup):
            try:
                self._step(step)
            except SetupError as e:
                raise SetupError(f"setup[{i}] {step.type}: {e}") from None
            except Exception as e:  # noqa: BLE001 - any failure here is a set-up error, reported as such
                raise SetupError(f"setup[{i}] {step.type}: {type(e).__name__}: {e}") from None

    def _step(self, s: SetupStep) -> None:
        from cua.actions import Goto, Type, parse_action

        if s.type in {"launch", "execute"}:
            if not s.command:
                raise SetupError("needs `command` (an argument list)")
            kw = dict(env=self.ctx.proc_env, cwd=self.ctx.home, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if s.type == "launch":
                self.launched.append(subprocess.Popen(s.command, start_new_session=True, **kw))
            else:
                r = subprocess.run(s.command, timeout=s.seconds, **kw)
                if r.returncode != 0:
                    raise SetupError(f"{s.command!r} exited {r.returncode}: {r.stderr.decode(errors='replace')[-200:]}")
        elif s.type == "write_file":
            p = self.ctx.path(s.path or "")
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(s.content or "")
        elif s.type == "open":
            if getattr(self.env, "evaluate", None):  # browser: a file URL
                self.env.act(Goto(url=self.ctx.path(s.path or "").as_uri()))
            else:
                app = getattr(self.env, "app_cmd", None) or getattr(getattr(self.env, "sandbox", None), "app_cmd", None)
                if not app:
                    raise SetupError("`open` needs a sandbox app (sandbox:APP) or the browser env")
                argv = (shlex.split(app) if isinstance(app, str) else list(app)) + [str(self.ctx.path(s.path or ""))]
                self.launched.append(subprocess.Popen(argv, env=self.ctx.proc_env, start_new_session=True,
                                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                if s.text:
                    self._wait_title(s.text, s.seconds)
        elif s.type == "type":
            self.env.act(Type(text=s.text or ""))
        elif s.type == "key":
            self.env.act(parse_action(f"key({s.text!r})"))
        elif s.type == "goto":
            self.env.act(Goto(url=s.url or "about:blank"))
        elif s.type == "sleep":
            time.sleep(s.seconds)
        elif s.type == "wait_for_window":
            self._wait_title(s.text or "", s.seconds)
        elif s.type == "miniwob":
            from cua.eval.miniwob import MiniWoBTask

            self.ctx.miniwob = MiniWoBTask(s.text or "", seed=self.task.seed or 0)
            utterance = self.ctx.miniwob.start(self.env)
            self.instruction = self.task.instruction.replace("{utterance}", utterance)

    def _wait_title(self, text: str, timeout: float) -> None:
        from skills.polling import wait_for

        obs, ok = wait_for(self.env, lambda o: text in o.window_title, timeout)
        if not ok:
            raise SetupError(f"no window titled {text!r} within {timeout:.0f}s (last title {obs.window_title!r})")

    def close(self) -> None:
        if self.osworld is not None:
            self.osworld.close()
        for p in self.launched:
            try:
                os.killpg(p.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            p.wait(timeout=5)


REPLAY_TARGET_WAIT_S = 10.0  # how long a reference replay waits for its next target to appear


def _replay(ep: Episode, out: Path) -> tuple[int, str | None, str | None]:
    """Scripted replay: the task's reference actions, or a recording dir for this task. Returns steps."""
    from cua.actions import parse_actions

    cfg, task = ep.cfg, ep.task
    if cfg.replay == "reference":
        if not task.reference or not task.reference.actions:
            raise SetupError(f"task {task.id} has no reference.actions to replay")
        home = str(ep.ctx.home or "")
        actions = [a for item in task.reference.actions
                   for a in parse_actions(item.replace("{home}", home) if isinstance(item, str) else item)]
        for a in actions:
            targeted = getattr(a, "target", None) is not None or getattr(a, "to_target", None) is not None
            deadline = time.monotonic() + REPLAY_TARGET_WAIT_S
            while True:
                if targeted:
                    ep.env.observe()  # ground against the screen as it is now
                r = ep.env.act(a)
                # a target not there yet (a dialog still opening on a loaded VM): nothing ran, look again
                if r.ok or not targeted or not (r.error or "").startswith("nothing on screen matches") \
                        or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            if not r.ok:
                return len(actions), "failure", r.error
        return len(actions), "done", None
    src = Path(cfg.replay or "") / task.id
    if not src.exists():
        raise SetupError(f"no recording for task {task.id} at {src}")
    from recorder.replay import replay_path

    rep = replay_path(src, ep.env, out=out)
    errors = [f"step {s.index}: {s.error}" for s in rep.steps if s.error]
    return len(rep.steps), ("done" if rep.ok else "failure"), "; ".join(errors) or None


def _quiesce(env: Any, timeout: float = 3.0) -> None:
    """Before checking, wait (bounded) until what the env shows stops changing: a save or a dialog
    closing may still be in flight after the last action's own settle."""
    from cua.env.settle import wait_settled

    def grab() -> tuple:
        o = env.observe()
        return o.window_title, tuple((e.role, e.name, e.value) for e in o.elements[:300])

    wait_settled(grab, timeout=timeout, stable_for=0.3)


def run_episode(task: Task, env: Any, cfg: EvalConfig) -> EpisodeResult:
    """Reset + setup, act (agent or replay), check. Never raises for task problems: they are outcomes."""
    t0 = time.monotonic()
    secs: dict[str, float] = {}
    res = EpisodeResult(task_id=task.id, outcome="error", instruction=task.instruction,
                        domain=(task.osworld or {}).get("domain") if task.osworld else None)
    if task.reference:
        res.reference_seconds, res.reference_steps = task.reference.seconds, task.reference.steps
    ep = Episode(task, env, cfg)
    out = Path(cfg.out) / "episodes" / task.id
    try:
        t = time.monotonic()
        env.reset()
        secs["reset"] = time.monotonic() - t
        t = time.monotonic()
        ep.setup()
        secs["setup"] = time.monotonic() - t
        res.instruction = ep.instruction
        t = time.monotonic()
        if cfg.max_steps == 0:
            res.agent_outcome = "not run (--max-steps 0)"
        elif cfg.replay:
            res.steps, res.agent_outcome, res.error = _replay(ep, out)
        else:
            from cua.agent.loop import run_task

            run = run_task(ep.instruction, env, model=cfg.model, skills=cfg.skills,
                           max_steps=cfg.max_steps or task.budgets.max_steps,
                           max_seconds=task.budgets.max_seconds, max_cost=task.budgets.max_cost,
                           out=out, yes=True, model_options=cfg.model_options,
                           grounder=cfg.grounder, retrieval=cfg.retrieval)
            res.agent_outcome, res.steps, res.cost = run.outcome, run.steps, run.cost
            res.trajectory, res.report = str(run.trajectory_dir), str(run.report) if run.report else None
        secs["act"] = time.monotonic() - t
        t = time.monotonic()
        _quiesce(env)
        ep.ctx.forget()
        if ep.osworld is not None:
            res.score = ep.osworld.score(res.agent_outcome == "failure", ep.ctx.details)
            passed = res.score >= 1.0
        else:
            passed = evaluate(task.checker_tree(), ep.ctx)
        secs["check"] = time.monotonic() - t
        res.outcome = "success" if passed else "failure"
    except Skip as e:
        res.outcome, res.error = "skipped", str(e)
    except CheckerError as e:
        res.outcome, res.error = "error", f"checker error: {e}"
    except SetupError as e:
        res.outcome, res.error = "error", f"setup error: {e}"
    except Exception as e:  # noqa: BLE001 - an env or agent crash is this episode's error, not the eval's
        res.outcome, res.error = "error", f"{type(e).__name__}: {e}"
    finally:
        ep.close()
    res.details = ep.ctx.details
    secs["total"] = time.monotonic() - t0
    res.seconds = {k: round(v, 3) for k, v in secs.items()}
    return res


# ------------------------------------------------------------------------------------ workers
_WORKER_ENVS: dict[str, Any] = {}


def _worker_env(spec: str, options: dict[str, Any]) -> Any:
    """One environment per worker process, reused (reset) across its episodes, closed at exit.

    multiprocessing children leave through os._exit (no atexit), so the close is a multiprocessing
    finalizer (which the main process also runs at exit); the in-process runner and Ray actors call
    close_worker_envs() themselves.
    """
    from multiprocessing import util

    from cua.env import make_env

    if spec not in _WORKER_ENVS:
        if not _WORKER_ENVS:
            util.Finalize(None, close_worker_envs, exitpriority=10)
        _WORKER_ENVS[spec] = make_env(spec, **options)
    return _WORKER_ENVS[spec]


def close_worker_envs() -> None:
    while _WORKER_ENVS:
        _, env = _WORKER_ENVS.popitem()
        try:
            env.close()
        except Exception:  # noqa: BLE001 - closing is best effort; the sandbox guard reaps the rest
            pass


def _env_spec(task: Task, cfg: EvalConfig) -> str:
    return cfg.env or task.env or "sandbox:mousepad"


def episode_in_worker(task_json: str, cfg_json: str) -> str:
    """Process-pool / Ray entry point (JSON in, JSON out: no pickling of live objects)."""
    task, cfg = Task.model_validate_json(task_json), EvalConfig.model_validate_json(cfg_json)
    try:
        env = _worker_env(_env_spec(task, cfg), cfg.env_options)
    except Exception as e:  # noqa: BLE001 - an env that cannot start is this episode's error
        return EpisodeResult(task_id=task.id, outcome="error", error=f"env {_env_spec(task, cfg)!r}: {e}",
                             instruction=task.instruction).model_dump_json()
    return run_episode(task, env, cfg).model_dump_json()


# what a worker's env reads from the environment (--ca, --vm-memory, --vm-cpus and the VM knobs): pool workers
# inherit it; Ray actors get it set explicitly, since a running cluster's workers do not share our environment
WORKER_ENV_VARS = ("CUA_CA", "CUA_VM_MEMORY", "CUA_VM_CPUS", "CUA_VM_DIR", "CUA_VM_ACCEL", "CUA_IMAGE_CACHE")


def _end_with_owner(owner: int) -> None:
    """Pool worker start-up: SIGTERM when the eval process dies, even by SIGKILL. An orphaned pool worker
    otherwise waits for work forever and keeps its env (a VM's QEMU, a sandbox) alive with it."""
    die_with_parent()
    if os.getppid() != owner:  # the owner died before the line above
        os._exit(1)


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """The local workers: fresh (spawned) processes that end with this one."""
    import multiprocessing as mp

    return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"), initializer=_end_with_owner,
                               initargs=(os.getpid(),))


def _local(tasks: list[Task], cfg: EvalConfig, workers: int) -> Iterator[EpisodeResult]:
    if workers <= 1:
        try:
            for t in tasks:
                yield EpisodeResult.model_validate_json(episode_in_worker(t.model_dump_json(), cfg.model_dump_json()))
        finally:
            close_worker_envs()
        return
    with worker_pool(workers) as pool:
        pending = {pool.submit(episode_in_worker, t.model_dump_json(), cfg.model_dump_json()) for t in tasks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                yield EpisodeResult.model_validate_json(f.result())


def _ray(tasks: list[Task], cfg: EvalConfig, workers: int, address: str) -> Iterator[EpisodeResult]:
    jobs = [t.model_dump_json() for t in tasks]
    env_vars = {k: os.environ[k] for k in WORKER_ENV_VARS if k in os.environ}
    for out in run_on_ray(jobs, cfg.model_dump_json(), workers, address, episode_in_worker, close_worker_envs,
                          env_vars):
        yield EpisodeResult.model_validate_json(out)


def finished_ids(results: Path) -> set[str]:
    """Task ids already in results.jsonl (a torn last line from a kill is ignored)."""
    done: set[str] = set()
    if results.exists():
        for line in results.read_text().splitlines():
            try:
                done.add(json.loads(line)["task_id"])
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
    return done


def run_eval(tasks: list[Task], cfg: EvalConfig, workers: int = 1, ray: str | None = None,
             on_result: Callable[[EpisodeResult], None] | None = None) -> list[EpisodeResult]:
    """Run every task not yet in OUT/results.jsonl; append each result as it finishes."""
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.jsonl"
    skip = finished_ids(results_path)
    todo = [t for t in tasks if t.id not in skip]
    stream = _ray(todo, cfg, workers, ray) if ray else _local(todo, cfg, workers)
    results = []
    with open(results_path, "a") as f:
        for r in stream:
            f.write(r.model_dump_json() + "\n")
            f.flush()
            if r.domain is not None and r.score is not None:
                write_result_txt(out, r.domain, r.task_id, r.score)
            os.fsync(f.fileno())
            results.append(r)
            if on_result:
                on_result(r)
    return results
