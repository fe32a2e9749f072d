"""OSWorld's VLC metrics (status XML, vlcrc settings) and its media comparisons (images by SSIM,
audio by MFCC + DTW, video by per-frame perceptual hashes)."""

from __future__ import annotations

import os
from urllib.parse import urlparse
from xml.etree import ElementTree

_META = 'information/category[@name="meta"]/info[@name="{}"]'
_FILE_PATHS = [_META.format(n) for n in ("filename", "title", "uri", "location", "name")]
_URL_PATHS = [_META.format(n) for n in ("url", "URI", "location", "title", "filename")] + [
    f'information/category[@name="Stream 0"]/info[@name="{n}"]' for n in ("Codec", "Type", "Language")]


def _first_text(tree, paths):
    for path in paths:
        el = tree.find(path)
        if el is not None and el.text:
            return el.text
    return None


def is_vlc_playing(actual_status_path: str, rule: dict) -> float:
    """VLC's status.xml says 'playing' and names the expected file (or URL)."""
    with open(actual_status_path, "rb") as f:
        tree = ElementTree.fromstring(f.read().decode("utf-8"))
    if tree.find("state").text != "playing":
        return 0
    if rule["type"] == "file_name":
        info = _first_text(tree, _FILE_PATHS)
        if not info:
            return 0
        want = rule["file_name"]
        if os.path.basename(info) == want or info.endswith(want):
            return 1
        return 0
    if rule["type"] == "url":
        info = _first_text(tree, _URL_PATHS)
        if not info:
            return 0
        want = rule["url"]
        if want in info or info.endswith(want):
            return 1
        try:
            parsed = urlparse(want)
            if info == os.path.basename(parsed.path):
                return 1
            if "://" in info:
                got = urlparse(info)
                if parsed.netloc == got.netloc and parsed.path in got.path:
                    return 1
        except Exception:
            pass
        return 0
    return 0


