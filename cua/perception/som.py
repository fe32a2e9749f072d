"""Set-of-mark image: each element's box outlined and numbered, for models and reports.

Labels sit outside the box (above it, else below, else inside a corner) so they do not hide the
element's own text, and are nudged away from labels already placed. Colours cycle through a palette
with white/black label text chosen for contrast.
Example: render_som(obs).save("som.png")
"""

from __future__ import annotations

from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

from cua.perception.elements import Observation, UIElement

PALETTE = [(230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 240, 240),
           (240, 50, 230), (210, 245, 60), (0, 128, 128), (170, 110, 40), (128, 0, 0), (0, 0, 128)]
FONT_PATHS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@lru_cache(maxsize=4)
def _font(size: int) -> ImageFont.ImageFont:
    for p in FONT_PATHS:
        try:
            return ImageFont.truetype(p, size)
        except OSError:
            continue
    return ImageFont.load_default()


def _text_colour(bg: tuple[int, int, int]) -> tuple[int, int, int]:
    lum = 0.299 * bg[0] + 0.587 * bg[1] + 0.114 * bg[2]
    return (0, 0, 0) if lum > 140 else (255, 255, 255)


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _place(box: tuple[int, int, int, int], lw: int, lh: int, size: tuple[int, int],
           taken: list[tuple[int, int, int, int]], others: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    """Label rectangle (x0, y0, x1, y1) outside the box: left, above, below, right, else an inside corner.

    First choice: a spot touching no other label and no other element; then one touching no label.
    """
    x, y, w, h = box
    W, H = size
    spots = [(x - lw, y), (x, y - lh), (x + w - lw, y - lh), (x, y + h), (x + w, y), (x + w - lw, y + h), (x, y)]
    rects = []
    for sx, sy in spots:
        sx, sy = min(max(0, sx), max(0, W - lw)), min(max(0, sy), max(0, H - lh))
        rects.append((sx, sy, sx + lw, sy + lh))
    me = (x, y, x + w, y + h)
    free = [r for r in rects if not any(_overlap(r, t) for t in taken)]
    for r in free:
        if not _overlap(r, me) and not any(_overlap(r, o) for o in others if o != me):
            return r
    return free[0] if free else rects[0]


def render_som(obs: Observation, elements: list[UIElement] | None = None, max_labels: int = 400) -> Image.Image:
    """A copy of the screenshot with numbered element boxes (label = the element id's number)."""
    base = obs.image().convert("RGB").copy()
    els = [e for e in (obs.elements if elements is None else elements) if e.bbox[2] > 0 and e.bbox[3] > 0]
    els = els[:max_labels]
    overlay = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    fsize = max(10, min(16, base.size[1] // 60))
    font = _font(fsize)
    taken: list[tuple[int, int, int, int]] = []
    area = base.size[0] * base.size[1]
    others = [(x, y, x + w, y + h) for x, y, w, h in (e.bbox for e in els) if w * h < area / 50]
    # small boxes first so their labels get the best spots; big containers take what is left
    for e in sorted(els, key=lambda e: e.bbox[2] * e.bbox[3]):
        colour = PALETTE[_index(e) % len(PALETTE)]
        x, y, w, h = e.bbox
        draw.rectangle((x, y, x + w - 1, y + h - 1), outline=(*colour, 255), width=2)
        label = e.id[1:] if e.id[:1] == "e" and e.id[1:].isdigit() else e.id
        left, top, right, bottom = draw.textbbox((0, 0), label, font=font)
        lw, lh = right - left + 6, bottom - top + 4
        rect = _place((x, y, w, h), lw, lh, base.size, taken, others)
        taken.append(rect)
        draw.rectangle(rect, fill=(*colour, 235))
        draw.text((rect[0] + 3 - left, rect[1] + 2 - top), label, fill=(*_text_colour(colour), 255), font=font)
    return Image.alpha_composite(base.convert("RGBA"), overlay).convert("RGB")


def _index(e: UIElement) -> int:
    digits = "".join(c for c in e.id if c.isdigit())
    return int(digits) if digits else hash(e.id) & 0xFFFF
