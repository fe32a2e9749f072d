"""`--strict-metrics`: OSWorld's metrics with the reference's known bugs fixed (docs/osworld_metrics.md).

By default cua scores as desktop-env 1.0.2 does, bugs included, so that scores compare with OSWorld's;
these replacements score what the task intends instead.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile

from cua.eval.osworld.metrics.slides import NS
from cua.eval.osworld.metrics.thunderbird import same_mbox_messages


def check_thunderbird_folder(result, reference, **kwargs) -> float:
    """Both mbox files hold the same messages (the reference skips every non-empty message)."""
    return same_mbox_messages(result, reference, reference_quirk=False, **kwargs)


def check_page_number_colors(pptx_file, rules):
    """The master's page-number colour (second-last srgbClr) is of the named hue, read as RRGGBB."""
    with zipfile.ZipFile(pptx_file) as z, z.open("ppt/slideMasters/slideMaster1.xml") as f:
        root = ET.parse(f).getroot()
    val = root.findall(".//a:solidFill//a:srgbClr", NS)[-2].get("val")
    if val is None:
        return 0
    r, g, b = int(val[0:2], 16), int(val[2:4], 16), int(val[4:6], 16)
    t = 50
    tests = {"red": r > g + t and r > b + t, "blue": b > g + t and b > r + t,
             "green": g > r + t and g > b + t, "black": r < t and g < t and b < t}
    return 0 if rules["color"] in tests and not tests[rules["color"]] else 1


def check_green_background(src_path, tgt_path):
    """Where the target is not black, the source is green-dominant (pixels indexed [row, column])."""
    import numpy as np
    from PIL import Image

    if src_path is None or tgt_path is None:
        return 0.0
    src = np.array(Image.open(src_path).convert("RGB"))
    tgt = np.array(Image.open(tgt_path).convert("RGB"))
    mask = np.any(tgt != 0, axis=2)
    r, g, b = (src[..., i].astype(int) for i in range(3))
    return 1.0 if bool(np.all(((g > r) & (g > b))[mask])) else 0.0


def check_image_size(src_path, rule):
    """Width/height as expected; only with ignore_transparent is the opaque content measured."""
    from PIL import Image

    if src_path is None:
        return 0.0
    img = Image.open(src_path)
    if rule.get("ignore_transparent", False) and (img.mode in ("RGBA", "LA") or "transparency" in img.info):
        bbox = img.convert("RGBA").split()[-1].getbbox()
        w, h = (0, 0) if bbox is None else (bbox[2] - bbox[0], bbox[3] - bbox[1])
    else:
        w, h = img.size
    ok_h = rule.get("height") is None or h == rule["height"]
    ok_w = rule.get("width") is None or w == rule["width"]
    return 1.0 if ok_h and ok_w else 0.0


STRICT = {f.__name__: f for f in (check_thunderbird_folder, check_page_number_colors, check_green_background,
                                  check_image_size)}
