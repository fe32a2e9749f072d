"""Task specs (JSON or YAML), and the OSWorld task-JSON subset mapped onto them."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class TaskError(ValueError):
    """A task file that cannot be used; the message names the file, the field and the fix."""


class SetupStep(BaseModel):
    """One set-up step, run after reset and before the agent or replay starts."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["launch", "execute", "open", "type", "key", "sleep", "wait_for_window", "write_file", "goto", "miniwob"]
    command: list[str] | None = Field(None, description="Argument list for launch/execute (never a shell string).")
    path: str | None = Field(None, description="File for open/write_file; relative paths live in the env's home.")
    content: str | None = None
    text: str | None = Field(None, description="Text to type (type), key combo (key), window title "
                             "(wait_for_window) or MiniWoB++ task name (miniwob).")
    url: str | None = None
    seconds: float = Field(10.0, ge=0, le=600, description="Timeout of execute / open / wait_for_window, or the "
                           "length of a sleep (set it: sleeps are for apps that give no signal to wait on).")


class Budgets(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_steps: int = Field(20, ge=1, le=1000)
    max_seconds: float = Field(300, gt=0)
    max_cost: float | None = Field(None, ge=0, description="USD of model calls.")


class Reference(BaseModel):
    """A human (or scripted) reference: the demonstration and how long it took."""

    model_config = ConfigDict(extra="forbid")
    demonstration: str | None = Field(None, description="Recording or trajectory directory, relative to the task file.")
    seconds: float | None = Field(None, ge=0)
    steps: int | None = Field(None, ge=0)
    actions: list[str | dict[str, Any]] = Field(default_factory=list, description="Scripted replay (any action format).")


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(..., min_length=1, pattern=r"^[A-Za-z0-9_.:\-]+$")
    instruction: str = Field(..., min_length=1)
    env: str | None = Field(None, description="Default ENV string; `cua eval --env` overrides it.")
    setup: list[SetupStep] = Field(default_factory=list)
    checkers: dict[str, Any] | list[dict[str, Any]] = Field(..., description="A checker, or {all|any: [...]}.")
    budgets: Budgets = Field(default_factory=Budgets)
    reference: Reference | None = None
    seed: int | None = Field(None, description="MiniWoB++ episode seed.")
    tags: list[str] = Field(default_factory=list)
    source: str = Field("", description="File the task came from.")

    def checker_tree(self) -> dict[str, Any]:
        return {"all": self.checkers} if isinstance(self.checkers, list) else self.checkers


def _explain(err: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'task'}: {e['msg']}" for e in err.errors()[:4])


def task_from_dict(data: Any, source: str = "<dict>") -> Task:
    if not isinstance(data, dict):
        raise TaskError(f"{source}: a task must be a mapping, got {type(data).__name__}")
    if "evaluator" in data or "config" in data:
        data = from_osworld(data, source)
    try:
        task = Task.model_validate({**data, "source": source})
    except ValidationError as e:
        raise TaskError(f"{source}: {_explain(e)}") from None
    from cua.eval.checkers import validate_tree

    try:
        validate_tree(task.checker_tree())
    except ValueError as e:
        raise TaskError(f"{source}: checkers: {e}") from None
    return task


def load_task(path: Path | str) -> Task:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise TaskError(f"cannot read task file {path}: {e.strerror}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        raise TaskError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {e}") from None
    return task_from_dict(data, str(path))


def load_tasks(paths: list[Path | str]) -> list[Task]:
    """Task files and directories (every *.json / *.yaml / *.yml inside, sorted); ids must be unique."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(f for f in p.rglob("*") if f.suffix in {".json", ".yaml", ".yml"} and f.is_file()
                            and not (f.parent / "events.sqlite").exists())  # not a recording's manifest (refs/)
        elif p.exists():
            files.append(p)
        else:
            raise TaskError(f"no task file or directory at {p}")
    tasks = [load_task(f) for f in files]
    seen: dict[str, str] = {}
    for t in tasks:
        if t.id in seen:
            raise TaskError(f"duplicate task id {t.id!r} in {seen[t.id]} and {t.source}")
        seen[t.id] = t.source
    if not tasks:
        raise TaskError(f"no task files (*.json, *.yaml) under {', '.join(map(str, paths))}")
    return tasks


# ----------------------------------------------------------------------------- OSWorld subset
OSWORLD_STEPS = {"launch", "execute", "command", "sleep", "open"}
OSWORLD_FUNCS = {"exact_match", "check_include_exclude", "infeasible"}


def _osworld_command(params: dict, where: str) -> list[str]:
    cmd = params.get("command")
    if isinstance(cmd, str):
        if params.get("shell"):
            raise TaskError(f"{where}: shell=true commands are not supported: give `command` as an argument list")
        cmd = shlex.split(cmd)
    if not (isinstance(cmd, list) and cmd and all(isinstance(c, str) for c in cmd)):
        raise TaskError(f"{where}: `command` must be a non-empty argument list")
    return cmd


def _osworld_setup(config: list, source: str) -> list[dict]:
    out = []
    for i, step in enumerate(config or []):
        t, params = step.get("type"), step.get("parameters") or {}
        where = f"{source}: config[{i}] ({t})"
        if t not in OSWORLD_STEPS:
            raise TaskError(f"{where}: unsupported OSWorld config step {t!r}; supported: {', '.join(sorted(OSWORLD_STEPS))}")
        if t == "launch":
            out.append({"type": "launch", "command": _osworld_command(params, where)})
        elif t in {"execute", "command"}:
            out.append({"type": "execute", "command": _osworld_command(params, where)})
        elif t == "sleep":
            out.append({"type": "sleep", "seconds": float(params.get("seconds", 1))})
        elif t == "open":
            out.append({"type": "open", "path": str(params.get("path", ""))})
    return out


def _osworld_checker(func: str, result: dict, expected: dict, where: str) -> dict:
    if func not in OSWORLD_FUNCS:
        raise TaskError(f"{where}: unsupported OSWorld metric {func!r}; supported: {', '.join(sorted(OSWORLD_FUNCS))}")
    if func == "infeasible":
        raise TaskError(f"{where}: 'infeasible' tasks need the agent to declare failure; cua scores them "
                        f"with outcome checks only, so the metric is not supported")
    rtype = (result or {}).get("type")
    rules = (expected or {}).get("rules") or {}
    if (expected or {}).get("type") != "rule":
        raise TaskError(f"{where}: only expected.type 'rule' is supported, got {(expected or {}).get('type')!r}")
    if rtype == "vm_command_line":
        base = {"type": "command_output", "command": _osworld_command(result, where)}
    elif rtype == "vm_file":
        base = {"type": "file_contains", "path": str(result.get("path", ""))}
    else:
        raise TaskError(f"{where}: unsupported OSWorld result type {rtype!r}; supported: vm_command_line, vm_file")
    if func == "exact_match":
        key = "equals" if base["type"] == "command_output" else "text"
        if base["type"] == "file_contains":
            return {"type": "file_equals", "path": base["path"], "content": str(rules.get("expected", ""))}
        return {**base, key: str(rules.get("expected", ""))}
    inc = [{**base, "text" if base["type"] == "file_contains" else "contains": str(s)} for s in rules.get("include", [])]
    exc = [{"not": {**base, "text" if base["type"] == "file_contains" else "contains": str(s)}}
           for s in rules.get("exclude", [])]
    return {"all": inc + exc}


def from_osworld(data: dict, source: str) -> dict:
    """Map an OSWorld task JSON onto our spec, or raise TaskError naming the unsupported part."""
    ev = data.get("evaluator") or {}
    funcs = ev.get("func")
    funcs = funcs if isinstance(funcs, list) else [funcs]
    results = ev.get("result") if isinstance(ev.get("result"), list) else [ev.get("result")] * len(funcs)
    expects = ev.get("expected") if isinstance(ev.get("expected"), list) else [ev.get("expected")] * len(funcs)
    checks = [_osworld_checker(str(f), r or {}, e or {}, f"{source}: evaluator") for f, r, e in zip(funcs, results, expects)]
    conj = "any" if ev.get("conj") == "or" else "all"
    return {
        "id": str(data.get("id", Path(source).stem)),
        "instruction": data.get("instruction", ""),
        "setup": _osworld_setup(data.get("config", []), source),
        "checkers": {conj: checks},
        "tags": ["osworld", *map(str, data.get("related_apps", []))],
    }


def miniwob_tasks(spec: str, seeds: int = 1) -> list[Task]:
    """'miniwob:all' or 'miniwob:click-button,click-link' -> one task per page and seed.

    The instruction comes from the page at set-up, the page's own reward is the checker.
    """
    from cua.eval.miniwob import list_tasks

    names = spec.partition(":")[2]
    available = list_tasks()
    chosen = available if names in {"", "all", "*"} else [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in available]
    if unknown:
        raise TaskError(f"unknown MiniWoB++ task(s) {', '.join(unknown)}; e.g. {', '.join(available[:5])}")
    return [
        Task(id=f"miniwob.{name}.{seed}", instruction="{utterance}", env="browser:about:blank", seed=seed,
             setup=[SetupStep(type="miniwob", text=name)], checkers={"type": "miniwob_reward", "min": 1.0},
             tags=["miniwob"], source=spec)
        for name in chosen for seed in range(seeds)
    ]


def resolve_tasks(specs: list[str], seeds: int = 1) -> list[Task]:
    """Paths (files, directories) and miniwob:... specs, in order."""
    out: list[Task] = []
    for s in specs:
        out += miniwob_tasks(s, seeds) if str(s).startswith("miniwob:") else load_tasks([s])
    return out
