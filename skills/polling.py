"""Bounded polling of the screen: look again until a condition holds or a deadline passes (no fixed
sleeps). The lowest of the skills modules: effects, the runner and the primitives all wait this way."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from cua.actions import Target
from cua.perception.elements import Observation
from cua.perception.ground import Grounding, GroundingError, ground

POLL = 0.05  # seconds between looks


def wait_for(env: Any, pred: Callable[[Observation], bool], timeout: float = 2.0,
             obs: Observation | None = None) -> tuple[Observation, bool]:
    """Observe until `pred(obs)` holds or `timeout` passes; (the last look, whether it held). `obs`: a
    look already taken, tried first."""
    deadline = time.monotonic() + timeout
    obs = obs or env.observe()
    while not pred(obs) and time.monotonic() < deadline:
        time.sleep(POLL)
        obs = env.observe()
    return obs, pred(obs)


def find(env: Any, target: Target, timeout: float = 2.0, obs: Observation | None = None
         ) -> tuple[Observation, Grounding]:
    """Where `target` is, looking again until it shows or `timeout` passes (a menu still opening);
    GroundingError, naming what was looked for, if it never does."""
    def grounds(o: Observation) -> bool:
        try:
            ground(target, o)
            return True
        except GroundingError:
            return False

    obs, _ = wait_for(env, grounds, timeout, obs)
    return obs, ground(target, obs)
