"""Moving an explored app between states: act (every action counted), observe, reset, replay, backtrack.

Every action the explorer sends (exploration, backtracking, verification, probes) and every reset
counts against one total budget (issue 17's accounting rule). A return to a state is accepted only
when the observed state key proves it, and for the start state only when the values shown (a
calculator's display, a field) are the start values too.
"""

from __future__ import annotations

import time
from typing import Any

from cua.actions import Click, Key, RightClick, Scroll, action_from_dict
from cua.env.base import EnvError
from cua.perception.elements import Observation
from skills.effects import WINDOW_ROLES, element_text, is_menu_item, slots, volatile_slots_of
from skills.graph import StateKey, _digest, base_key, is_visible, state_key, visible_signatures
from skills.profile import candidates, clean_name, scrolled_already

TAB_ROLES = ("page tab", "tab")

CLOSE_WORDS = ("close", "cancel")


def popups(obs: Observation) -> set[tuple[str, str]]:
    """The windows, dialogs and menu items a screen shows, by role and name."""
    return {(e.role.lower(), clean_name(e.name)) for e in obs.elements if is_visible(e, obs.size)
            and (e.role.lower() in WINDOW_ROLES or is_menu_item(e))}


def shown_title(obs: Observation) -> str:
    """The window title as shown, whitespace folded."""
    return " ".join((obs.window_title or "").split())


class BudgetExhausted(Exception):
    pass


class CountingEnv:
    """The explored env, with every action and reset counted against the explorer's budget (whoever
    sends it: exploration, backtracking, probes, the skill runner during verification)."""

    def __init__(self, env: Any, nav: Navigator) -> None:
        self.env, self.nav = env, nav

    def act(self, action: Any) -> Any:
        self.nav.spend()
        return self.env.act(action)

    def reset(self) -> Observation:
        self.nav.spend()
        self.nav.stats.resets += 1
        return self.env.reset()

    def observe(self) -> Observation:
        """A look; an app that crashed or a window that vanished mid-look reads as an empty screen
        (noted): a replay then fails, and the explorer resets (counted) and resumes."""
        try:
            return self.env.observe()
        except EnvError as e:
            self.nav.note(f"observe failed, the app is reset: {e}")
            return Observation()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)


