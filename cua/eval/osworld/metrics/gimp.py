"""OSWorld's GIMP metrics: exported images compared by pixels, SSIM/MSE structure, brightness,
saturation, contrast, size; gimprc settings."""

from __future__ import annotations

import os
import time


def _img(path):
    from PIL import Image

    return Image.open(path)


def compare_image_list(pred_img_path_list, gold_img_path_list) -> float:
    """Every predicted image equals its gold image pixel for pixel (resized/converted to the gold's)."""
    from PIL import Image, ImageChops

    if type(pred_img_path_list) is not list:
        pred_img_path_list, gold_img_path_list = [pred_img_path_list], [gold_img_path_list]
    for pred_path, gold_path in zip(pred_img_path_list, gold_img_path_list):
        if not pred_path or not gold_path:
            return 0.0
        pred, gold = _img(pred_path), _img(gold_path)
        if pred.size != gold.size:
            pred = pred.resize(gold.size, Image.Resampling.LANCZOS)
        if pred.mode != gold.mode:
            pred = pred.convert(gold.mode)
        if ImageChops.difference(pred, gold).getbbox():
            return 0.0
    return 1.0


def _brightness(image) -> float:
    from PIL import ImageStat

    return ImageStat.Stat(image.convert("L")).mean[0]


def _normalize_brightness(image, target: float):
    factor = target / _brightness(image)
    return image.point(lambda x: min(255, max(0, int(x * factor))))


def _saturation(hsv) -> float:
    import numpy as np

    return np.mean(np.array(hsv.split()[1]))


def _contrast(image) -> float:
    import numpy as np

    return np.std(np.asarray(image, dtype=np.float32))


def structure_same_by_mse(img1, img2, threshold: float = 0.03) -> bool:
    import numpy as np
    from PIL import Image

    if not hasattr(img1, "size") or not hasattr(img2, "size"):
        if hasattr(img1, "shape"):
            img1 = Image.fromarray(img1)
        if hasattr(img2, "shape"):
            img2 = Image.fromarray(img2)
    if img1.size != img2.size:
        img1 = img1.resize(img2.size, Image.Resampling.LANCZOS)
    img1 = img1.convert("RGB") if img1.mode != "RGB" else img1
    img2 = img2.convert("RGB") if img2.mode != "RGB" else img2
    mse = np.mean((np.array(img1, dtype=np.float32) / 255 - np.array(img2, dtype=np.float32) / 255) ** 2)
    return bool(mse < threshold)


def structure_same_by_ssim(img1, img2, threshold: float = 0.9) -> bool:
    """Colour SSIM >= threshold; images of different sizes, or under 7 pixels a side, are not the same."""
    import numpy as np
    from skimage.metrics import structural_similarity

    if img1.width < 7 or img1.height < 7 or img2.width < 7 or img2.height < 7:
        return False
    img1 = img1.convert("RGB") if img1.mode != "RGB" else img1
    img2 = img2.convert("RGB") if img2.mode != "RGB" else img2
    if img1.size != img2.size:
        return False
    a1, a2 = np.array(img1), np.array(img2)
    if a1.shape != a2.shape:
        return False
    try:
        score = structural_similarity(a1, a2, win_size=7, channel_axis=2)
    except Exception:
        return False
    return score >= threshold


def check_brightness_decrease_and_structure_sim(src_path, tgt_path, threshold=0.03):
    """The exported image is darker than the original and the same picture once both are normalised."""
    if src_path is None or tgt_path is None:
        return 0.0
    src, tgt = _img(src_path), _img(tgt_path)
    darker = _brightness(tgt) > _brightness(src)
    same = structure_same_by_mse(_normalize_brightness(src, 128), _normalize_brightness(tgt, 128), threshold)
    return 1.0 if darker and same else 0.0


def check_saturation_increase_and_structure_sim(src_path, tgt_path):
    if src_path is None or tgt_path is None:
        return 0.0
    hsv_src, hsv_tgt = _img(src_path).convert("HSV"), _img(tgt_path).convert("HSV")
    more = _saturation(hsv_tgt) < _saturation(hsv_src)
    h1, _, v1 = hsv_src.split()
    h2, _, v2 = hsv_tgt.split()
    same = structure_same_by_ssim(h1, h2) and structure_same_by_ssim(v1, v2)
    return 1.0 if more and same else 0.0


def check_file_exists_and_structure_sim(src_path, tgt_path):
    if src_path is None or tgt_path is None or not os.path.isfile(src_path):
        return 0.0
    return 1.0 if structure_same_by_ssim(_img(src_path), _img(tgt_path)) else 0.0


def check_triangle_position(tgt_path):
    """The second-rarest colour's centroid lies within 5% of the image centre."""
    import numpy as np

    if tgt_path is None:
        return 0.0
    arr = np.array(_img(tgt_path))
    colors, counts = np.unique(arr.reshape(-1, arr.shape[2]), axis=0, return_counts=True)
    triangle = colors[np.argsort(counts)][1]
    centroid = np.argwhere(np.all(arr == triangle, axis=2)).mean(axis=0)
    centre = np.array(arr.shape[:2]) / 2
    return 1.0 if bool(np.all(np.abs(centroid - centre) < 0.05 * np.array(arr.shape[:2]))) else 0.0


def check_structure_sim(src_path, tgt_path):
    if src_path is None or tgt_path is None:
        return 0.0
    try:
        src, tgt = _img(src_path), _img(tgt_path)
        if src.size != tgt.size:
            return 0.0
        return 1.0 if structure_same_by_ssim(src, tgt) else 0.0
    except Exception:
        return 0.0


