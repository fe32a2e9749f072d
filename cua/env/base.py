"""The one seam every backend implements: observe / act / reset / close (Gymnasium-style)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from cua.actions import Action
from cua.perception.elements import Observation
from cua.perception.ground import GroundingError, ground


class EnvError(RuntimeError):
    """An environment could not start or act; the message names the cause and the fix."""


class ActionCancelled(EnvError):
    """The action in progress was stopped by `cancel()` between two of its steps."""


class ActionResult(BaseModel):
    """What happened when an action ran."""

    action: dict[str, Any] = Field(..., description="The action as executed (JSON form, resolved point).")
    ok: bool = True
    error: str | None = None
    point: tuple[int, int] | None = Field(None, description="Screen point used by a pointer action.")
    changed: bool | None = Field(None, description="Whether the screen changed after the action.")
    settled: bool = Field(True, description="False when the settle wait hit its bound.")
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds: act, settle, total.")


@runtime_checkable
class Environment(Protocol):
    """A screen an agent can see and act on."""

    name: str

    def observe(self) -> Observation: ...

    def act(self, action: Action) -> ActionResult: ...

    def reset(self) -> Observation: ...

    def close(self) -> None: ...

    def __enter__(self) -> Environment: ...

    def __exit__(self, *exc: object) -> None: ...


class EnvBase:
    """Shared context-manager behaviour for backends."""

    name = "env"

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:  # pragma: no cover - overridden
        pass


def resolve_point(action: Any, obs: Observation | None, screen: tuple[int, int], end: bool = False) -> tuple[int, int] | None:
    """The screen point a pointer action aims at: its (x, y), its element's centre, or its grounded target.

    `end=True` resolves a drag's destination. Returns None when the action names no point (e.g. a
    scroll at the current pointer). Raises EnvError for off-screen points and unknown elements.
    """
    pre = "to_" if end else ""
    x, y = getattr(action, pre + "x", None), getattr(action, pre + "y", None)
    element_id = getattr(action, pre + "element_id", None)
    target = getattr(action, pre + "target", None)
    if x is not None and y is not None:
        if not (0 <= x < screen[0] and 0 <= y < screen[1]):
            raise EnvError(
                f"point ({x}, {y}) is off screen; the screen is {screen[0]}x{screen[1]} "
                f"(x in 0..{screen[0] - 1}, y in 0..{screen[1] - 1})"
            )
        return int(x), int(y)
    if element_id is None and target is None:
        return None
    if obs is None:
        raise EnvError("this action names an element but there is no observation to find it in; observe() first")
    if element_id is not None:
        try:
            return obs.element(element_id).center
        except KeyError as e:
            raise EnvError(str(e.args[0])) from None
    try:
        return ground(target, obs).point
    except GroundingError as e:
        raise EnvError(str(e)) from None
