"""Golden cases: GIMP and VLC metrics (images built with Pillow from seeded noise, vlcrc/status files)."""

from __future__ import annotations

from pathlib import Path

from osworld_golden_cases import case, text
from osworld_golden_docs import both


def image(name: str, kind: str = "noise", size=(64, 48), seed: int = 1, mode: str = "RGB", **kw):
    """Deterministic images: noise (seeded), gradient, solid color, shapes; transforms by keyword:
    scale (brightness factor), sat (saturation factor), contrast, flip, resize, alpha_pad, palette."""
    def build(d: Path) -> None:
        import numpy as np
        from PIL import Image, ImageDraw, ImageEnhance

        rng = np.random.default_rng(seed)
        w, h = size
        if kind == "noise":
            base = rng.integers(0, 255, (h // 8, w // 8, 3), dtype=np.uint8)
            img = Image.fromarray(base).resize((w, h), Image.Resampling.NEAREST)
        elif kind == "gradient":
            x = np.linspace(40, 215, w, dtype=np.float32)[None, :, None]
            y = np.linspace(0, 1, h, dtype=np.float32)[:, None, None]
            arr = np.concatenate([x + 0 * y, 255 - x + 0 * y, 80 + 100 * y + 0 * x], axis=2).astype(np.uint8)
            img = Image.fromarray(arr)
        elif kind == "solid":
            img = Image.new("RGB", (w, h), kw.get("color", (0, 200, 0)))
        elif kind == "triangle":
            img = Image.new("RGB", (w, h), (255, 255, 255))
            cx, cy = kw.get("at", (w // 2, h // 2))
            ImageDraw.Draw(img).polygon([(cx - 6, cy + 5), (cx + 6, cy + 5), (cx, cy - 6)], fill=(255, 220, 0))
        elif kind == "text-left":
            img = Image.new("RGB", (w, h), (255, 255, 255))
            x0 = kw.get("x", 1)
            ImageDraw.Draw(img).rectangle([x0, 10, x0 + 10, 20], fill=(0, 0, 0))
        if "scale" in kw:
            img = ImageEnhance.Brightness(img).enhance(kw["scale"])
        if "sat" in kw:
            img = ImageEnhance.Color(img).enhance(kw["sat"])
        if "contrast" in kw:
            img = ImageEnhance.Contrast(img).enhance(kw["contrast"])
        if kw.get("flip"):
            img = img.transpose(Image.FLIP_LEFT_RIGHT)
        if "resize" in kw:
            img = img.resize(kw["resize"], Image.Resampling.BILINEAR)
        if "alpha_pad" in kw:
            pad = kw["alpha_pad"]
            canvas = Image.new("RGBA", (img.width + 2 * pad, img.height + 2 * pad), (0, 0, 0, 0))
            canvas.paste(img.convert("RGBA"), (pad, pad))
            img = canvas
        if kw.get("palette"):
            img = img.convert("P", palette=Image.Palette.ADAPTIVE, colors=64)
        if mode != "RGB" and img.mode != mode:
            img = img.convert(mode)
        img.save(d / name)
    return build


S, T = "@/s.png", "@/t.png"
N = image("s.png")
case("compare_images", "same", S, T, build=both(N, image("t.png")))
case("compare_images", "different", S, T, build=both(N, image("t.png", seed=2)))
case("compare_images", "base-score", S, T, reference_base_result=0.5, build=both(N, image("t.png", scale=0.9)))
case("compare_images", "base-score-low", S, T, reference_base_result=0.99, build=both(N, image("t.png", seed=3)))
case("compare_images", "sizes", S, T, build=both(N, image("t.png", resize=(32, 24))))
case("compare_images", "none", None, T, build=N)
case("compare_image_list", "same", [S], [S], build=N)
case("compare_image_list", "different", S, T, build=both(N, image("t.png", seed=2)))
case("compare_image_list", "resized", S, T, build=both(image("s.png", "solid", color=(1, 2, 3)),
                                                      image("t.png", "solid", size=(10, 10), color=(1, 2, 3))))
case("compare_image_list", "mode", S, T, build=both(N, image("t.png", mode="RGBA")))
case("compare_image_list", "none", [None], [T], build=N)
G = image("s.png", "gradient")
case("check_brightness_decrease_and_structure_sim", "pass", S, T, build=both(G, image("t.png", "gradient", scale=1.3)))
case("check_brightness_decrease_and_structure_sim", "brighter", S, T, build=both(G, image("t.png", "gradient", scale=0.7)))
case("check_brightness_decrease_and_structure_sim", "other-picture", S, T, build=both(image("s.png", scale=0.8), image("t.png", seed=5)))
case("check_brightness_decrease_and_structure_sim", "none", None, T, build=G)
case("check_saturation_increase_and_structure_sim", "pass", S, T, build=both(image("s.png", sat=1.5), image("t.png")))
case("check_saturation_increase_and_structure_sim", "less", S, T, build=both(image("s.png", sat=0.5), image("t.png")))
case("check_saturation_increase_and_structure_sim", "other", S, T, build=both(image("s.png", sat=1.5), image("t.png", seed=4)))
case("check_saturation_increase_and_structure_sim", "none", S, None, build=N)
case("check_contrast_increase_and_structure_sim", "pass", S, T, build=both(image("s.png", contrast=1.5), image("t.png")))
case("check_contrast_increase_and_structure_sim", "lower", S, T, build=both(image("s.png", contrast=0.5), image("t.png")))
case("check_contrast_increase_and_structure_sim", "other", S, T, build=both(image("s.png", contrast=1.5), image("t.png", seed=9)))
case("check_file_exists_and_structure_sim", "pass", S, T, build=both(N, image("t.png")))
case("check_file_exists_and_structure_sim", "missing", "@/nope.png", T, build=image("t.png"))
case("check_file_exists_and_structure_sim", "different", S, T, build=both(N, image("t.png", seed=7)))
case("check_structure_sim", "pass", S, T, build=both(N, image("t.png")))
case("check_structure_sim", "size", S, T, build=both(N, image("t.png", resize=(32, 24))))
case("check_structure_sim", "different", S, T, build=both(N, image("t.png", seed=7)))
case("check_structure_sim", "missing", "@/nope.png", T, build=image("t.png"))
case("check_structure_sim_resized", "pass", S, T, build=both(image("s.png", "gradient", resize=(128, 96)), image("t.png", "gradient")))
case("check_structure_sim_resized", "alpha", S, T,
     build=both(image("s.png", "gradient", alpha_pad=10), image("t.png", "gradient")))
case("check_structure_sim_resized", "different", S, T, build=both(image("s.png", resize=(128, 96)), image("t.png", seed=7)))
case("check_structure_sim_resized", "none", None, T, build=image("t.png"))
case("check_image_mirror", "pass", S, T, build=both(N, image("t.png", flip=True)))
case("check_image_mirror", "not-flipped", S, T, build=both(N, image("t.png")))
case("check_image_mirror", "none", S, None, build=N)
case("check_palette_and_structure_sim", "pass", S, T, build=both(image("s.png", "gradient", palette=True), image("t.png", "gradient")))
case("check_palette_and_structure_sim", "not-palette", S, T, build=both(image("s.png", "gradient"), image("t.png", "gradient")))
case("check_palette_and_structure_sim", "missing", "@/nope.png", T, build=image("t.png"))
case("check_palette_and_structure_sim", "empty-file", S, T, build=both(text(s__png=""), image("t.png")))
case("check_image_size", "pass", S, {"width": 64, "height": 48}, build=N)
case("check_image_size", "fail", S, {"width": 60}, build=N)
case("check_image_size", "transparent", S, {"width": 64, "height": 48, "ignore_transparent": True},
     build=image("s.png", alpha_pad=5))
case("check_image_size", "none", None, {"width": 1})
case("check_image_file_size", "pass", S, {"max_size": 100000}, build=N)
case("check_image_file_size", "fail", S, {"max_size": 10}, build=N)
case("check_image_file_size", "none", None, {"max_size": 10})
case("check_triangle_position", "centred", T, build=image("t.png", "triangle", size=(100, 100)))
case("check_triangle_position", "corner", T, build=image("t.png", "triangle", size=(100, 100), at=(15, 15)))
case("check_triangle_position", "none", None)
case("check_textbox_on_leftside", "pass", S, build=image("s.png", "text-left", size=(100, 40), x=2))
case("check_textbox_on_leftside", "fail", S, build=image("s.png", "text-left", size=(100, 40), x=50))
case("check_textbox_on_leftside", "blank", S, build=image("s.png", "solid", color=(255, 255, 255)))
case("check_textbox_on_leftside", "none", None)


def green_pair(ok: bool):
    def build(d: Path) -> None:
        from PIL import Image, ImageDraw

        tgt = Image.new("RGB", (20, 20), (0, 0, 0))
        ImageDraw.Draw(tgt).rectangle([0, 0, 19, 5], fill=(255, 255, 255))
        src = Image.new("RGB", (20, 20), (10, 200, 10) if ok else (200, 10, 10))
        src.save(d / "s.png")
        tgt.save(d / "t.png")
    return build


case("check_green_background", "pass", S, T, build=green_pair(True))
case("check_green_background", "fail", S, T, build=green_pair(False))
case("check_green_background", "none", None, T, build=green_pair(True))

GIMPRC = "# gimprc\n(default-image (width 640) (height 400))\n(theme \"Dark\")\n(show-tooltips no)\n"
case("check_config_status", "pass", "@/gimprc", {"key": "show-tooltips", "value": "no"}, build=text(gimprc=GIMPRC))
case("check_config_status", "fail", "@/gimprc", {"key": "show-tooltips", "value": "yes"}, build=text(gimprc=GIMPRC))
case("check_config_status", "pair", "@/gimprc", {"key": ["default-image", "(width"], "value": "400))"},
     build=text(gimprc=GIMPRC))
case("check_config_status", "none", None, {"key": "x", "value": "y"})

# ---- vlc -------------------------------------------------------------------------------------------
STATUS = ('<root><state>{state}</state><information><category name="meta">'
          '<info name="filename">{name}</info></category></information></root>')
case("is_vlc_playing", "pass", "@/s.xml", {"type": "file_name", "file_name": "song.mp3"},
     build=text(s__xml=STATUS.format(state="playing", name="/home/u/song.mp3")))
case("is_vlc_playing", "paused", "@/s.xml", {"type": "file_name", "file_name": "song.mp3"},
     build=text(s__xml=STATUS.format(state="paused", name="song.mp3")))
case("is_vlc_playing", "other-file", "@/s.xml", {"type": "file_name", "file_name": "song.mp3"},
     build=text(s__xml=STATUS.format(state="playing", name="other.mp3")))
case("is_vlc_playing", "url", "@/s.xml", {"type": "url", "url": "http://radio.example.com/live.mp3"},
     build=text(s__xml=STATUS.format(state="playing", name="live.mp3")))
case("is_vlc_playing", "url-fail", "@/s.xml", {"type": "url", "url": "http://radio.example.com/live.mp3"},
     build=text(s__xml=STATUS.format(state="playing", name="dead.mp3")))
case("is_vlc_playing", "no-meta", "@/s.xml", {"type": "file_name", "file_name": "x"},
     build=text(s__xml="<root><state>playing</state></root>"))
case("is_vlc_playing", "bad-type", "@/s.xml", {"type": "title"},
     build=text(s__xml=STATUS.format(state="playing", name="x")))
VLCRC = "# vlcrc\n#qt-bgcone=1\n{}\n"
case("is_vlc_recordings_folder", "pass", "@/vlcrc", {"recording_file_path": "/home/u/Desktop"},
     build=text(vlcrc=VLCRC.format("input-record-path=/home/u/Desktop")))
case("is_vlc_recordings_folder", "fail", "@/vlcrc", {"recording_file_path": "/home/u/Desktop"},
     build=text(vlcrc=VLCRC.format("input-record-path=/tmp")))
case("is_vlc_recordings_folder", "absent", "@/vlcrc", {"recording_file_path": "/x"}, build=text(vlcrc=VLCRC.format("")))
case("is_vlc_recordings_folder", "missing", "@/nope", {"recording_file_path": "/x"})
case("is_vlc_fullscreen", "pass", {"width": 1920, "height": 1080}, {"width": 1920, "height": 1080})
case("is_vlc_fullscreen", "fail", {"width": 800, "height": 600}, {"width": 1920, "height": 1080})
case("is_vlc_fullscreen", "none", None, {"width": 1920, "height": 1080})
for metric, key, needle, val, other in (
    ("check_qt_bgcone", "expected_qt_bgcone", "qt-bgcone", "0", "1"),
    ("check_qt_max_volume", "expected_qt_max_volume", "qt-max-volume", "200", "125"),
    ("check_qt_minimal_view", "expected_qt_minimal_view", "qt-minimal-view", "1", "0"),
    ("check_one_instance_when_started_from_file", "expected_one_instance_when_started_from_file",
     "one-instance-when-started-from-file", "0", "1"),
):
    case(metric, "pass", "@/vlcrc", {key: int(val)}, build=text(vlcrc=VLCRC.format(f"{needle}={val}")))
    case(metric, "fail", "@/vlcrc", {key: val}, build=text(vlcrc=VLCRC.format(f"{needle}={other}")))
    case(metric, "default", "@/vlcrc", {key: other}, build=text(vlcrc=VLCRC.format("")))
    case(metric, "commented", "@/vlcrc", {key: val}, build=text(vlcrc=VLCRC.format(f"#{needle}={val}")))
    case(metric, "missing", "@/nope", {key: val})
case("check_global_key_play_pause", "pass", "@/vlcrc", {"expected_global_key_play_pause": 1},
     build=text(vlcrc=VLCRC.format("global-key-play-pause=Media Play Pause")))
case("check_global_key_play_pause", "empty-value", "@/vlcrc", {"expected_global_key_play_pause": "1"},
     build=text(vlcrc=VLCRC.format("global-key-play-pause=")))
case("check_global_key_play_pause", "default", "@/vlcrc", {"expected_global_key_play_pause": 0},
     build=text(vlcrc=VLCRC.format("")))
case("check_qt_slider_colours", "match", "@/vlcrc", {"type": "match", "expected_qt_slider_colours": "1;2;3"},
     build=text(vlcrc=VLCRC.format("qt-slider-colours=1;2;3")))
case("check_qt_slider_colours", "blackish", "@/vlcrc", {"type": "blackish"},
     build=text(vlcrc=VLCRC.format("qt-slider-colours=1;2;3;50;50;50")))
case("check_qt_slider_colours", "default-not-blackish", "@/vlcrc", {"type": "blackish"}, build=text(vlcrc=VLCRC.format("")))
case("check_qt_slider_colours", "bad-numbers", "@/vlcrc", {"type": "blackish"},
     build=text(vlcrc=VLCRC.format("qt-slider-colours=a;b")))
case("check_qt_slider_colours", "other-type", "@/vlcrc", {"type": "x"}, build=text(vlcrc=VLCRC.format("")))


def wav(name: str, freq: float, seconds: float = 0.5):
    def build(d: Path) -> None:
        import wave

        import numpy as np

        rate = 8000
        t = np.arange(int(rate * seconds)) / rate
        data = (np.sin(2 * np.pi * freq * t) * 12000).astype("<i2")
        with wave.open(str(d / name), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes(data.tobytes())
    return build


case("compare_audios", "same", "@/a.wav", "@/b.wav", build=both(wav("a.wav", 440), wav("b.wav", 440)))
case("compare_audios", "different", "@/a.wav", "@/b.wav", build=both(wav("a.wav", 440), wav("b.wav", 1800)))
case("compare_audios", "both-unreadable", "@/a.wav", "@/b.wav", build=text(a__wav="x", b__wav="y"))
case("compare_audios", "one-unreadable", "@/a.wav", "@/b.wav", build=both(text(a__wav="x"), wav("b.wav", 440)))
case("compare_audios", "none", None, "@/b.wav", build=wav("b.wav", 440))


def video(name: str, seed: int, frames: int = 6):
    def build(d: Path) -> None:
        import cv2
        import numpy as np

        rng = np.random.default_rng(seed)
        out = cv2.VideoWriter(str(d / name), cv2.VideoWriter_fourcc(*"MJPG"), 5, (64, 48))
        for _ in range(frames):
            small = rng.integers(0, 255, (6, 8, 3), dtype=np.uint8)
            out.write(cv2.resize(small, (64, 48), interpolation=cv2.INTER_NEAREST))
        out.release()
    return build


case("compare_videos", "same", "@/a.avi", "@/b.avi", build=both(video("a.avi", 1), video("b.avi", 1)))
case("compare_videos", "different", "@/a.avi", "@/b.avi", build=both(video("a.avi", 1), video("b.avi", 2)))
case("compare_videos", "length", "@/a.avi", "@/b.avi", build=both(video("a.avi", 1), video("b.avi", 1, frames=3)))
case("compare_videos", "missing", "@/a.avi", "@/nope.avi", build=video("a.avi", 1))