def check_structure_sim_resized(src_path, tgt_path):
    """The source (cropped to its opaque content if it has alpha) resized to the target is the same picture."""
    if src_path is None or tgt_path is None:
        return 0.0
    src, tgt = _img(src_path), _img(tgt_path)
    if src.mode in ("RGBA", "LA") or "transparency" in src.info:
        if src.mode != "RGBA":
            src = src.convert("RGBA")
        bbox = src.split()[-1].getbbox()
        if bbox is None:
            return 0.0
        resized = src.crop(bbox).convert("RGB").resize(tgt.size)
    else:
        resized = src.resize(tgt.size)
    if tgt.mode != "RGB":
        tgt = tgt.convert("RGB")
    return 1.0 if structure_same_by_ssim(resized, tgt) else 0.0


def check_contrast_increase_and_structure_sim(src_path, tgt_path):
    if src_path is None or tgt_path is None:
        return 0.0
    src, tgt = _img(src_path), _img(tgt_path)
    higher = _contrast(tgt) < _contrast(src)
    return 1.0 if higher and structure_same_by_ssim(src, tgt, threshold=0.65) else 0.0


def check_config_status(actual_config_path, rule):
    """A gimprc line `(key [subkey] ... value)` has the expected key(s) and last item."""
    if actual_config_path is None:
        return 0.0
    with open(actual_config_path) as f:
        lines = f.readlines()
    key = rule["key"]
    for line in lines:
        if line.startswith("#") or line == "\n":
            continue
        items = line.strip().lstrip("(").rstrip(")\n").split()
        if isinstance(key, str):
            if items[0] == key and items[-1] == rule["value"]:
                return 1.0
        elif isinstance(key, list) and len(key) == 2:
            if items[0] == key[0] and items[1] == key[1] and items[-1] == rule["value"]:
                return 1.0
    return 0.0


def check_image_size(src_path, rule):
    """Width/height as expected; with alpha (and, by OSWorld's operator precedence, for any image with a
    'transparency' entry), the opaque content's box is measured."""
    if src_path is None:
        return 0.0
    img = _img(src_path)
    if rule.get("ignore_transparent", False) and img.mode in ("RGBA", "LA") or "transparency" in img.info:
        if img.mode != "RGBA":
            img = img.convert("RGBA")
        bbox = img.split()[-1].getbbox()
        w, h = (0, 0) if bbox is None else (bbox[2] - bbox[0], bbox[3] - bbox[1])
    else:
        w, h = img.size
    ok_h = h == rule["height"] if rule.get("height", None) is not None else True
    ok_w = w == rule["width"] if rule.get("width", None) is not None else True
    return 1.0 if ok_h and ok_w else 0.0


def _open_retrying(path, retries: int = 3, delay: float = 0.5):
    """An image that may still be being written: empty or truncated files are retried."""
    if not path or not os.path.exists(path):
        return None
    for attempt in range(retries):
        try:
            if os.path.getsize(path) == 0:
                if attempt < retries - 1:
                    time.sleep(delay)
                    continue
                return None
            image = _img(path)
            image.load()
            return image
        except OSError as e:
            msg = str(e).lower()
            if ("truncated" in msg or "cannot identify" in msg) and attempt < retries - 1:
                time.sleep(delay)
                continue
            break
        except Exception:
            break
    return None


def check_palette_and_structure_sim(src_path, tgt_path):
    if src_path is None or tgt_path is None:
        return 0.0
    src = _open_retrying(src_path)
    if src is None:
        return 0.0
    try:
        palette = src.mode == "P"
        tgt = _open_retrying(tgt_path)
        if tgt is None:
            return 0.0
        try:
            return 1.0 if palette and structure_same_by_ssim(src.convert("RGB"), tgt) else 0.0
        finally:
            tgt.close()
    except Exception:
        return 0.0
    finally:
        src.close()


def check_textbox_on_leftside(src_path):
    """Some row's first dark (< 128) pixel lies in the left 5% of the image."""
    import numpy as np

    if src_path is None:
        return 0.0
    img = _img(src_path)
    gray = np.array(img.convert("L"))
    width = img.size[0]
    dark_cols = np.argwhere(gray < 128)
    leftmost = int(dark_cols[:, 1].min()) if len(dark_cols) else width
    return 1.0 if leftmost < width * 0.05 else 0.0


def check_image_mirror(src_path, tgt_path):
    from PIL import Image

    if src_path is None or tgt_path is None:
        return 0.0
    flipped = _img(src_path).transpose(Image.FLIP_LEFT_RIGHT)
    return 1.0 if structure_same_by_ssim(flipped, _img(tgt_path), 0.99) else 0.0


def check_green_background(src_path, tgt_path):
    """Where the target is not black, the source is green-dominant. Pixels are indexed [x, y] into
    [row, column] arrays, as OSWorld does (so only square images are read as intended)."""
    import numpy as np

    if src_path is None or tgt_path is None:
        return 0.0
    src, tgt = _img(src_path), _img(tgt_path)
    sp, tp = np.array(src), np.array(tgt)
    for x in range(tgt.width):
        for y in range(tgt.height):
            if tuple(tp[x, y][:3]) != (0, 0, 0):
                r, g, b = sp[x, y][:3]
                if not (g > r and g > b):
                    return 0.0
    return 1.0


def check_image_file_size(src_path, rule):
    if src_path is None:
        return 0.0
    return 1.0 if os.path.getsize(src_path) < rule["max_size"] else 0.0
