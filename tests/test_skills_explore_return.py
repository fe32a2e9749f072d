"""How the explorer gets back to a state it explores from: Escape where it can close something, a
reset where it cannot, and a reset straight away for a dialog that reopens as it was left."""

from __future__ import annotations

from types import SimpleNamespace

from cua.actions import Click, Key
from cua.perception.elements import Observation, UIElement
from skills.graph import state_key
from skills.navigate import Navigator


class RememberingApp:
    """Edit › Preferences opens a dialog whose check box keeps its state while the app runs (only a
    reset clears it); a tool-bar button toggles a pressed state Escape does not undo."""

    def __init__(self) -> None:
        self.resets = self.actions = self.escapes = 0
        self.fresh()

    def fresh(self) -> None:
        self.menu = self.dialog = self.autosave = self.pressed = False

    def _el(self, role: str, name: str, x: int, y: int, *states: str, path: tuple[str, ...] = ()) -> UIElement:
        return UIElement(id=f"{role}:{name}", role=role, name=name, bbox=(x, y, 40, 16), source="a11y",
                         path=["application:demo", "frame:Demo", *path], states=["enabled", "showing", *states])

    def observe(self) -> Observation:
        els = [UIElement(id="f", role="frame", name="Demo", bbox=(0, 0, 400, 300), source="a11y",
                         path=["application:demo"], states=["enabled", "showing"]),
               self._el("menu", "Edit", 10, 10),
               self._el("toggle button", "Bold", 60, 10, *(["pressed"] if self.pressed else []))]
        if self.menu:
            els.append(self._el("menu item", "Preferences", 10, 30, path=("menu:Edit",)))
        if self.dialog:
            els += [UIElement(id="d", role="dialog", name="Prefs", bbox=(100, 100, 200, 100), source="a11y",
                              path=["application:demo"], states=["enabled", "showing"]),
                    self._el("check box", "Autosave", 110, 120, *(["checked"] if self.autosave else []),
                             path=("dialog:Prefs",))]
        return Observation(elements=els, size=(400, 300), window_title="Demo")

    def act(self, action):
        self.actions += 1
        if isinstance(action, Key):
            self.escapes += 1
            self.menu = self.dialog = False
        elif isinstance(action, Click):
            at = (action.x, action.y)
            if at == (30, 18):
                self.menu = not self.menu
            elif at == (80, 18):
                self.pressed = not self.pressed
            elif at == (30, 38) and self.menu:
                self.menu, self.dialog = False, True
            elif at == (130, 128) and self.dialog:
                self.autosave = not self.autosave
        return SimpleNamespace(ok=True)

    def reset(self) -> Observation:
        self.resets += 1
        self.fresh()
        return self.observe()


def _navigator(app: RememberingApp) -> Navigator:
    nav = Navigator.__new__(Navigator)
    nav.env, nav.pool, nav._obs = app, None, None
    nav.stats = SimpleNamespace(escapes=0, resets=0, notes=[])
    nav.volatile, nav.volatile_slots, nav.escape_useless, nav.escape_misses = set(), set(), {}, set()
    nav.start_obs = app.observe()
    nav.root, nav.start_values, nav.start_title = state_key(nav.start_obs), {}, "Demo"
    return nav


def _step(obs: Observation, name: str) -> dict:
    el = next(e for e in obs.elements if e.name == name)
    return {"action": {"kind": "click", "target": {"signature": el.signature}}, "point": list(el.center)}


def test_a_dialog_that_reopens_as_left_is_reached_from_a_reset_after_one_miss():
    app = RememberingApp()
    nav = _navigator(app)
    edit = _step(nav.start_obs, "Edit")
    nav.act(Click(x=30, y=18))
    menu = nav.observe()
    nav.act(Click(x=30, y=38))
    dialog = state_key(nav.observe())
    path = [(nav.root, None), (state_key(menu), edit), (dialog, _step(menu, "Preferences"))]
    costs = []
    for _ in range(3):  # tick the box (a new state), then come back to the dialog as it opened
        nav.act(Click(x=130, y=128))
        nav.observe()
        before = app.actions + app.resets
        assert nav.ensure_at(dialog, path)
        costs.append(app.actions + app.resets - before)
        assert not app.autosave
    # the first return tries Escape and the path (the box is still ticked: 3 actions lost), then a reset;
    # the later ones reset at once: a reset and the two clicks of the path
    assert costs == [6, 3, 3], costs
    assert app.escapes == 1


def test_escape_is_not_spent_where_nothing_popped_up():
    app = RememberingApp()
    nav = _navigator(app)
    nav.act(Click(x=80, y=18))  # Bold pressed: a mode of the main window, nothing Escape could close
    nav.observe()
    assert nav.ensure_at(nav.root, [(nav.root, None)])
    assert (app.escapes, app.resets) == (0, 1)
    nav.act(Click(x=30, y=18))  # an open menu: Escape closes it and the start is back without a reset
    nav.observe()
    assert nav.ensure_at(nav.root, [(nav.root, None)])
    assert (app.escapes, app.resets) == (1, 1)
