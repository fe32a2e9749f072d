"""Reading a menu row's check/radio indicator from pixels (GTK model menus expose no checked state).
The rows are cut from real mousepad screenshots (Adwaita): C unmarked and marked, Word Wrap checked,
Auto Indent unchecked, Tab Size (a submenu: no indicator), Boo unmarked."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from cua.perception.elements import Observation, UIElement
from cua.perception.visual_check import row_mark
from skills.effects import Effect, pixel_mark

ROWS = Image.open(Path(__file__).parent / "data" / "gtk_menu_marks.png").convert("RGB")
BOX = [(2, 5 + 25 * i, 296, 25) for i in range(6)]


def test_marked_unmarked_and_no_indicator():
    assert [row_mark(ROWS, b) for b in BOX] == [False, True, True, False, None, False]


def test_a_hovered_row_reads_the_same():
    """The row under the pointer is drawn in the selection colour with a light indicator."""
    hovered = ROWS.copy()
    x, y, w, h = BOX[1]
    px = hovered.load()
    for i in range(x, x + w):
        for j in range(y, y + h):
            r, g, b = px[i, j]
            px[i, j] = (74, 144, 217) if r > 200 and g > 200 and b > 200 else (255, 255, 255)
    assert row_mark(hovered, BOX[1]) is True
    assert row_mark(hovered, BOX[0]) is False


def test_a_pixel_state_effect_checks_the_row_on_screen():
    item = UIElement(id="1", role="menu item", name="C", bbox=BOX[1], source="a11y",
                     states=["enabled", "showing"], path=["application:mousepad", "frame:", "menu:Source"])
    on = Observation(elements=[item], screenshot=ROWS, size=ROWS.size)
    off = Observation(elements=[item.model_copy(update={"bbox": BOX[0]})], screenshot=ROWS, size=ROWS.size)
    eff = Effect(kind="state", signature=item.signature, name="C", state="checked", before=False, after=True,
                 pixels=True)
    assert pixel_mark(on, item.signature) is True and eff.check(on) is None
    assert "unmarked (pixels)" in eff.check(off)
    tab = off.model_copy(update={"elements": [item.model_copy(update={"bbox": BOX[4]})]})
    assert "no indicator" in eff.check(tab)