def _read_config(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8")


def is_vlc_recordings_folder(actual_config_path: str, rule: dict) -> float:
    text = _read_config(actual_config_path)
    for line in text.split("\n"):
        if line.startswith("#") or not line.strip():
            continue
        if "input-record-path" in line:
            return 1 if line.split("=")[-1].strip() == rule["recording_file_path"] else 0
    return 0


def is_vlc_fullscreen(actual_window_size, screen_size):
    if screen_size is None or actual_window_size is None:
        return 0
    same = actual_window_size["width"] == screen_size["width"] and actual_window_size["height"] == screen_size["height"]
    return 1 if same else 0


def compare_images(image1_path, image2_path, **options):
    """SSIM of the grey images, both resized to the smaller (by (w, h) order) size; with
    reference_base_result, rescaled above it."""
    if not image1_path or not image2_path:
        return 0
    import numpy as np
    from PIL import Image
    from skimage.metrics import structural_similarity

    base = options.get("reference_base_result", None)
    a = Image.open(image1_path).convert("L")
    b = Image.open(image2_path).convert("L")
    size = min(a.size, b.size)
    a = a.resize(size, Image.Resampling.LANCZOS)
    b = b.resize(size, Image.Resampling.LANCZOS)
    score = structural_similarity(np.array(a), np.array(b))
    if base is None:
        return score
    return (score - base) / (1 - base) if score >= base + 0.01 else 0


def compare_audios(audio_path_1, audio_path_2):
    """exp(-mean DTW cosine distance) of the normalised MFCCs (librosa, fastdtw); two unreadable files
    score 1, one unreadable file 0."""
    if not audio_path_1 or not audio_path_2:
        return 0
    import numpy as np

    def load(path):
        try:
            import librosa

            return librosa.load(path)
        except Exception:
            return None, None

    y1, sr1 = load(audio_path_1)
    y2, sr2 = load(audio_path_2)
    bad1 = y1 is None or y1.shape[0] == 0
    bad2 = y2 is None or y2.shape[0] == 0
    if bad1 and bad2:
        return 1.0
    if bad1 or bad2:
        return 0.0
    import librosa
    from fastdtw import fastdtw
    from scipy.spatial.distance import cosine

    try:
        m1 = librosa.feature.mfcc(y=y1, sr=sr1)
        m2 = librosa.feature.mfcc(y=y2, sr=sr2)
    except Exception:
        return 0.0
    m1 = librosa.util.normalize(m1, axis=1)
    m2 = librosa.util.normalize(m2, axis=1)
    distance, path = fastdtw(m1.T, m2.T, dist=cosine)
    return np.exp(-(distance / len(path) if len(path) else np.inf))


def compare_videos(video_path1, video_path2, max_frames_to_check=100, threshold=5):
    """Up to 100 frame pairs; more than `threshold` pairs whose phash differs by more than `threshold`
    fail; a length mismatch within the checked frames fails."""
    import cv2
    import imagehash
    from PIL import Image

    cap1, cap2 = cv2.VideoCapture(video_path1), cv2.VideoCapture(video_path2)
    checked = mismatches = 0
    while checked < max_frames_to_check:
        ok1, f1 = cap1.read()
        ok2, f2 = cap2.read()
        if not ok1 or not ok2:
            return 1.0 if ok1 == ok2 else 0.0
        h1 = imagehash.phash(Image.fromarray(cv2.cvtColor(f1, cv2.COLOR_BGR2RGB)))
        h2 = imagehash.phash(Image.fromarray(cv2.cvtColor(f2, cv2.COLOR_BGR2RGB)))
        checked += 1
        if h1 - h2 > threshold:
            mismatches += 1
            if mismatches > threshold:
                return 0.0
    return 1.0


def _setting(text: str, needle: str, default: str, transform=None) -> str:
    """The last vlcrc line containing `needle` decides the value (even a commented one, as OSWorld reads)."""
    value = default
    for line in text.split("\n"):
        if needle in line:
            raw = line.split("=")[-1].strip()
            value = transform(raw) if transform else raw
    return value


def _expect_setting(path: str, rule: dict, key: str, needle: str, default: str, transform=None):
    text = _read_config(path)
    want = rule[key]
    if isinstance(want, int):
        want = str(want)
    return 1 if _setting(text, needle, default, transform) == want else 0


def check_qt_bgcone(actual_config_path, rule):
    return _expect_setting(actual_config_path, rule, "expected_qt_bgcone", "qt-bgcone=", "1")


def check_qt_max_volume(actual_config_path, rule):
    return _expect_setting(actual_config_path, rule, "expected_qt_max_volume", "qt-max-volume=", "125")


def check_qt_minimal_view(actual_config_path, rule):
    return _expect_setting(actual_config_path, rule, "expected_qt_minimal_view", "qt-minimal-view=", "0")


def check_global_key_play_pause(actual_config_path, rule):
    return _expect_setting(actual_config_path, rule, "expected_global_key_play_pause", "global-key-play-pause=", "0",
                           transform=lambda raw: "0" if raw == "" else "1")


def check_one_instance_when_started_from_file(actual_config_path, rule):
    return _expect_setting(actual_config_path, rule, "expected_one_instance_when_started_from_file",
                           "one-instance-when-started-from-file=", "1")


def check_qt_slider_colours(actual_config_path, rule):
    """type 'match': the slider colours equal the expected string; 'blackish': every RGB triple < 100."""
    text = _read_config(actual_config_path)
    try:
        colours = _setting(text, "qt-slider-colours", "153;210;153;20;210;20;255;199;15;245;39;29")
        if rule["type"] == "match":
            return 1 if colours == rule["expected_qt_slider_colours"] else 0
        if rule["type"] == "blackish":
            values = [int(x) for x in colours.split(";")]
            triples = zip(values[0::3], values[1::3], values[2::3])
            return 1 if all(all(v < 100 for v in rgb) for rgb in triples) else 0
    except Exception:
        return 0
    return None
