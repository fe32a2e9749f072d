"""GUI-DFS: explore an app depth-first, keep every effective transition as a verified unit skill.

After each action the explorer observes (the env settles first), classifies the effect (no change /
new state / known state / app closed / error dialog) and records it in the UI graph. It backtracks
the cheapest provable way: if the screen already shows a state on the current path, replay only the
rest of the path; else Escape, then a dialog's Close/Cancel, each accepted only when the observed
state key proves the return; else reset + replay the action prefix from the start state.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cua.actions import Click, Key, Scroll
from cua.env.base import EnvError
from cua.perception.elements import Observation, UIElement
from skills.graph import StateKey, UIGraph, is_visible, state_key, visible_signatures
from skills.library import SkillLibrary
from skills.profile import Profile, candidates, clean_name, scroll_edge
from skills.units import step_for, unit_skill

SCROLL_NOTCHES = 2  # per scroll of a long menu: less than a screenful, so no item is skipped
ERROR_WORDS = ("error", "warning", "failed", "cannot", "could not")
CLOSE_WORDS = ("close", "cancel")


@dataclass
class Budget:
    max_actions: int = 300  # exploratory actions (each tries one candidate); backtracking is counted apart
    minutes: float = 15.0
    max_depth: int = 4
    max_branch: int = 200  # candidates tried per state (an infinite list stops here)


@dataclass
class Stats:
    explore_actions: int = 0
    total_actions: int = 0
    resets: int = 0
    escapes: int = 0
    states: int = 0
    skills: int = 0
    verified: int = 0
    failed: int = 0
    effects: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    stopped: str = ""


class BudgetExhausted(Exception):
    pass


class Explorer:
    """Depth-first explorer over one env; writes the graph and the library as it goes."""

    def __init__(self, env: Any, library: SkillLibrary, graph: UIGraph, profile: Profile, budget: Budget,
                 app: str, verify_runs: int = 2, on_progress: Callable[[Stats], None] | None = None,
                 only: str | None = None, screens: str | Path | None = None, pool: Any = None) -> None:
        self.env, self.lib, self.graph, self.profile, self.budget = env, library, graph, profile, budget
        self.app, self.verify_runs, self.on_progress = app, verify_runs, on_progress
        self.stats = Stats()
        self.pool = pool  # skills.workers.WorkerPool when several explorers share the graph
        self.screens = Path(screens) if screens else None  # a PNG per new state, when given
        self.only = re.compile(only, re.IGNORECASE) if only else None  # start-state controls to explore
        self.volatile: set[str] = set()
        self.start_obs: Observation | None = None
        self.root: StateKey | None = None
        self.t0 = time.monotonic()
        self._obs: Observation | None = None
        self._bad_states: dict[str, int] = {}
        self._pre: Observation | None = None

    # -- low level ------------------------------------------------------------------------------
    def observe(self) -> Observation:
        """A look at the screen; a cut-short (partial) or empty element walk is retried, twice at most."""
        for _ in range(3):
            self._obs = self.env.observe()
            if self._obs.elements and not self._obs.timings.get("a11y_partial"):
                break
        return self._obs

    def act(self, action: Any, explore: bool = False) -> bool:
        if explore:
            self.check_budget()
            self.stats.explore_actions += 1
        self.stats.total_actions += 1
        try:
            res = self.env.act(action)
        except EnvError as e:
            self.note(f"action {action.kind} failed: {e}")
            return False
        return bool(res.ok)

    def check_budget(self) -> None:
        if (not self.pool.take_action(self.budget.max_actions) if self.pool is not None
                else self.stats.explore_actions >= self.budget.max_actions):
            raise BudgetExhausted(f"{self.budget.max_actions} actions")
        if time.monotonic() - self.t0 >= self.budget.minutes * 60:
            raise BudgetExhausted(f"{self.budget.minutes:g} minutes")

    def note(self, text: str) -> None:
        if len(self.stats.notes) < 200:
            self.stats.notes.append(text)

    def progress(self) -> None:
        self.stats.seconds = time.monotonic() - self.t0
        if self.on_progress:
            self.on_progress(self.stats)

    def reset(self, wait: float = 10.0) -> Observation:
        """A fresh app; waits (bounded polling) until its controls are readable, e.g. AT-SPI is up."""
        self.stats.resets += 1
        self._obs = self.env.reset()
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and (not candidates(self._obs) or
                                               (self.root is not None and state_key(self._obs) != self.root)):
            time.sleep(0.1)
            self.observe()
        return self._obs

    def save_screen(self, key: StateKey, obs: Observation) -> str | None:
        if self.screens is None or obs.screenshot is None:
            return None
        self.screens.mkdir(parents=True, exist_ok=True)
        path = self.screens / f"{key.exact}.png"
        obs.image().save(path, compress_level=1)
        return str(path)

    def learn_volatile(self, a: Observation, b: Observation) -> None:
        """Signatures that differ between two looks at the same state change by themselves (a clock)."""
        if state_key(a) == state_key(b):
            self.volatile |= visible_signatures(a) ^ visible_signatures(b)

    # -- candidates -----------------------------------------------------------------------------
    def candidates(self, obs: Observation, only: set[str] | None) -> list[UIElement]:
        return candidates(obs, only)

    # -- backtracking ---------------------------------------------------------------------------
    def replay(self, steps: list[dict[str, Any]], fast: bool) -> Observation:
        """Run recorded steps; fast = click the recorded points without observing in between."""
        obs = self._obs
        for s in steps:
            a = s["action"]
            if fast and "point" in s:
                x, y = s["point"]
            else:
                obs = self.observe()
                el = obs.by_signature(a.get("target", {}).get("signature", ""))
                if el is None:
                    return obs
                x, y = el.center
            self.act(Scroll(x=x, y=y, dy=a["dy"]) if a["kind"] == "scroll" else Click(x=x, y=y))
        return self.observe()

    def ensure_at(self, target: StateKey, path: list[tuple[StateKey, dict[str, Any] | None]]) -> bool:
        """Bring the app to state `target` (the last of `path`); True when the observed key proves it."""
        keys = [k for k, _ in path]
        steps = [s for _, s in path[1:]]
        for attempt in range(4):
            obs = self._obs or self.observe()
            key = state_key(obs)
            if key == target:
                return True
            if key in keys:
                i = keys.index(key)
                obs = self.replay(steps[i:], fast=attempt == 0)
                if state_key(obs) == target:
                    return True
                continue
            if attempt == 0:  # Escape, then a Close/Cancel button: accepted only if the key lands on the path
                self.stats.escapes += 1
                self.act(Key(key="esc"))
                self.observe()
                if state_key(self._obs) in keys:
                    continue
                btn = next((e for e in self._obs.elements if "button" in e.role and is_visible(e, self._obs.size)
                            and clean_name(e.name).lower() in CLOSE_WORDS), None)
                if btn is not None:
                    self.act(Click(x=btn.center[0], y=btn.center[1]))
                    self.observe()
                    if state_key(self._obs) in keys:
                        continue
            self.reset()
            if state_key(self._obs) != keys[0]:
                self.note(f"reset reached {state_key(self._obs)} instead of the start state {keys[0]}")
        return state_key(self.observe()) == target

    # -- classification -------------------------------------------------------------------------
    def classify(self, src: StateKey, new: Observation) -> str:
        if not [e for e in new.elements if is_visible(e, new.size)]:
            return "app_closed"
        key = state_key(new)
        if key == src:
            return "no_change"
        fresh = {e.signature for e in new.elements if is_visible(e, new.size)} - visible_signatures(self._pre)
        for e in new.elements:
            if e.signature in fresh and e.role in ("alert", "dialog") and \
                    any(w in clean_name(e.name).lower() for w in ERROR_WORDS):
                return "error_dialog"
        return "known_state" if self.graph.has_state(key) else "new_state"

    # -- the search -----------------------------------------------------------------------------
    def run(self, final_verify: bool = True) -> Stats:
        """Explore until the budget runs out or no open state is left; resumes a stored graph."""
        waiting = False
        try:
            self.start_obs = self.reset(wait=30.0)
            self.stats.resets -= 1
            if not candidates(self.start_obs):
                raise EnvError(f"the app shows nothing to explore (no visible, enabled, named controls in "
                               f"{len(self.start_obs.elements)} elements); is AT-SPI working? try `cua observe`")
            second = self.observe()
            for _ in range(2):  # a few looks at the start state reveal what changes by itself
                self.learn_volatile(self.start_obs, second)
                if candidates(second):
                    self.start_obs, second = second, self.observe()
            self.start_obs = second if candidates(second) else self.start_obs
            self.root = state_key(self.start_obs)
            stored_root = self.graph.get_meta("root")
            if stored_root and stored_root != self.root.exact:
                self.note("the start state differs from the stored graph's root (the app changed?)")
            if not stored_root:
                self.graph.set_meta("root", self.root.exact)
            if not self.graph.has_state(self.root):
                self.graph.add_state(self.root, self.start_obs, 0, [], [], self.save_screen(self.root, self.start_obs))
            while True:
                self.check_budget_time()  # every pass either acts, marks a state done, or runs into this
                st = self._next_state()
                if st is None:
                    if self.pool is not None and not self.pool.done and self.pool.others_busy():
                        if not waiting:  # another worker may still leave a state open for us
                            self.pool.set_idle(1)
                            waiting = True
                        time.sleep(0.1)
                        continue
                    self.stats.stopped = "graph fully explored" if not self.graph.open_states() \
                        else "nothing left within --only"
                    break
                if waiting:
                    self.pool.set_idle(-1)
                    waiting = False
                path = self._path_of(st)
                try:
                    if path is None:
                        self.graph.mark_done(st["key"])
                        continue
                    self.explore(st, path)
                finally:
                    if self.pool is not None:
                        self.pool.release(st["key"])
            if final_verify:
                self.verify_pending()
        except BudgetExhausted as e:
            self.stats.stopped = f"budget: {e}"
        finally:
            if waiting:
                self.pool.set_idle(-1)
        self.stats.states = self.graph.counts()["states"]
        self.progress()
        return self.stats

    def _next_state(self) -> dict[str, Any] | None:
        """The shallowest open state in scope (--only) that no other worker has claimed."""
        for st in self.graph.open_states():
            first = st["path_names"][0] if st["path_names"] else None
            if first is not None and self.only is not None and not self.only.search(first):
                continue
            if self.pool is None or self.pool.claim(st["key"]):
                return st
        return None

    def _path_of(self, st: dict[str, Any]) -> list[tuple[StateKey, dict[str, Any] | None]] | None:
        """(key, step) pairs from the root to a stored state, rebuilt from its prefix."""
        path: list[tuple[StateKey, dict[str, Any] | None]] = [(self.root, None)]
        for step in st["prefix"]:
            path.append((StateKey(step["dst"], "", ""), step))
        if path[-1][0].exact != st["key"]:
            return None
        return path

    def explore(self, st: dict[str, Any], path: list[tuple[StateKey, dict[str, Any] | None]]) -> None:
        """Try every untried candidate of one state, depth-first into new states."""
        key = path[-1][0]
        depth = len(path) - 1
        names = st["path_names"]
        only = set(st["candidates"]) if st.get("candidates") is not None else None
        if not self.ensure_at(key, path):
            self._bad_states[key.exact] = self._bad_states.get(key.exact, 0) + 1
            if self._bad_states[key.exact] >= 2:
                self.note(f"state {' › '.join(names) or 'start'} cannot be reached reliably; skipped")
                self.graph.mark_done(key)
            return
        tried = self.graph.tried(key)
        cands = self.candidates(self._obs, only)
        if depth == 0 and self.only is not None:
            cands = [e for e in cands if self.only.search(clean_name(e.name))]
        if not cands and depth == 0:  # the start state always has controls: this look was incomplete
            self._bad_states[key.exact] = self._bad_states.get(key.exact, 0) + 1
            if self._bad_states[key.exact] < 3:
                self.observe()
                return
            self.note("the start state showed no controls three times; stopping")
        edge = scroll_edge(self._obs) if depth > 0 else None  # a menu longer than the screen: scroll it
        items = [(el, "click") for el in cands] + ([(edge, "scroll")] if edge is not None else [])
        for n, (el, kind) in enumerate(items):
            sig = el.signature if kind == "click" else "scroll:" + el.signature
            if sig in tried:
                continue
            if n >= self.budget.max_branch:
                self.note(f"state {' › '.join(names)}: branching limit {self.budget.max_branch} reached")
                break
            step = step_for(el) if kind == "click" else {**step_for(el), "kind": "scroll", "dy": SCROLL_NOTCHES}
            if kind == "click" and self.profile.denied(el.name):
                self.graph.add_transition(key, sig, step, None, "denied")
                continue
            if not self.ensure_at(key, path):
                self._bad_states[key.exact] = self._bad_states.get(key.exact, 0) + 1
                return  # come back to this state on the next pass
            cur = self._obs.by_signature(el.signature)
            if cur is None:
                self.graph.add_transition(key, sig, step, None, "error")
                continue
            self._pre = self._obs
            t = time.monotonic()
            x, y = cur.center
            ok = self.act(Click(x=x, y=y) if kind == "click" else Scroll(x=x, y=y, dy=SCROLL_NOTCHES), explore=True)
            new = self.observe()
            effect = self.classify(key, new) if ok else "error"
            self.stats.effects[effect] = self.stats.effects.get(effect, 0) + 1
            new_key = state_key(new)
            if effect in ("no_change", "error", "app_closed"):
                self.graph.add_transition(key, sig, step, new_key if effect != "error" else None, effect,
                                          time.monotonic() - t)
                if effect == "app_closed":
                    self.note(f"{' › '.join(names + [clean_name(el.name)])} closed the app; reset")
                    self.reset()
                continue
            rec = {"action": step, "point": list(cur.center), "dst": new_key.exact}
            child_names = names + [clean_name(el.name)] if kind == "click" else names  # scrolling names nothing
            steps = [s["action"] for s in st["prefix"]] + [step]
            if effect == "new_state":
                cand = sorted(visible_signatures(new) - visible_signatures(self._pre))
                self.graph.add_state(new_key, new, depth + 1 if kind == "click" else st["depth"],
                                     st["prefix"] + [rec], child_names,
                                     screenshot=self.save_screen(new_key, new), candidates=cand)
                if kind == "click" and (depth + 1 >= self.budget.max_depth or not self.profile.descend(el.name)):
                    self.graph.mark_done(new_key)
            elif effect == "error_dialog":
                self.note(f"{' › '.join(child_names)} showed an error dialog")
            skill = None
            if kind == "click" and effect != "error_dialog" and self.lib.get(" › ".join(child_names)) is None:  # before the
                # transition: a kill here leaves an unverified skill that the next run verifies
                skill = unit_skill(self.app, child_names, steps, el, self._pre, new, self.start_obs, self.volatile)
                skill.extra["state"] = new_key.exact
                self.lib.add(skill)
                self.stats.skills += 1
            self.graph.add_transition(key, sig, step, new_key, effect, time.monotonic() - t)
            if skill is not None:
                self.verify(skill.name)
            self.progress()
            if effect == "new_state" and not self.graph.state(new_key)["done"]:
                if self.pool is not None and (self.pool.idle > 0 or not self.pool.claim(new_key.exact)):
                    continue  # left open: a waiting worker takes it
                try:
                    self.explore(self.graph.state(new_key), path + [(new_key, rec)])
                finally:
                    if self.pool is not None:
                        self.pool.release(new_key.exact)
        self.graph.mark_done(key)

    # -- verification ---------------------------------------------------------------------------
    def go_start(self) -> None:
        """Back to the start state: provably (observed key) via Escape/Close, else a fresh reset."""
        if not self.ensure_at(self.root, [(self.root, None)]):
            self.reset()

    def verify(self, name: str) -> bool:
        """Replay a skill `verify_runs` times from the start state (see skills.verify)."""
        from skills.verify import verify_skill

        ok = verify_skill(self, name)
        if ok:
            self.stats.verified += 1
        else:
            self.stats.failed += 1
        return ok

    def check_budget_time(self) -> None:
        if time.monotonic() - self.t0 >= self.budget.minutes * 60:
            raise BudgetExhausted(f"{self.budget.minutes:g} minutes")

    def verify_pending(self) -> None:
        """Skills of this app left unverified by an earlier (killed) run."""
        for s in self.lib.list(app=self.app, status="unverified"):
            if s.provenance == "explored":
                self.verify(s.name)


__all__ = ["Budget", "BudgetExhausted", "Explorer", "Stats"]
