"""Grounding: a Target description -> an element of the observation -> a click point.

Minimal version (exact / case-insensitive text, role filter); the perception issue extends it.
"""

from __future__ import annotations

from dataclasses import dataclass

from cua.actions import Target
from cua.perception.elements import Observation, UIElement


class GroundingError(LookupError):
    """No element, or several equally good ones, match a target; the message lists candidates."""


@dataclass
class Grounding:
    element: UIElement
    point: tuple[int, int]
    score: float = 1.0


def ground(target: Target, obs: Observation) -> Grounding:
    cands = list(obs.elements)
    if target.signature:
        hit = obs.by_signature(target.signature)
        if hit is not None:
            return Grounding(hit, hit.center)
    if target.role:
        cands = [e for e in cands if target.role.lower() in e.role.lower()]
    if target.text:
        want = target.text.strip().lower()
        exact = [e for e in cands if e.name.strip().lower() == want]
        cands = exact or [e for e in cands if want in e.name.lower()]
    if not cands:
        raise GroundingError(f"nothing on screen matches {target.describe()}")
    cands.sort(key=lambda e: (e.bbox[1], e.bbox[0]))
    pick = cands[target.nth or 0] if (target.nth or 0) < len(cands) else None
    if pick is None:
        raise GroundingError(f"only {len(cands)} match(es) for {target.describe()}, nth={target.nth}")
    return Grounding(pick, pick.center)
