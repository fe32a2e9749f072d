"""GUI-DFS: explore an app, keep every transition with an effect as a unit skill.

Each state's controls are tried in turn; the screens they open (menus, dialogs) are explored shallowest
first, so every menu's items come before any submenu's (a long submenu cannot spend the budget before
the last menu is opened). A scrolled menu and a menu opened in a value context or mode are entered at once.

After each action the explorer observes (the env settles first), computes the typed effects of the
change (skills.effects: values, toggle states, dialogs, title, focus, an opened menu) and records the
transition in the UI graph: no change / value change (same state, a display changed) / new state /
known state / app closed / error dialog. A skill is made only where an effect was seen, and verified
by skills.verify (replays from reset plus a negative control). Backtracking and the total action
budget live in skills.navigate: every action and reset is counted.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cua.actions import RightClick, Scroll, action_from_dict
from cua.env.base import EnvError
from cua.perception.elements import Observation, UIElement
from skills.candidates import Candidate, candidates, steps_for
from skills.effects import WINDOW_ROLES, diff_effects, is_menu_item, pixel_mark, skill_effects
from skills.graph import StateKey, UIGraph, base_key, is_visible, state_key, visible_signatures
from skills.library import SkillLibrary
from skills.skill import Skill
from skills.navigate import CLOSE_WORDS, BudgetExhausted, CountingEnv, Navigator, shown_title
from skills.order import StateOrder, disabled_controls, mode_depth
from skills.probe import plain_checks, probe_menu, since_context
from skills.profile import Profile, clean_name, is_enabled, scroll_edge, shown_name, under_arrows
from skills.profile import candidates as clickable
from skills.units import SEP, unit_skill
from skills.verify import verify_batch, verify_skill

VERIFY_BATCH = 6  # skills verified together: skills that share a negative control share its run
SCROLL_ITEMS = 5  # a long menu scrolls by a screen less this many items: they show before and after
# the most notches one scroll action may take (cua.actions.Scroll's bound)
MAX_NOTCHES = next(m.le for m in Scroll.model_fields["dy"].metadata if getattr(m, "le", None) is not None)
ERROR_WORDS = ("error", "warning", "failed", "cannot", "could not")
# What only closes the app or a document: denied by the default profile, tried in a sandbox, whose app
# the explorer restarts (its skill: the window closes)
ENDS_APP = re.compile(r"^(quit|exit)\b|^close( window| tab| all| document)?$", re.IGNORECASE)


@dataclass
class Budget:
    max_actions: int = 300  # every action counts: exploration, backtracking, verification, probes, resets
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
    unverified: int = 0
    effects: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    stopped: str = ""


class Explorer(StateOrder, Navigator):
    """Depth-first explorer over one env; writes the graph and the library as it goes."""

    def __init__(self, env: Any, library: SkillLibrary, graph: UIGraph, profile: Profile, budget: Budget,
                 app: str, verify_runs: int = 2, on_progress: Callable[[Stats], None] | None = None,
                 only: str | None = None, screens: str | Path | None = None, pool: Any = None) -> None:
        self.lib, self.graph, self.profile, self.budget = library, graph, profile, budget
        self.env = CountingEnv(env, self)
        self.app, self.verify_runs, self.on_progress = app, max(1, verify_runs), on_progress
        self.stats = Stats()
        self.pool = pool  # skills.workers.WorkerPool when several explorers share the graph
        # a sandbox is thrown away: a command that only closes the app is tried there (and reset from)
        self.disposable = getattr(env, "name", "") == "sandbox"
        self.screens = Path(screens) if screens else None  # a PNG per new state, when given
        self.only = re.compile(only, re.IGNORECASE) if only else None  # start-state controls to explore
        self.volatile: set[str] = set()
        self.volatile_slots: set[str] = set()
        self.start_values: dict[str, str] = {}
        self.start_title = ""
        self.start_obs: Observation | None = None
        self.root: StateKey | None = None
        self.t0 = time.monotonic()
        self._obs: Observation | None = None
        self._bad_states: dict[str, int] = {}
        self._root_wins: int | None = None
        self._pre: Observation | None = None
        self.escape_useless: dict[str, int] = {}
        self.escape_misses: set[str] = set()
        self.pending: list[str] = []  # made, not yet verified (verified in batches)
        self._changers: dict[str, list[tuple[dict[str, Any], list[str], str, Observation]]] = {}
        self._idle: dict[str, set[str]] = {}  # per state: controls that showed no effect of their own there
        self._openers: dict[str, set[str]] = {}  # per state: controls that opened a menu there
        self._plain_checks = False  # the toolkit marks check items as plain menu items (Qt): probe those too
        self._follow_base: dict[str, Observation] = {}  # per value context: the screen after its click again
        self._spent: dict[int, int] = {}  # actions used exploring states of each rank (_rank), for fair shares
        self._made_at: dict[str, tuple[str, str]] = {}  # skill -> (state, control) where it was explored
        self._keys_done: set[str] = set()  # value contexts whose one-click controls were taken (_keys_left)
        self._enabling: dict[str, set[str]] = {}  # per mode: its menus that enable what the start screen's showed disabled

    def progress(self) -> None:
        self.stats.seconds = time.monotonic() - self.t0
        if self.on_progress:
            self.on_progress(self.stats)

    def save_screen(self, key: StateKey, obs: Observation) -> str | None:
        if self.screens is None or obs.screenshot is None:
            return None
        self.screens.mkdir(parents=True, exist_ok=True)
        path = self.screens / f"{key.exact}.png"
        obs.image().save(path, compress_level=1)
        return str(path)

    # -- classification -------------------------------------------------------------------------
    def classify(self, src: StateKey, new: Observation) -> str:
        if not [e for e in new.elements if is_visible(e, new.size)]:
            return "app_closed"
        key = state_key(new)
        if key == src or key.exact == base_key(src.exact):
            return "value_change" if diff_effects(self._pre, new, self.volatile_slots, self.volatile) else "no_change"
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
            self.begin()
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
                spent, cls = self.stats.total_actions, self._rank(st)
                try:
                    if path is None:
                        self.graph.mark_done(st["key"])
                        continue
                    self.explore(st, path)
                finally:
                    self._spent[cls] = self._spent.get(cls, 0) + self.stats.total_actions - spent
                    if self.pool is not None:
                        self.pool.release(st["key"])
            self.flush()
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

    def begin(self) -> None:
        """A fresh start state (its reset not counted), looked at a few times to learn what changes by itself."""
        self.start_obs = self.reset(wait=30.0)
        self.stats.resets -= 1
        if not clickable(self.start_obs):
            raise EnvError(f"the app shows nothing to explore (no visible, enabled, named controls in "
                           f"{len(self.start_obs.elements)} elements); is AT-SPI working? try `cua observe`")
        second = self.observe()
        for _ in range(2):  # a few looks at the start state reveal what changes by itself
            self.learn_volatile(self.start_obs, second)
            if clickable(second):
                self.start_obs, second = second, self.observe()
        self.start_obs = second if clickable(second) else self.start_obs
        self.root = state_key(self.start_obs)
        self.start_values = self.values(self.start_obs)
        self.start_title = shown_title(self.start_obs)

    def _path_of(self, st: dict[str, Any]) -> list[tuple[StateKey, dict[str, Any] | None]] | None:
        """(key, step) pairs from the root to a stored state, rebuilt from its prefix."""
        path: list[tuple[StateKey, dict[str, Any] | None]] = [(self.root, None)]
        for step in st["prefix"]:
            path.append((StateKey(step["dst"], "", ""), step))
        if path[-1][0].exact != st["key"]:
            return None
        return path

    def explore(self, st: dict[str, Any], path: list[tuple[StateKey, dict[str, Any] | None]]) -> None:
        """Try every untried candidate of one state (new menus and dialogs are left open for the main loop)."""
        key = path[-1][0]
        depth = len(path) - 1
        names = st["path_names"]
        if depth:  # as the state was stored: nothing but denied controls left is not worth the way there
            stored, left = self._stored_left(st, key)
            if scroll_edge(stored) is None and all(self._denied(c, stored) for c in left):
                for c in left:
                    self.graph.add_transition(key, c.key, steps_for(c)[0], None, "denied")
                self._finish(key, st)
                return
        if not self.ensure_at(key, path):
            self._bad_states[key.exact] = self._bad_states.get(key.exact, 0) + 1
            if self._bad_states[key.exact] >= 2:
                self.note(f"state {' › '.join(names) or 'start'} cannot be reached reliably; skipped")
                self.graph.mark_done(key)
            return
        tried = self.graph.tried(key)
        cands = self._to_try(st, key, self._obs)
        keys_only = key.exact not in self._keys_done and bool(self._keys_left(st))
        if keys_only:  # the context's one-click controls now, its menus in the contexts' turn
            self._keys_done.add(key.exact)
            menus = self._menu_openers()
            rest = [c for c in cands if c.el.signature in menus]
            cands = [c for c in cands if c.el.signature not in menus]
        if not cands and depth == 0:  # the start state always has controls: this look was incomplete
            self._bad_states[key.exact] = self._bad_states.get(key.exact, 0) + 1
            if self._bad_states[key.exact] < 3:
                self.observe()
                return
            self.note("the start state showed no controls three times; stopping")
        edge = scroll_edge(self._obs) if depth > 0 else None  # a menu longer than the screen: scroll it
        if edge is not None:
            cands.append(Candidate(edge, "scroll"))
        if not self._try_each(st, path, cands, tried) or not self._try_each(st, path, self._retype(st, key), tried):
            return  # come back to this state on the next pass
        self.flush()
        if keys_only and any(c.key not in self.graph.tried(key) for c in rest):
            return  # left open for its menus
        self._finish(key, st)

    def _try_each(self, st: dict[str, Any], path: list[tuple[StateKey, dict[str, Any] | None]],
                  cands: list[Candidate], tried: set[str]) -> bool:
        """Try the candidates of state `st` not tried there yet, in order (False: the state could not be
        reached again)."""
        key, names = path[-1][0], st["path_names"]
        for n, cand in enumerate(cands):
            if cand.key in tried:
                continue
            if n >= self.budget.max_branch:
                self.note(f"state {' › '.join(names)}: branching limit {self.budget.max_branch} reached")
                break
            steps = steps_for(cand) if cand.kind != "scroll" else \
                [{**steps_for(Candidate(cand.el, "click"))[0], "kind": "scroll", "dy": 1}]
            if cand.kind != "scroll" and self._denied(cand, self._obs):
                self.graph.add_transition(key, cand.key, steps[0], None, "denied")
                continue
            if not self.ensure_at(key, path):
                self._bad_states[key.exact] = self._bad_states.get(key.exact, 0) + 1
                return False
            self.try_candidate(st, path, cand, steps)
        return True

    def _retype(self, st: dict[str, Any], key: StateKey) -> list[Candidate]:
        """In a mode whose menus enabled what the start screen's showed disabled (featherpad's Reload and
        Save All Files once a file is saved), its fields are typed into again, though typed elsewhere: the
        mode's value context (saved, then edited) is where those commands act."""
        if not st["prefix"] or st["prefix"][-1].get("context") != "mode" or key.exact not in self._enabling:
            return []
        tried = self.graph.tried(key)
        return [c for c in candidates(self._stored_obs(st), self.profile)  # a mode's screen counts as a start screen
                if c.kind == "type" and c.key not in tried]

    def _to_try(self, st: dict[str, Any], key: StateKey, obs: Observation) -> list[Candidate]:
        """The candidates of state `st` on the screen `obs`, less what is not redone there (in a value
        context: what is verified already, a menu with nothing left, a field typed before; in a mode:
        what was tried anywhere but menus)."""
        names, depth = st["path_names"], len(st["prefix"])
        only = set(st["candidates"]) if st.get("candidates") is not None else None
        if only is not None and st["prefix"] and st["prefix"][-1].get("context") == "mode":
            only |= self._mode_extras(obs)
        covered = under_arrows(obs)  # a long menu's items under its scroll arrows: clear after a scroll
        cands = [c for c in candidates(obs, self.profile, only, depth) if c.el.signature not in covered]
        if "~" in key.exact and names:  # inside a value context: what is verified already is not redone, nor
            # a menu with nothing left, nor typing into a field typed into before (it would only undo the context)
            skills, typed = self.lib.list(app=self.app, status="verified"), self.graph.tried_anywhere()
            done, verified = _verified_pairs(skills), {s.extra.get("target") for s in skills}
            base = st["prefix"][-2]["dst"] if len(st["prefix"]) > 1 else self.root.exact
            cands = [c for c in cands if ((names[-1], c.label) not in done or _opens_submenu(c))
                     and not (c.kind == "type" and c.key in typed) and not self._nothing_left(base, c.key, verified)]
        elif mode_depth(st):  # inside a mode: what was tried anywhere is not redone; menus are opened again,
            # submenus too: a Qt submenu's opener is a plain "menu item" (featherpad's Recently Modified)
            done, menus = self.graph.tried_anywhere(), self._menu_openers()
            cands = [c for c in cands if c.key not in done or _opens_submenu(c) or c.el.signature in menus]
        if depth == 0 and self.only is not None:
            cands = [c for c in cands if self.only.search(shown_name(c.el))]
        return cands

    def _denied(self, cand: Candidate, obs: Observation) -> bool:
        """The profile denies it (a dialog's Close/Cancel never; in a sandbox, a command that ends the app not)."""
        name = shown_name(cand.el)
        return self.profile.denied(name) and not _closes_dialog(cand.el, obs) and \
            not (self.disposable and ENDS_APP.search(name))

    def _stored_left(self, st: dict[str, Any], key: StateKey) -> tuple[Observation, list[Candidate]]:
        """The state as it was stored, and its candidates not tried there yet."""
        obs = self._stored_obs(st)
        tried = self.graph.tried(key)
        return obs, [c for c in self._to_try(st, key, obs) if c.key not in tried]

    def _stored_obs(self, st: dict[str, Any]) -> Observation:
        """The screen of a state as it was stored (its visible elements, the start screen's size)."""
        return Observation(elements=[UIElement.model_validate(e) for e in st["elements"]],
                           size=self.start_obs.size if self.start_obs is not None else (0, 0))

    def _finish(self, key: StateKey, st: dict[str, Any]) -> None:
        """A state explored: its menus' openers stored (for a resumed run), its value context opened, done."""
        if key == self.root:
            self.graph.set_meta("openers", json.dumps(sorted(self._openers.get(key.exact, set()))))
        self.graph.set_meta("menu_openers", json.dumps(sorted(self._menu_openers())))
        self.add_context(key, st)
        self.graph.mark_done(key)

    def perform(self, cand: Candidate, steps: list[dict[str, Any]]) -> tuple[bool, list[int] | None]:
        """Do a candidate's actions on the element as it is now; (ok, the point of its first pointer action)."""
        cur = self._obs.by_signature(cand.el.signature)
        if cur is None:
            return False, None
        x, y = cur.center
        ok, point = True, [x, y]
        if cand.kind == "scroll":
            return self.scroll_page(cur, steps[0]), point
        for i, a in enumerate(steps):
            if a["kind"] == "right_click":
                action = RightClick(x=x, y=y)
            elif "target" in a:
                action = action_from_dict({k: v for k, v in a.items() if k != "target"} | {"x": x, "y": y})
            else:
                action = action_from_dict(a)
                if "x" in a:
                    point = [a["x"], a["y"]]
            ok &= self.act(action, explore=i == 0)
        return ok, point

    def scroll_page(self, el: UIElement, step: dict[str, Any]) -> bool:
        """Scroll a long menu at item `el` by a screen less SCROLL_ITEMS items: one notch first, to see how
        far a notch moves it (GTK: 15 px), then the rest (at most MAX_NOTCHES). `step` records the notches: a replay from a
        fresh menu scrolls the same, and a menu that kept its offset no longer shows `el` (not scrolled
        again: skills.profile.scrolled_already)."""
        x, y = el.center
        ok = self.act(Scroll(x=x, y=y, dy=1), explore=True)
        obs = self.observe()
        now = obs.by_signature(el.signature)
        moved = el.bbox[1] - now.bbox[1] if now is not None and is_visible(now, obs.size) else 0
        notches = max(1, (obs.size[1] - SCROLL_ITEMS * el.bbox[3]) // moved) if ok and moved > 0 else 1
        notches = min(notches, MAX_NOTCHES)  # a notch that moved a pixel or two asked for 108 and crashed the run
        if notches > 1:
            ok &= self.act(Scroll(x=x, y=y, dy=notches - 1))
        step["dy"] = notches
        return ok

    def try_candidate(self, st: dict[str, Any], path: list[tuple[StateKey, dict[str, Any] | None]],
                      cand: Candidate, steps: list[dict[str, Any]]) -> None:
        """One candidate from the current (proven) state: act, classify, record, make and verify a skill."""
        key, depth, names = path[-1][0], len(path) - 1, st["path_names"]
        self._pre = self._obs
        t = time.monotonic()
        ok, point = self.perform(cand, steps)
        if point is None:
            self.graph.add_transition(key, cand.key, steps[0], None, "error")
            return
        new = self.observe()
        effect = self.classify(key, new) if ok else "error"
        effects = skill_effects(self.start_obs, self._pre, new, cand.el.signature, self.volatile_slots,
                                self.volatile) if ok else []
        # a new screen may differ in free text alone (notes-web's status line hidden): its check mark then tells
        bare = effect == "new_state" and not any(not e.inherited for e in effects)
        if ok and (effect in ("no_change", "known_state", "value_change") or bare) and cand.kind == "click":
            self._plain_checks = self._plain_checks or plain_checks(self._pre)
            probed = probe_menu(self, st, cand.el, new, self._plain_checks, self._pre)  # reopen its menu
            if probed:  # `new` stays the screen the click left (the probe left its menu open)
                effects, effect = [*effects, *probed], "value_change" if effect == "no_change" else effect
        opened = any(e.kind == "menu_opened" and not e.inherited for e in effects)
        in_ctx = "~" in key.exact
        base = mode_depth(st)  # a mode's screen counts as a start screen: its menus are as deep as the root's
        ctx = in_ctx or base > 0
        new_key = state_key(new)
        if opened and base and not in_ctx and self._enables_in_menu(cand, new):
            self._enabling.setdefault(st["prefix"][base - 1]["dst"], set()).add(cand.el.signature)
        if in_ctx and opened and effect in ("new_state", "known_state"):  # a menu opened in a value context
            new_key = self.context_key(new)
            effect = "known_state" if self.graph.has_state(new_key) else "new_state"
        self.stats.effects[effect] = self.stats.effects.get(effect, 0) + 1
        if effect == "no_change" or (ok and effect in ("value_change", "known_state")
                                     and not any(not e.inherited for e in effects)):
            self._idle.setdefault(key.exact, set()).add(cand.el.signature)
        if opened:
            self._openers.setdefault(key.exact, set()).add(cand.el.signature)
        # a radio, tab or option already chosen shows nothing when chosen again: chosen after a sibling
        quiet = ok and cand.kind in ("click", "choose") and not any(not e.inherited for e in effects)
        sibling = _first_choice(cand, self._pre) if quiet else None
        follow = quiet and in_ctx and sibling is None and effect in ("no_change", "value_change")
        if effect in ("no_change", "error", "app_closed"):
            self.graph.add_transition(key, cand.key, steps[0], new_key if effect != "error" else None, effect,
                                      time.monotonic() - t)
            if effect == "app_closed":
                self.note(f"{' › '.join(names + [clean_name(cand.el.name)])} closed the app; reset")
                child = [*names, *cand.labels]
                if self.disposable and cand.kind == "click" and effects and self.lib.get(" › ".join(child)) is None:
                    self.queue_verify(self.add_skill(child, _actions(st["prefix"]) + steps, cand, new, effects).name)
                self.reset()
            self.try_again(st, path, cand, steps, sibling, follow)
            return
        rec = {"action": steps[0], "point": point, "dst": new_key.exact}
        child_names = [*names, *cand.labels] if cand.kind != "scroll" else names
        all_steps = _actions(st["prefix"]) + steps
        # a new screen (a menu, a dialog) is left open for the main loop, which takes the shallowest open state
        # first: every menu's own items before any submenu's, so a large submenu (a hundred languages) cannot
        # use up the budget before the last menu is opened; a scrolled menu is the same menu, entered at once
        # a typed field's states are not entered, nor what a value context opens (its screens are explored
        # from the state the context was made from: entering them again would only duplicate that work)
        # (in a value context, only its menus are entered: what else opens there was explored without it)
        explorable = effect == "new_state" and len(steps) == 1 and (not ctx or opened)
        descend = explorable and (cand.kind == "scroll" or (opened and ctx))
        if effect == "new_state" and not ctx and not opened and cand.kind == "click" and _reshapes(effects, cand) \
                and self._is_mode(new):
            rec = {**rec, "context": "mode"}
        if effect == "new_state":
            cand_sigs = sorted(visible_signatures(new) - (visible_signatures(self._pre) - under_arrows(self._pre))
                               - visible_signatures(self.start_obs))  # the start state's own controls
            self.graph.add_state(new_key, new, depth + 1 if cand.kind != "scroll" else st["depth"],
                                 st["prefix"] + [rec], child_names,
                                 screenshot=self.save_screen(new_key, new), candidates=cand_sigs)
            top = max((i + 1 for i, s in enumerate(st["prefix"]) if s.get("context")), default=0)  # a context too
            if not explorable or (cand.kind != "scroll" and (depth - top + 1 >= self.budget.max_depth
                                                          or not self.profile.descend(cand.el.name))):
                self.graph.mark_done(new_key)
        elif effect == "error_dialog":
            self.note(f"{' › '.join(child_names)} showed an error dialog")
        skill = None
        # a menu opened in a context or a mode is the start screen's menu again, unless no state had it
        # enabled before (a calculator's Number bases submenu, live in its scientific mode only)
        repeat = ctx and opened and (in_ctx or cand.key in self.graph.tried_anywhere())
        if cand.kind != "scroll" and effect != "error_dialog" and not repeat and sibling is None and not follow \
                and self.lib.get(" › ".join(child_names)) is None:
            # stored before the transition: a kill here leaves an unverified skill the next run verifies
            skill = self.add_skill(child_names, all_steps, cand, new, effects)
        self.graph.add_transition(key, cand.key, steps[0], new_key, effect, time.monotonic() - t)
        if skill is not None:
            self._made_at[skill.name] = (key.exact, cand.el.signature)
            self.queue_verify(skill.name)
        typed = cand.kind == "type" and effect in ("new_state", "known_state", "value_change") and any(
            e.kind == "text" and not e.inherited for e in effects)  # a document typed into: its title may change
        if skill is not None and not in_ctx and (typed or (len(steps) == 1 and cand.kind == "click" and (
                effect == "value_change" or _selects(cand, effects)))):
            if typed:  # typed, then selected: commands that act on a selection act
                rec = {**rec, "then": [*steps[1:], {"kind": "hotkey", "keys": ["ctrl", "a"]}]}
            self._changers.setdefault(key.exact, []).append((rec, child_names, skill.name, new))
        if skill is not None and cand.kind == "click" and any(e.state == "enabled" and e.after for e in effects):
            self.enabled_context(st, rec, child_names, new, effects)
        self.try_again(st, path, cand, steps, sibling, follow)
        self.progress()
        if descend and not self.graph.state(new_key)["done"]:
            if self.pool is not None and (self.pool.idle > 0 or not self.pool.claim(new_key.exact)):
                return  # left open: a waiting worker takes it
            try:
                self.explore(self.graph.state(new_key), path + [(new_key, rec)])
            finally:
                if self.pool is not None:
                    self.pool.release(new_key.exact)

    def try_again(self, st: dict[str, Any], path: list[tuple[StateKey, dict[str, Any] | None]], cand: Candidate,
                  steps: list[dict[str, Any]], sibling: Candidate | None, follow: bool) -> None:
        """A control that showed no effect of its own: chosen again after a sibling, or followed by the
        value context's click."""
        if sibling is not None:
            self.reselect(st, path, cand, steps, sibling)
        elif follow:
            self.follow_up(st, path, cand, steps)

    def reselect(self, st: dict[str, Any], path: list[tuple[StateKey, dict[str, Any] | None]], cand: Candidate,
                 steps: list[dict[str, Any]], first: Candidate) -> None:
        """The skill for a radio, tab or option that was already chosen: choose a sibling of its group
        first, then it (its menu reopened when the sibling closed it); its effect is what choosing it
        changed after the sibling's (this item selected again, the sibling's panel gone)."""
        names = [*st["path_names"], *cand.labels]
        if self.lib.get(" › ".join(names)) is not None or not self.ensure_at(path[-1][0], path):
            return
        ok, _ = self.perform(first, steps_for(first))
        mid = self.observe()
        opens = since_context(st["prefix"])
        shown = (el := mid.by_signature(cand.el.signature)) is not None and is_visible(el, mid.size)
        if not ok or (not shown and not opens):
            return
        reopen = [] if shown else _actions(opens)
        self._pre = self._obs if shown else self.replay(opens, fast=False)
        ok, point = self.perform(cand, steps)
        new = self.observe()
        effects = [e for e in diff_effects(mid, new, self.volatile_slots, self.volatile)
                   if not (e.kind == "focus" and e.signature == cand.el.signature)] if ok else []
        if ok and not effects and cand.kind == "click":  # a menu item's new state shows in its menu only
            off = cand.el.model_copy(update={"states": [x for x in cand.el.states if x not in ("checked", "selected")]})
            effects = probe_menu(self, {**st, "prefix": opens}, off, new, self._plain_checks, self._pre)
        if not effects:
            return
        skill = self.add_skill(names, [*_actions(st["prefix"]), *steps_for(first), *reopen, *steps], cand, new,
                               effects)
        self.queue_verify(skill.name)

    def follow_up(self, st: dict[str, Any], path: list[tuple[StateKey, dict[str, Any] | None]], cand: Candidate,
                  steps: list[dict[str, Any]]) -> None:
        """In a value context, a control that changed nothing shown may change what the next click does
        (a keypad's operator: after '*', '7' starts a new number instead of appending). Click it, then
        the context's own click again; its effect is the values that differ from that click alone."""
        last = st["prefix"][-1]
        if not last.get("context") or last.get("then") or last["action"].get("kind") != "click":
            return
        made = self.lib.get(SEP.join(st["path_names"]))
        if made is None or not any(e.kind == "text" and not e.inherited for e in made.postcondition.effects):
            return  # its click chose something (a file in a list): clicking it again adds nothing to read
        again = {k: v for k, v in last.items() if k not in ("context", "dst")}
        base = self._follow_base.get(st["key"])
        if base is None:  # from a reset: a screen that looks like the context may hide a pending operator
            self.reset()
            if not self.ensure_at(path[-1][0], path):
                return
            base = self._follow_base[st["key"]] = self.replay([again], fast=True)
        self.reset()
        if not self.ensure_at(path[-1][0], path):
            return
        self._pre = self._obs
        ok, _ = self.perform(cand, steps)
        new = self.replay([again], fast=True) if ok else None
        changed = [e for e in diff_effects(base, new, self.volatile_slots, self.volatile)
                   if e.kind == "text"] if new is not None else []
        if not changed:
            return
        shows = "; ".join(f"{e.name} shows {e.after!r}, not {e.before!r}" for e in changed)
        said = f"Its effect shows in what the next click does: {clean_name(st['path_names'][-1])} after it: {shows}."
        skill = self.add_skill([*st["path_names"], *cand.labels], [*_actions(st["prefix"]), *steps, again["action"]],
                               cand, new, changed, said, follow=1)
        self.queue_verify(skill.name)

    def add_skill(self, names: list[str], steps: list[dict[str, Any]], cand: Candidate, new: Observation,
                  effects: list[Any], said: str = "", **extra: Any) -> Any:
        """Store the unit skill that replays `steps` from the start and clicks `cand` (unverified yet);
        `said` is added to its description, `extra` to its extra."""
        skill = unit_skill(self.app, names, steps, cand, self._pre, new, self.start_obs, effects)
        skill.extra.update(state=state_key(new).exact, **extra)
        if said:
            skill.description = f"{skill.description} {said}"
        self.lib.add(skill)
        self.stats.skills += 1
        return skill

    def queue_verify(self, name: str) -> None:
        """Verify `name` with the next batch (skills.verify.verify_batch)."""
        self.pending.append(name)
        if len(self.pending) >= VERIFY_BATCH:
            self.flush()

    # -- value contexts -------------------------------------------------------------------------
    def context_key(self, obs: Observation) -> StateKey:
        """The key of a value context: the screen's key plus the values it shows."""
        screen = state_key(obs)
        return StateKey(f"{screen.exact}~{self.values_digest(obs)}", screen.abstract, screen.title)

    def add_context(self, key: StateKey, st: dict[str, Any]) -> None:
        """Controls that did nothing here may act once a value is shown (a keypad's 0, C or +/- on a
        display that reads 0; Cut or To Uppercase with text typed and selected) or another item chosen
        (Next Tab, which does nothing on the last tab, after First Tab): open a child state, the screen
        after one verified value-changing click, typed value or choosing menu command, where those
        controls, the ones shown disabled, the menus a mode enabled items in, and the menus (their items
        not yet verified) are tried again."""
        if "~" in key.exact or not self._changers.get(key.exact):
            return
        disabled = disabled_controls(st)
        openers = self._openers.get(key.exact, set()) if not mode_depth(st) else set()  # the root's context has them
        idle = self._idle.get(key.exact, set()) | openers | disabled | self._enabling.get(key.exact, set())
        if idle:  # a menu's context is the screen after its command closed it: the menu opens there again
            idle |= {(s["action"].get("target") or {}).get("signature") for s in st["prefix"]} & self._root_openers()
        verified = [c for c in self._changers[key.exact] if (s := self.lib.get(c[2])) is not None
                    and s.status == "verified"]
        if not idle or not verified:
            return
        rec, names, _, obs = verified[-1]  # the latest: a display far from its start value
        ctx = self.context_key(obs)  # the same screen, though typing may have changed its title
        if self.graph.has_state(ctx):
            return
        step = {**rec, "dst": ctx.exact, "context": True}
        self.graph.add_state(ctx, obs, st["depth"] + 1, st["prefix"] + [step], names,
                             screenshot=self.save_screen(ctx, obs), candidates=sorted(idle))

    def enabled_context(self, st: dict[str, Any], rec: dict[str, Any], names: list[str], obs: Observation,
                        effects: list[Any]) -> None:
        """A click that enabled menu items (Undo enables Redo, Cut enables Paste): open a value context, the
        screen after it, where the menus holding those items and the controls it enabled on screen are
        tried (what is verified already is not redone). A context inside a context is how Redo comes after
        Undo on typed text. A click that changed no value (Copy) left the screen it was clicked on: no context."""
        ctx = self.context_key(obs)
        if self.graph.has_state(ctx) or ctx.exact == st["key"]:
            return
        was_off = {e.signature for look in (self._pre, self.start_obs) for e in look.elements if not is_enabled(e)}
        now_on = {e.signature for e in obs.elements if e.signature in was_off and is_visible(e, obs.size)
                  and is_enabled(e) and clean_name(e.name)}
        step = {**rec, "dst": ctx.exact, "context": True}
        menus = {a["target"]["signature"] for e in effects if e.state == "enabled" and e.after
                 for a in e.reveal[:1] if (a.get("target") or {}).get("signature")}
        self.graph.add_state(ctx, obs, st["depth"] + 1, st["prefix"] + [step], names,
                             screenshot=self.save_screen(ctx, obs), candidates=sorted(menus | now_on))

    # -- modes --------------------------------------------------------------------------------------
    def _root_openers(self) -> set[str]:
        """The start screen's controls that opened a menu (stored once the start screen is explored)."""
        stored = self.graph.get_meta("openers")
        return self._openers.get(self.root.exact, set()) | set(json.loads(stored) if stored else ())

    def _menu_openers(self) -> set[str]:
        """Every control that opened a menu or submenu in any state (stored, for a resumed run)."""
        stored = self.graph.get_meta("menu_openers")
        return self._root_openers().union(*self._openers.values(), json.loads(stored) if stored else ())

    def _is_mode(self, new: Observation) -> bool:
        """A click changed the main window in place (a calculator's scientific view, a second tab, a find
        bar): the start screen's windows alone are open, its menus still there. Its screen is then a mode,
        where those menus and the controls shown disabled at the start are tried again."""
        if _windows(new) != _windows(self.start_obs):
            return False
        return any((e := new.by_signature(s)) is not None and is_visible(e, new.size) and is_enabled(e)
                   for s in self._root_openers())

    def _enables_in_menu(self, cand: Candidate, new: Observation) -> bool:
        """The menu `cand` opened in a mode shows enabled an item the same menu showed disabled when it
        was opened from the start screen."""
        menu = next((t["dst"] for t in self.graph.transitions(self.root.exact)
                     if t["signature"] == cand.key and t["dst"]), None)
        off = disabled_controls(st) if menu and (st := self.graph.state(menu)) else set()
        return any((e := new.by_signature(s)) is not None and is_visible(e, new.size) and is_enabled(e) for s in off)

    def _mode_extras(self, obs: Observation) -> set[str]:
        """The start screen's menus and disabled controls, as they show (enabled) in a mode's screen."""
        return {s for s in self._root_openers() | disabled_controls(self.graph.state(self.root))
                if (e := obs.by_signature(s)) is not None and is_visible(e, obs.size) and is_enabled(e)}

    # -- verification ---------------------------------------------------------------------------
    def verify(self, name: str) -> bool:
        """Replay a skill `verify_runs` times from a fresh start, then its negative control (skills.verify)."""
        status = verify_skill(self, name)
        if status == "verified":
            self.stats.verified += 1
        elif status == "failed":
            self.stats.failed += 1
        else:
            self.stats.unverified += 1
        return status == "verified"

    def flush(self) -> None:
        """Verify the skills made since the last flush (skills.verify.verify_batch)."""
        todo, self.pending = self.pending, []
        if not todo:
            return
        for name, status in verify_batch(self, todo).items():
            if status == "failed" and name in self._made_at:  # what it showed may have been the click before's
                # (galculator's +/- on 0 shows only in the next key: '+' then read '-0'): tried in a context
                src, sig = self._made_at[name]
                self._idle.setdefault(src, set()).add(sig)
            if status == "verified":
                self.stats.verified += 1
            elif status == "failed":
                self.stats.failed += 1
            else:
                self.stats.unverified += 1
        self.progress()

    def verify_pending(self) -> None:
        """Skills of this app left unverified by an earlier (killed) run."""
        for s in self.lib.list(app=self.app, status="unverified"):
            if s.provenance == "explored" and not s.extra.get("checked"):
                self.verify(s.name)


def _windows(obs: Observation) -> set[str]:
    return {e.signature for e in obs.elements if e.role.lower() in WINDOW_ROLES and is_visible(e, obs.size)}


def _actions(prefix: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The actions of recorded steps, each step's `then` actions (a context's typing) after its click."""
    return [a for s in prefix for a in (s["action"], *s.get("then", ()))]


def _verified_pairs(skills: list[Skill]) -> set[tuple[str, str]]:
    """(parent, control) of verified skills: a control verified once is not redone."""
    return {tuple(p[-2:]) for s in skills if len(p := s.extra.get("ui_path") or s.name.split(SEP)) >= 2}


def _closes_dialog(el: UIElement, obs: Observation) -> bool:
    """A dialog's own Close or Cancel button: closing the dialog is safe (a denied 'Close' means the window)."""
    return clean_name(el.name).lower() in CLOSE_WORDS and "button" in el.role.lower() and any(
        d.role.lower() in ("dialog", "alert") and is_visible(d, obs.size) and d.contains(*el.center)
        for d in obs.elements)


ONE_OF_ROLES = ("radio button", "radio menu item", "menuitemradio", "page tab", "radio", "tab", "list item",
                "option")


def _first_choice(cand: Candidate, obs: Observation) -> Candidate | None:
    """For a radio, tab, list option or drop-down option that is already chosen (called when clicking it
    showed no effect): an unchosen one of its group (same role, same parent; another option of the
    drop-down), to choose first; else None."""
    el, on = cand.el, ("checked", "selected")
    if cand.kind == "choose":
        other = next((o for o in el.attrs.get("options") or () if o != cand.text), None)
        return Candidate(el, "choose", other) if el.value == cand.text and other is not None else None
    pixels = el.role.lower() == "menu item" and pixel_mark(obs, el.signature) is True  # a GTK model menu's radio

    def chosen(e: UIElement) -> bool | None:
        return pixel_mark(obs, e.signature) if pixels else any(x in e.states for x in on)

    # a plain menu item that is checked and stayed so when clicked is a radio (Qt marks no radio role)
    plain_radio = el.role.lower() == "menu item" and "checked" in el.states
    if not pixels and not plain_radio and (el.role.lower() not in ONE_OF_ROLES or not chosen(el)):
        return None
    return next((Candidate(e, "click") for e in obs.elements if e.role == el.role and e.path == el.path
                 and e.signature != el.signature and clean_name(e.name) and is_visible(e, obs.size)
                 and is_enabled(e) and chosen(e) is False), None)


def _reshapes(effects: list[Any], cand: Candidate) -> bool:
    """The click changed what the window offers: it showed or hid controls or bars, opened or closed a
    window, changed the title (another document) or enabled a control other than itself. Its own pressed
    or checked state alone (an editor's Bold button) makes no mode: the menus would be reopened in it for
    nothing (notes-web's Bold and Italic spent 50 of 400 actions so, and found no control)."""
    return any(not e.inherited and (e.kind in ("appeared", "disappeared", "window_opened", "window_closed", "title")
                                    or (e.kind == "state" and e.state == "enabled" and e.signature != cand.el.signature))
               for e in effects)


def _selects(cand: Candidate, effects: list[Any]) -> bool:
    """A menu command that only chose another of the tabs or items on screen (First Tab, not New, which
    adds a tab): what did nothing before it (Next Tab on the last tab) may act after it."""
    own = [e for e in effects if not e.inherited]
    return is_menu_item(cand.el) and all(e.kind in ("state", "focus", "title") for e in own) and any(
        e.kind == "state" and e.state == "selected" and "menu" not in e.role for e in own)


def _opens_submenu(c: Candidate) -> bool:
    role = c.el.role.lower()
    return "menu" in role and "item" not in role


__all__ = ["Budget", "BudgetExhausted", "Explorer", "Stats"]
