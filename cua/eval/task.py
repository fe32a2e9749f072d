"""Task specs (JSON or YAML), and the OSWorld task-JSON subset mapped onto them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cua.eval.osworld.episode import task_fields
from cua.eval.osworld.spec import OSWorldError
from cua.eval.osworld.spec import load_path as load_osworld


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
    osworld: dict[str, Any] | None = Field(None, description="An OSWorld task's own JSON (cua.eval.osworld runs "
                                           "its set-up and evaluator).")

    def checker_tree(self) -> dict[str, Any]:
        return {"all": self.checkers} if isinstance(self.checkers, list) else self.checkers


def _explain(err: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'task'}: {e['msg']}" for e in err.errors()[:4])


def task_from_dict(data: Any, source: str = "<dict>") -> Task:
    if not isinstance(data, dict):
        raise TaskError(f"{source}: a task must be a mapping, got {type(data).__name__}")
    if "evaluator" in data or "config" in data:
        try:
            data = task_fields(data, source)
        except OSWorldError as e:
            raise TaskError(str(e)) from None
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
                            and not (f.parent / "events.sqlite").exists()  # not a recording's manifest (refs/)
                            and not _in_osworld_layout(f, p))
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


# ----------------------------------------------------------------------------- OSWorld layouts
def osworld_index_tasks(path: Path | str, domains: list[str] | None = None) -> list[Task]:
    """OSWorld's layout (evaluation_examples/, or an index like test_all.json), optionally some domains."""
    try:
        found = load_osworld(path, domains)
    except OSWorldError as e:
        raise TaskError(str(e)) from None
    return [Task.model_validate({**task_fields(t.model_dump(mode="json"), t.source), "source": t.source})
            for t in found]


def _in_osworld_layout(f: Path, top: Path) -> bool:
    """Files of an OSWorld layout below `top` (a dir with test_all.json) load through its index instead."""
    return any((d / "test_all.json").is_file() for d in f.parents if d != top and d.is_relative_to(top))


def _is_osworld_layout(p: Path) -> bool:
    if p.is_dir():
        return (p / "test_all.json").is_file()
    if p.suffix != ".json" or not p.is_file():
        return False
    try:
        data = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and bool(data) and all(isinstance(v, list) for v in data.values())


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
        if str(s).startswith("miniwob:"):
            out += miniwob_tasks(s, seeds)
        elif _is_osworld_layout(Path(s)):
            out += osworld_index_tasks(s)
        else:
            out += load_tasks([s])
    return out
