"""The agent: skills first, then a planner model; executor, safety and the run loop.

Entry point: `cua.agent.run_task(task, env, model="none", skills=None, ...) -> RunResult`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RunResult", "run_task"]


def __getattr__(name: str) -> Any:  # lazy: importing the package loads nothing heavy
    if name in __all__:
        from cua.agent import loop

        return getattr(loop, name)
    raise AttributeError(f"module 'cua.agent' has no attribute {name!r}")
