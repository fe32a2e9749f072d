"""Shared helpers for the perception tests: images with real-font text, synthetic observations."""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageFont

from cua.perception.elements import UIElement

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def font(size: int = 15) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(DEJAVU, size)


def text_image(lines: list[tuple[int, int, str]], size: tuple[int, int] = (800, 300), fsize: int = 15,
               bg: str = "white", fg: str = "black") -> Image.Image:
    """An image with each (x, y, text) drawn in DejaVu Sans."""
    img = Image.new("RGB", size, bg)
    d = ImageDraw.Draw(img)
    f = font(fsize)
    for x, y, t in lines:
        d.text((x, y), t, fill=fg, font=f)
    return img


def app_window(menu_open: bool = False) -> Image.Image:
    """A fake editor window: a menu bar, a body line, and (optionally) an open drop-down menu."""
    img = Image.new("RGB", (1280, 800), (40, 40, 40))
    d = ImageDraw.Draw(img)
    d.rectangle((200, 100, 1000, 650), fill="white", outline="gray")
    d.rectangle((200, 100, 1000, 130), fill=(235, 235, 235))
    f = font(15)
    for x, word in ((215, "File"), (275, "Edit"), (335, "Search"), (420, "View"), (490, "Help")):
        d.text((x, 107), word, fill="black", font=f)
    d.text((220, 160), "The quick brown fox jumps over the lazy dog", fill="black", font=f)
    d.text((220, 400), "Saved to disk", fill="black", font=f)
    if menu_open:
        d.rectangle((330, 130, 560, 280), fill=(250, 250, 250), outline="gray")
        for i, item in enumerate(("Find", "Find Next", "Replace", "Go to Line")):
            d.text((345, 140 + 35 * i), item, fill="black", font=f)
    return img


def el(role: str, name: str, bbox: tuple[int, int, int, int], source: str = "a11y", **kw) -> UIElement:
    return UIElement(id="t", role=role, name=name, bbox=bbox, source=source, **kw)
