"""OSWorld task JSON, read as OSWorld writes it: one file per task, or an index (`test_all.json`).

Layouts accepted:
- a task file `<domain>/<id>.json` (the domain is its parent directory's name);
- a directory holding such files (OSWorld's `evaluation_examples/examples/`, or one domain of it);
- `evaluation_examples/` itself, or an index `{domain: [id, ...]}` with the examples beside it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class OSWorldError(ValueError):
    """An OSWorld task file or index that cannot be read; the message names the file and the fix."""


class Step(BaseModel):
    """One `config` / `postconfig` step: `type` names OSWorld's `_<type>_setup` function."""

    model_config = ConfigDict(extra="allow")
    type: str = Field(..., min_length=1)
    parameters: dict[str, Any] = Field(default_factory=dict)


class Evaluator(BaseModel):
    """`func` is one metric name or a list; `result`/`expected`/`options` are then lists of the same length."""

    model_config = ConfigDict(extra="allow")
    func: str | list[str]
    result: dict[str, Any] | list[dict[str, Any]] | None = None
    expected: dict[str, Any] | list[dict[str, Any] | None] | None = None
    options: dict[str, Any] | list[dict[str, Any] | None] | None = None
    conj: str = "and"
    postconfig: list[Step] = Field(default_factory=list)

    @field_validator("conj")
    @classmethod
    def _conj(cls, v: str) -> str:
        if v not in ("and", "or"):
            raise ValueError(f"conj must be 'and' or 'or', got {v!r}")
        return v

    def metrics(self) -> list[tuple[str, dict | None, dict | None, dict]]:
        """(func, result getter config, expected getter config, options) per metric, as OSWorld pairs them."""
        funcs = self.func if isinstance(self.func, list) else [self.func]
        multi = isinstance(self.func, list)

        def nth(v: Any, i: int) -> Any:
            return (v[i] if i < len(v) else None) if isinstance(v, list) and multi else v

        return [(f, nth(self.result, i), nth(self.expected, i), nth(self.options, i) or {}) for i, f in enumerate(funcs)]

    @property
    def infeasible(self) -> bool:
        return self.func == "infeasible"


class OSWorldTask(BaseModel):
    """A task as OSWorld writes it, plus where it came from (`domain`, `source`)."""

    model_config = ConfigDict(extra="allow")
    id: str = Field(..., min_length=1)
    instruction: str = Field(..., min_length=1)
    config: list[Step] = Field(default_factory=list)
    evaluator: Evaluator
    related_apps: list[str] = Field(default_factory=list)
    snapshot: str | None = None
    domain: str = ""
    source: str = ""

    def steps(self) -> list[tuple[str, Step]]:
        """Every step with where it runs: 'config' (set-up) or 'postconfig' (before the evaluator)."""
        return [("config", s) for s in self.config] + [("postconfig", s) for s in self.evaluator.postconfig]

    def getters(self) -> list[dict]:
        """Every result/expected getter config (None entries left out)."""
        return [g for _, r, e, _ in self.evaluator.metrics() for g in (r, e) if isinstance(g, dict)]


def is_osworld(data: Any) -> bool:
    return isinstance(data, dict) and "evaluator" in data and "instruction" in data


def parse_task(data: Any, source: str, domain: str = "") -> OSWorldTask:
    if not isinstance(data, dict):
        raise OSWorldError(f"{source}: an OSWorld task is a JSON object, got {type(data).__name__}")
    try:
        return OSWorldTask.model_validate({**data, "domain": domain or data.get("domain", ""), "source": source})
    except ValidationError as e:
        where = "; ".join(f"{'.'.join(map(str, x['loc'])) or 'task'}: {x['msg']}" for x in e.errors()[:3])
        raise OSWorldError(f"{source}: not an OSWorld task ({where})") from None


def load_task_file(path: Path) -> OSWorldTask:
    try:
        data = json.loads(path.read_text())
    except OSError as e:
        raise OSWorldError(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise OSWorldError(f"{path}: not valid JSON: {e}") from None
    return parse_task(data, str(path), path.parent.name)


def _examples_dir(root: Path) -> Path:
    for cand in (root / "examples", root / "evaluation_examples" / "examples", root):
        if cand.is_dir():
            return cand
    raise OSWorldError(f"no OSWorld examples directory under {root}")


def load_index(index: Path, domains: list[str] | None = None, examples: Path | None = None) -> list[OSWorldTask]:
    """An index `{domain: [id, ...]}` (test_all.json); task files at <examples>/<domain>/<id>.json."""
    try:
        idx = json.loads(index.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise OSWorldError(f"cannot read index {index}: {e}") from None
    if not (isinstance(idx, dict) and all(isinstance(v, list) for v in idx.values())):
        raise OSWorldError(f"{index}: an index maps each domain to a list of task ids, like test_all.json")
    unknown = sorted(set(domains or []) - set(idx))
    if unknown:
        raise OSWorldError(f"{index}: no domain {', '.join(unknown)}; it has {', '.join(sorted(idx))}")
    base = examples or _examples_dir(index.parent)
    out = []
    for domain, ids in idx.items():
        if domains and domain not in domains:
            continue
        for tid in ids:
            path = base / domain / f"{tid}.json"
            if not path.exists():
                raise OSWorldError(f"{index}: task {domain}/{tid} listed but {path} is missing")
            out.append(load_task_file(path))
    return out


def load_path(path: Path | str, domains: list[str] | None = None) -> list[OSWorldTask]:
    """A task file, a directory of them (recursively), an `evaluation_examples/` dir, or an index file."""
    path = Path(path)
    if path.is_file():
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise OSWorldError(f"cannot read {path}: {e}") from None
        if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
            return load_index(path, domains)
        return [parse_task(data, str(path), path.parent.name)]
    if not path.is_dir():
        raise OSWorldError(f"no OSWorld task file or directory at {path}")
    if (path / "test_all.json").is_file():
        return load_index(path / "test_all.json", domains)
    tasks = [load_task_file(f) for f in sorted(path.rglob("*.json")) if f.name != "template.json"]
    return [t for t in tasks if not domains or t.domain in domains]