class Navigator:
    """The explorer's movement layer (a mixin: needs env, budget, stats, pool, root, t0)."""

    env: Any
    budget: Any
    stats: Any
    pool: Any
    root: StateKey | None
    t0: float
    _obs: Observation | None
    volatile: set[str]
    volatile_slots: set[str]
    start_values: dict[str, str]
    start_title: str
    escape_useless: dict[str, int]  # per state key: times Escape failed to lead back onto the path
    escape_misses: set[str]  # states an Escape and the path from there did not reach (the app remembers)
    start_obs: Observation | None

    # -- one action, one look -------------------------------------------------------------------
    def observe(self) -> Observation:
        """A look at the screen; a cut-short (partial) or empty element walk is retried, twice at most."""
        for _ in range(3):
            self._obs = self.env.observe()  # an empty look when the app died: the caller resets
            if self._obs.elements and not self._obs.timings.get("a11y_partial"):
                break
        return self._obs

    def spend(self) -> None:
        """Count one action (or reset) against the total budget; raises when it is spent."""
        if (not self.pool.take_action(self.budget.max_actions) if self.pool is not None
                else self.stats.total_actions >= self.budget.max_actions):
            raise BudgetExhausted(f"{self.budget.max_actions} actions")
        self.stats.total_actions += 1
        self.check_budget_time()

    def act(self, action: Any, explore: bool = False) -> bool:
        """One action through the counting env (`explore`: it tries a candidate, counted apart too)."""
        if explore:
            self.stats.explore_actions += 1
        try:
            res = self.env.act(action)
        except EnvError as e:
            self.note(f"action {action.kind} failed: {e}")
            return False
        return bool(res.ok)

    def check_budget_time(self) -> None:
        if time.monotonic() - self.t0 >= self.budget.minutes * 60:
            raise BudgetExhausted(f"{self.budget.minutes:g} minutes")

    def note(self, text: str) -> None:
        if len(self.stats.notes) < 200:
            self.stats.notes.append(text)

    def reset(self, wait: float = 10.0) -> Observation:
        """A fresh app (counted as an action); waits, bounded, until its controls are readable."""
        for attempt in range(2):
            try:
                self._obs = self.env.reset()
                break
            except EnvError as e:  # a crashed or hung app: noted, tried once more
                self.note(f"reset failed ({e}); retrying")
                if attempt:
                    raise
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and (not candidates(self._obs) or
                                               (self.root is not None and state_key(self._obs) != self.root)):
            time.sleep(0.1)
            self.observe()
        return self._obs

    def learn_volatile(self, a: Observation, b: Observation) -> None:
        """Elements (and displayed values) that differ between two looks at one state change by themselves."""
        if state_key(a) == state_key(b):
            self.volatile |= visible_signatures(a) ^ visible_signatures(b)
            self.volatile_slots |= volatile_slots_of(a, b)

    def values(self, obs: Observation) -> dict[str, str]:
        """What the screen shows that its key leaves out: the displays' and fields' texts, and which tab
        of each tab bar is current (after First Tab, Next Tab acts; on the last tab it does nothing)."""
        shown = {s: element_text(e) for s, e in slots(obs).items() if s not in self.volatile_slots}
        return shown | {"tab:" + "/".join(e.path): e.signature for e in obs.elements
                        if e.role.lower() in TAB_ROLES and "selected" in e.states and is_visible(e, obs.size)}

    def values_digest(self, obs: Observation) -> str:
        return _digest(f"{k}={v}" for k, v in sorted(self.values(obs).items()))

    def at_start_values(self, obs: Observation) -> bool:
        """The displayed values (displays, fields) and the window title are those of the start state: a
        screen like the start's under another title shows another document (notes-web's File › New), and
        what is explored there would be stored as explored from the start."""
        now = self.values(obs)
        return all(now.get(s, v) == v for s, v in self.start_values.items()) and \
            shown_title(obs) == self.start_title

    # -- backtracking ---------------------------------------------------------------------------
    def replay(self, steps: list[dict[str, Any]], fast: bool) -> Observation:
        """Run recorded steps; fast = click the recorded points without observing in between. A step's
        `then` actions (a value context's typing) follow its click."""
        obs = self._obs
        for s in steps:
            a = s["action"]
            if a["kind"] == "scroll":  # a long menu: scrolled only where it does not show that part already
                obs = self.observe()
                if scrolled_already(a, obs):
                    continue
                x, y = obs.by_signature(a["target"]["signature"]).center
            elif fast and "point" in s:
                x, y = s["point"]
            else:
                obs = self.observe()
                el = obs.by_signature(a.get("target", {}).get("signature", ""))
                if el is None:
                    return obs
                x, y = el.center
            kind = a["kind"]
            if kind == "scroll":
                self.act(Scroll(x=x, y=y, dy=a["dy"]))
            elif kind == "right_click":
                self.act(RightClick(x=x, y=y))
            else:
                self.act(Click(x=x, y=y))
            for then in s.get("then", ()):
                self.act(action_from_dict(then))
        return self.observe()

    def reached(self, obs: Observation, target: StateKey) -> bool:
        key = state_key(obs)
        if "~" in target.exact:  # a value context: this screen showing these values
            return key.exact == base_key(target.exact) and f"{key.exact}~{self.values_digest(obs)}" == target.exact
        return key == target and (target != self.root or self.at_start_values(obs))

    def ensure_at(self, target: StateKey, path: list[tuple[StateKey, dict[str, Any] | None]]) -> bool:
        """Bring the app to state `target` (the last of `path`); True when the observed state proves it."""
        keys = [k for k, _ in path]
        steps = [s for _, s in path[1:]]
        closed = False  # an Escape (or Close) just led back onto the path
        for attempt in range(4):
            obs = self._obs or self.observe()
            if self.reached(obs, target):
                return True
            key = state_key(obs)
            if key in keys and (key != self.root or self.at_start_values(obs)):
                i = keys.index(key)
                obs = self.replay(steps[i:], fast=attempt == 0)
                if self.reached(obs, target):
                    return True
                if closed:  # the path from where Escape led went elsewhere: the app kept what was changed
                    self.escape_misses.add(target.exact)  # (a dialog reopens with its settings): reset next time
                closed = False
                continue
            useless = self.escape_useless
            if attempt == 0 and useless.get(key.exact, 0) < 2 and target.exact not in self.escape_misses \
                    and self.popped_up(obs):
                # Escape, then a Close/Cancel button: accepted only if the key lands on the path; where
                # that failed twice (a keypad's display), straight to a reset, which costs one action too
                self.stats.escapes += 1
                self.act(Key(key="esc"))
                self.observe()
                if closed := state_key(self._obs) in keys and self.at_start_values(self._obs):
                    continue
                useless[key.exact] = useless.get(key.exact, 0) + 1
                btn = next((e for e in self._obs.elements if "button" in e.role and is_visible(e, self._obs.size)
                            and clean_name(e.name).lower() in CLOSE_WORDS), None)
                if btn is not None:
                    self.act(Click(x=btn.center[0], y=btn.center[1]))
                    self.observe()
                    if closed := state_key(self._obs) in keys and self.at_start_values(self._obs):
                        continue
            self.reset()
            if state_key(self._obs) != keys[0]:
                self.note(f"reset reached {state_key(self._obs)} instead of the start state {keys[0]}")
        return self.reached(self.observe(), target)

    def popped_up(self, obs: Observation) -> bool:
        """The screen shows a window, dialog or open menu the start screen did not: something Escape may
        close. Elsewhere (a tool bar hidden, a key pressed) Escape goes nowhere, and a reset costs the same."""
        return bool(popups(obs) - popups(self.start_obs)) if self.start_obs is not None else True

    def go_start(self) -> None:
        """Back to the start state, values included: provably via Escape/Close, else a fresh reset."""
        if not self.ensure_at(self.root, [(self.root, None)]):
            self.reset()
