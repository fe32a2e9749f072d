"""The one table of OSWorld getter types -> functions (`GETTERS`), filled by `@getter` in each getter module."""

from __future__ import annotations

from typing import Any

GETTERS: dict[str, Any] = {}


def getter(name: str):
    """Register the decorated function as OSWorld's getter `name`."""
    def register(fn):
        GETTERS[name] = fn
        return fn
    return register
