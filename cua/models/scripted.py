"""A scripted model: replies read in order from a JSONL file (tests, demos, benchmarks).

One line per reply. A line is either
- a JSON string: the reply text as is (e.g. "click(text=\\"File\\")");
- {"reply": X}: X as reply text (objects are JSON-encoded);
- {"tool": {...}, "format": "anthropic"|"openai"}: a provider tool action (computer-use replies);
- {"status": 503}: a transient HTTP failure (retried by clients; the fake server returns it);
- any other object: the object itself, JSON-encoded, is the reply (e.g. {"plan": [...]}).
Optional keys on wrapper objects: "usage": {"prompt_tokens": N, "completion_tokens": M}, "delay": s.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cua.models.base import ModelError, ModelReply, Prompt, Usage, cost_of

WRAPPER_KEYS = {"reply", "tool", "format", "status", "usage", "delay"}


@dataclass
class ScriptEntry:
    text: str = ""
    tool: dict[str, Any] | None = None
    tool_format: str = ""
    status: int | None = None
    usage: dict[str, int] = field(default_factory=dict)
    delay: float = 0.0


def parse_entry(value: Any, where: str = "script") -> ScriptEntry:
    """One script line (already JSON-decoded) -> ScriptEntry."""
    if isinstance(value, str):
        return ScriptEntry(text=value)
    if not isinstance(value, dict):
        raise ValueError(f"{where}: each line must be a JSON string or object, got {type(value).__name__}")
    if not (set(value) & WRAPPER_KEYS) or (set(value) - WRAPPER_KEYS):
        return ScriptEntry(text=json.dumps(value))
    reply = value.get("reply", "")
    return ScriptEntry(
        text=reply if isinstance(reply, str) else json.dumps(reply),
        tool=value.get("tool"), tool_format=value.get("format", "anthropic" if value.get("tool") else ""),
        status=value.get("status"), usage=dict(value.get("usage") or {}), delay=float(value.get("delay") or 0),
    )


def load_script(path: Path | str) -> list[ScriptEntry]:
    """Read a JSONL script; errors name the file and line."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"scripted model: no script file {str(path)!r}; give scripted:PATH to a JSONL of replies")
    entries = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            entries.append(parse_entry(json.loads(line), f"{path}:{n}"))
        except json.JSONDecodeError as e:
            raise ModelError(f"{path}:{n}: not JSON ({e.msg}); each line is one JSON reply") from None
        except ValueError as e:
            raise ModelError(str(e)) from None
    return entries


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ScriptedModel:
    """Plays a script back; records every prompt it was given (`.prompts`) for inspection."""

    def __init__(self, script: Path | str | list[Any], *, stepwise: bool = False,
                 max_image_size: tuple[int, int] = (1280, 800), name: str | None = None):
        if isinstance(script, list):
            self.entries = [parse_entry(v) for v in script]
            self.name = name or "scripted"
        else:
            self.entries = load_script(script)
            self.name = name or f"scripted:{Path(script).name}"
        self.stepwise = stepwise
        self.max_image_size = max_image_size
        self.usage = Usage()
        self.prompts: list[Prompt] = []
        self._next = 0

    def complete(self, prompt: Prompt) -> ModelReply:
        self.prompts.append(prompt)
        usage = Usage(calls=1)
        while True:
            if self._next >= len(self.entries):
                raise ModelError(f"{self.name}: script exhausted after {len(self.entries)} replies")
            entry = self.entries[self._next]
            self._next += 1
            if entry.delay:
                time.sleep(entry.delay)
            if entry.status is None or entry.status < 400:
                break
            usage.retries += 1  # a transient failure, retried at once
        usage.prompt_tokens = entry.usage.get("prompt_tokens", estimate_tokens(prompt.system + prompt.text))
        usage.completion_tokens = entry.usage.get("completion_tokens", estimate_tokens(entry.text or "x"))
        usage.cost = cost_of(self.name, usage.prompt_tokens, usage.completion_tokens)
        self.usage.add(usage)
        return ModelReply(text=entry.text, tool_action=entry.tool, tool_format=entry.tool_format, usage=usage)
