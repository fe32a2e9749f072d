"""The two baselines of explore_bench, held to the explorer's own standard.

Random clicks (DroidBot's random policy) and a breadth-first crawler (Crawljax/DroidBot BFS) choose
what to click differently from GUI-DFS, and nothing else differs: every click that showed an effect of
its own becomes a unit skill by the same code (skills.units), and is verified by the same code
(skills.verify: replays from a fresh reset plus a negative control), through the same counting env,
so exploration, backtracking, verification and resets all count against one budget for all three.
Coverage is then the same thing for all three: controls that became effect-verified skills.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

from cua.actions import Key
from skills.candidates import Candidate, candidates, steps_for
from skills.effects import skill_effects
from skills.explorer import Explorer
from skills.graph import is_visible, state_key
from skills.navigate import BudgetExhausted

RESTART = 0.05  # per step, the random walk restarts the app (DroidBot's random policy restarts it too)
ESCAPE = 0.05  # per step, it presses Escape instead of clicking
MAX_WALK = 20  # a walk that long restarts: its skills' replays would be as long


class Baseline(Explorer):
    """An Explorer whose search is replaced; skills and their verification are the explorer's own."""

    flushed = False  # a verification batch ran since the flag was cleared (it leaves the app elsewhere)

    def flush(self) -> None:
        self.flushed = self.flushed or bool(self.pending)
        super().flush()

    def choices(self) -> list[Candidate]:
        """What may be clicked on the current screen: the explorer's own candidates for a state below the
        start (no right-click on the content area), less denied ones."""
        return [c for c in candidates(self._obs, self.profile, None, depth=1)
                if not self.profile.denied(c.el.name)]

    def attempt(self, cand: Candidate, prefix: list[dict[str, Any]], names: list[str]) -> tuple[bool, Any]:
        """Click `cand` on the current screen; a skill when it showed an effect of its own.
        (did anything, the step as the graph records it)."""
        steps = steps_for(cand)
        self._pre = self._obs
        ok, point = self.perform(cand, steps)
        new = self.observe()
        if not ok or point is None:
            return False, None
        if not any(is_visible(e, new.size) for e in new.elements):
            return False, None  # the app closed
        effects = skill_effects(self.start_obs, self._pre, new, cand.el.signature, self.volatile_slots,
                                self.volatile)
        path = [*names, cand.label]
        if any(not e.inherited for e in effects) and self.lib.get(" › ".join(path)) is None:
            skill = self.add_skill(path, prefix + steps, cand, new, effects)
            self.queue_verify(skill.name)
        self.progress()
        return True, {"action": steps[0], "point": point, "dst": state_key(new).exact}

    def run(self, final_verify: bool = True) -> Any:
        try:
            self.begin()
            self.search()
        except BudgetExhausted as e:
            self.stats.stopped = f"budget: {e}"
        self.progress()
        return self.stats

    def search(self) -> None:
        raise NotImplementedError


class RandomWalk(Baseline):
    """Random clicks on the candidates of whatever screen is showing; restarts now and then."""

    seed = 0

    def search(self) -> None:
        rng = random.Random(self.seed)
        prefix: list[dict[str, Any]] = []
        names: list[str] = []
        while True:
            self.check_budget_time()
            cands = self.choices()
            roll = rng.random()
            if not cands or roll < RESTART or len(names) >= MAX_WALK:
                self.reset()
                prefix, names = [], []
                continue
            if roll < RESTART + ESCAPE:
                self.act(Key(key="esc"))
                self.observe()
                prefix.append({"kind": "key", "key": "esc"})
                names.append("Escape")
                continue
            self.flushed = False
            cand = rng.choice(cands)
            done, _ = self.attempt(cand, prefix, names)
            if not done or self.flushed:  # the app closed or moved on, or a batch was verified: a new walk
                self.reset()
                prefix, names = [], []
                continue
            prefix += steps_for(cand)
            names.append(cand.label)


class BreadthFirst(Baseline):
    """Breadth-first crawl: for each state (reset + replay its path), click each control once."""

    def search(self) -> None:
        seen = {self.root.exact}
        queue: deque[tuple[list[dict[str, Any]], list[str]]] = deque([([], [])])
        while queue:
            recs, names = queue.popleft()
            if self.goto(recs) is None:
                continue
            for sig in [c.el.signature for c in self.choices()]:
                cand = next((c for c in self.choices() if c.el.signature == sig), None) \
                    if self.goto(recs) is not None else None
                if cand is None:
                    continue
                done, rec = self.attempt(cand, [r["action"] for r in recs], names)
                if done and len(steps_for(cand)) == 1 and rec["dst"] not in seen:
                    seen.add(rec["dst"])
                    queue.append(([*recs, rec], [*names, cand.label]))

    def goto(self, recs: list[dict[str, Any]]) -> Any:
        """Reset and replay a recorded path, finding each target by its signature; None when one is gone."""
        obs = self.reset()
        for r in recs:
            if obs.by_signature(r["action"].get("target", {}).get("signature", "")) is None:
                return None
            obs = self.replay([r], fast=False)
        return obs
