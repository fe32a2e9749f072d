"""A menu longer than the screen (mousepad's Document › Filetype › Source, 55 languages on an 800-pixel
screen): GTK draws scroll arrows over its first and last rows and scrolls the menu to its end while the
pointer rests on the lower arrow. The explorer scrolled at the cut item, under that arrow, so the menu
jumped to its end, and the six languages in its middle never showed; the four under the arrows were
clicked and chose nothing. Now the rows under the arrows are not candidates, the scroll is at the row
nearest the screen's middle, by a screen less a few rows (measured: one notch first), and a replay
skips a scroll where the menu kept its offset (GTK keeps it while the app runs)."""

from __future__ import annotations

from cua.actions import Click
from cua.env import make_env
from cua.perception.elements import Observation, UIElement
from skills.explorer import Budget, Explorer
from skills.graph import UIGraph, is_visible
from skills.library import SkillLibrary
from skills.profile import load_profile, scroll_edge, scrolled_already, under_arrows

ROW = 25


def _menu(first: int, names: list[str], height: int = 800) -> Observation:
    """A submenu whose rows start at y=first; rows below the screen are cut, rows above it clipped."""
    els = [UIElement(id="m", role="menu", name="Source", bbox=(400, 400, 100, ROW), source="a11y")]
    for i, n in enumerate(names):
        y, h = first + i * ROW, ROW
        if y < 0:
            y, h = 0, h + y
        h = min(h, height - y)
        els.append(UIElement(id=f"e{i}", role="radio menu item", name=n, bbox=(600, y, 200, max(h, 0)),
                             source="a11y", path=["menu:Source"], states=["enabled", "showing"]))
    return Observation(size=(1280, height), elements=els)


NAMES = [f"L{i:02d}" for i in range(55)]


def test_a_scroll_that_hardly_moved_asks_for_no_more_notches_than_an_action_takes():
    """A first notch that moved the menu one pixel asked for 675 notches at once (a 30-minute mousepad
    exploration died asking for 108), which no Scroll action takes: the rest is capped at what one may do."""
    from skills.explorer import MAX_NOTCHES

    class Stub:  # what scroll_page uses of the explorer: act and observe
        acts: list = []

        def act(self, action, explore=False):
            self.acts.append(action)
            return True

        def observe(self):
            return _menu(499, NAMES)

    before = _menu(500, NAMES)
    at = next(e for e in before.elements if e.name == "L10")
    step = {"kind": "scroll", "dy": 1}
    assert Explorer.scroll_page(Stub(), at, step)
    assert step["dy"] == MAX_NOTCHES and [a.dy for a in Stub.acts] == [1, MAX_NOTCHES - 1]


def test_rows_under_the_arrows_are_left_for_after_a_scroll():
    top = _menu(21, NAMES)  # not scrolled: cut at the bottom only
    covered = {top.by_signature(s).name for s in under_arrows(top)}
    assert covered == {"L30", "L31"}  # 771-796 and the cut 796-800: the lower arrow's band
    scrolled = _menu(-300, NAMES)  # scrolled: clipped at the top too
    covered = {scrolled.by_signature(s).name for s in under_arrows(scrolled)}
    assert covered == {"L12", "L43"}  # the row at the top (0-25) and the row cut at the bottom (775-800)
    edge = _menu(-275, NAMES)  # scrolled to a row's edge: no row clipped, rows above the screen listed
    assert under_arrows(edge) == {e.signature for e in edge.elements if e.name in ("L11", "L42")}
    at_top = _menu(0, NAMES[:10])  # a short menu that pops up at the screen's top: no arrow
    assert under_arrows(at_top) == set()
    short = _menu(21, NAMES[:10])
    assert under_arrows(short) == set() and scroll_edge(short) is None


def test_a_long_menu_is_scrolled_at_its_middle_row_not_at_its_cut_row():
    obs = _menu(21, NAMES)
    at = scroll_edge(obs)
    assert at is not None and abs(at.center[1] - 400) <= ROW and at.signature not in under_arrows(obs)


def test_a_scroll_step_is_skipped_where_the_menu_kept_its_offset():
    obs = _menu(21, NAMES)
    step = {"kind": "scroll", "dy": 45, "target": {"signature": obs.elements[16].signature}}
    assert not scrolled_already(step, obs)
    assert scrolled_already(step, _menu(-600, NAMES))  # its row is above the screen now
    assert not scrolled_already({"kind": "click", "target": step["target"]}, _menu(-600, NAMES))


def test_every_language_of_a_long_gtk_menu_shows_clear_of_the_arrows(tmp_path):
    """A real mousepad: scroll Source page by page the way the explorer does; every language is, in one
    of the views, on screen and not under an arrow."""
    env = make_env("sandbox:mousepad", sources="a11y")
    lib, graph = SkillLibrary(tmp_path / "l.db"), UIGraph(tmp_path / "l.db")
    try:
        obs = env.reset()
        for name in ("Document", "Filetype", "Source"):
            el = next(e for e in obs.elements if e.name.strip() == name and is_visible(e, obs.size))
            env.act(Click(x=el.center[0], y=el.center[1]))
            obs = env.observe()
        menu = next(e for e in obs.elements if e.name.strip() == "Haxe").path
        every: set[str] = set()  # GTK lists only the rows on screen: every row seen in any view
        ex = Explorer(env, lib, graph, load_profile("default"),
                      Budget(max_actions=100, minutes=2), app="mousepad")
        clear, steps = set(), []
        for _ in range(6):
            rows = [e for e in obs.elements if e.path == menu and is_visible(e, obs.size)]
            every |= {e.name.strip() for e in rows}
            clear |= {e.name.strip() for e in rows if e.signature not in under_arrows(obs)}
            at = scroll_edge(obs)
            if at is None:
                break
            step = {"kind": "scroll", "dy": 1}
            ex._obs = obs
            assert ex.scroll_page(at, step)
            steps.append(step["dy"])
            obs = env.observe()
            if scroll_edge(obs) is not None:  # not at the menu's end: the row scrolled at is gone
                assert scrolled_already({**step, "target": {"signature": at.signature}}, obs)
        assert {"IDL", "J", "Java", "Kotlin", "Lean", "Haxe", "Lex"} <= every  # the ones the arrow skipped
        assert len(every) >= 50 and every <= clear, sorted(every - clear)
        assert all(n > 2 for n in steps), steps  # GTK: 15 px a notch, so a page is many notches
    finally:
        graph.close()
        lib.close()
        env.close()
