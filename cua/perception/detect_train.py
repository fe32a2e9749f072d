"""Collect, train and export the vision detector (`make train-detector`).

    python -m cua.perception.detect_train                 # collect + train + export + evaluate
    python -m cua.perception.detect_train --collect-only  # screenshots + labels only
    python -m cua.perception.detect_train --train-only    # reuse collected data
    python -m cua.perception.detect_train --quick         # small run (minutes) for a smoke test

The network is a small CenterNet-style fully-convolutional detector (stride-4 class heatmaps plus
log-size and sub-cell offset maps), trained with torch on CPU and exported to ONNX; inference
(cua/perception/detect.py) needs only onnxruntime.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from cua.perception.detect import CLASSES, INPUT_SIZE, MAX_INPUT, MODELS_DIR, PIXEL_SCALE, STRIDE, Detector, letterbox
from cua.perception.detect_check import evaluate, match, measure, record, shortfalls
from cua.perception.detect_collect import collect_miniwob, collect_mousepad, load_labels

log = logging.getLogger("cua.detect_train")
DEFAULT_DATA = Path("build/detector-data")
CROP = (256, 192)  # training crops (w, h) cut from the letterboxed 640x400 screen
STEPS = 1600  # the schedule `make train-detector` runs: steps x crops per step, seed 0
BATCH = 8
WARMUP = 50
TORCH_THREADS = 2  # fixed, so float reductions run in the same order on every machine


def build_model(num_classes: int = len(CLASSES)):
    """The detector network: 4 strided conv stages (s2..s16), a top-down path back to stride 4, one head."""
    import torch
    from torch import nn

    def conv(cin: int, cout: int, stride: int = 1, dil: int = 1) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, dil, dilation=dil, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.s4 = nn.Sequential(conv(3, 16, 2), conv(16, 32, 2), conv(32, 32))
            self.s8 = nn.Sequential(conv(32, 64, 2), conv(64, 64))
            self.s16 = nn.Sequential(conv(64, 96, 2), conv(96, 96), conv(96, 96, dil=2), conv(96, 96, dil=4))
            self.top = nn.Conv2d(96, 64, 1)
            self.fuse8 = conv(64, 64)
            self.lat4 = nn.Conv2d(64, 32, 1)
            self.fuse4 = conv(32, 32)
            self.head = nn.Conv2d(32, num_classes + 4, 1)
            nn.init.constant_(self.head.bias[:num_classes], -4.0)

        def forward(self, x):
            f4 = self.s4(x)
            f8 = self.s8(f4)
            f16 = self.s16(f8)
            p8 = self.fuse8(f8 + nn.functional.interpolate(self.top(f16), size=f8.shape[-2:], mode="nearest"))
            p4 = self.fuse4(f4 + nn.functional.interpolate(self.lat4(p8), size=f4.shape[-2:], mode="nearest"))
            return self.head(p4)

    class Export(nn.Module):
        """Inference wrapper: sigmoid heatmaps and offsets, raw log-sizes (what detect.decode expects)."""

        def __init__(self, net: nn.Module) -> None:
            super().__init__()
            self.net = net

        def forward(self, x):
            y = self.net(x)
            c = num_classes
            return torch.cat([torch.sigmoid(y[:, :c]), y[:, c:c + 2], torch.sigmoid(y[:, c + 2:])], 1)

    return Net(), Export


def _torch_version() -> str:
    import torch

    return torch.__version__


def load_split(data: Path, split: str, limit: int | None = None) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """(letterboxed 640x400 image, boxes (N, 5) x1,y1,x2,y2,cls in its pixels, source) per screen."""
    from PIL import Image

    out = []
    recs = load_labels(data, split)
    random.Random(0).shuffle(recs)
    for r in recs[: limit or None]:
        canvas, scale = letterbox(Image.open(r["image"]), INPUT_SIZE)
        b = np.array([[x, y, x + w, y + h, c] for x, y, w, h, c in r["boxes"]], np.float32).reshape(-1, 5)
        b[:, :4] *= scale
        out.append((canvas, b, r["source"]))
    return out


def make_targets(boxes: np.ndarray, shape: tuple[int, int], nc: int) -> tuple[np.ndarray, ...]:
    """Heatmaps (elliptic gaussians at box centres), log-size and offset targets, and their mask."""
    oh, ow = shape
    heat = np.zeros((nc, oh, ow), np.float32)
    reg = np.zeros((4, oh, ow), np.float32)
    mask = np.zeros((oh, ow), np.float32)
    ys, xs = np.mgrid[0:oh, 0:ow].astype(np.float32)
    for x1, y1, x2, y2, c in boxes:
        w, h = (x2 - x1) / STRIDE, (y2 - y1) / STRIDE
        cx, cy = (x1 + x2) / 2 / STRIDE, (y1 + y2) / 2 / STRIDE
        ix, iy = int(cx), int(cy)
        if w < 0.75 or h < 0.75 or not (0 <= ix < ow and 0 <= iy < oh):
            continue
        sx, sy = max(w / 6, 0.5), max(h / 6, 0.5)
        g = np.exp(-((xs - ix) ** 2 / (2 * sx * sx) + (ys - iy) ** 2 / (2 * sy * sy)))
        heat[int(c)] = np.maximum(heat[int(c)], g)
        reg[:, iy, ix] = (math.log(w), math.log(h), cx - ix, cy - iy)
        mask[iy, ix] = 1.0
    return heat, reg, mask


def sample_batch(items, n: int, rng: random.Random, nc: int, desktop_share: float = 0.3):
    """Random crops with scale and colour jitter, as torch tensors (images, heat, reg, mask).

    Desktop (mousepad) screens are few next to the browser ones; they get `desktop_share` of each batch.
    """
    import cv2
    import torch

    cw, ch = CROP
    imgs, heats, regs, masks = [], [], [], []
    desktop = [it for it in items if it[2] != "miniwob"]
    for _ in range(n):
        pool = desktop if desktop and rng.random() < desktop_share else items
        img, boxes, _ = pool[rng.randrange(len(pool))]
        s = rng.uniform(0.7, 1.4)
        img = cv2.resize(img, (round(img.shape[1] * s), round(img.shape[0] * s)), interpolation=cv2.INTER_AREA)
        b = boxes.copy()
        b[:, :4] *= s
        H, W = img.shape[:2]
        canvas = np.full((max(H, ch), max(W, cw), 3), 128, np.uint8)
        canvas[:H, :W] = img
        ox, oy = rng.randint(0, canvas.shape[1] - cw), rng.randint(0, canvas.shape[0] - ch)
        if len(b) and rng.random() < 0.85:  # mostly crops around a labelled control: more positives per step
            x1, y1, x2, y2, _ = b[rng.randrange(len(b))]
            cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
            ox = int(np.clip(cx - rng.uniform(0.1, 0.9) * cw, 0, canvas.shape[1] - cw))
            oy = int(np.clip(cy - rng.uniform(0.1, 0.9) * ch, 0, canvas.shape[0] - ch))
        crop = canvas[oy:oy + ch, ox:ox + cw].astype(np.float32)
        b[:, [0, 2]] -= ox
        b[:, [1, 3]] -= oy
        # keep boxes mostly inside the crop (clipped), drop the rest
        vis_w = np.clip(b[:, 2], 0, cw) - np.clip(b[:, 0], 0, cw)
        vis_h = np.clip(b[:, 3], 0, ch) - np.clip(b[:, 1], 0, ch)
        keep = (vis_w * vis_h) >= 0.6 * (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
        b = b[keep]
        b[:, [0, 2]] = np.clip(b[:, [0, 2]], 0, cw)
        b[:, [1, 3]] = np.clip(b[:, [1, 3]], 0, ch)
        if rng.random() < 0.5:  # colour jitter: per-channel gain, brightness, sometimes grey or inverted
            crop = crop * np.array([rng.uniform(0.8, 1.2) for _ in range(3)], np.float32) + rng.uniform(-25, 25)
        if rng.random() < 0.1:
            crop = np.repeat(crop.mean(axis=2, keepdims=True), 3, axis=2)
        if rng.random() < 0.1:
            crop = 255 - crop
        crop = np.clip(crop, 0, 255) / 255.0
        h, r, m = make_targets(b, (ch // STRIDE, cw // STRIDE), nc)
        imgs.append(crop.transpose(2, 0, 1))
        heats.append(h)
        regs.append(r)
        masks.append(m)
    return (torch.from_numpy(np.stack(imgs)).float(), torch.from_numpy(np.stack(heats)),
            torch.from_numpy(np.stack(regs)), torch.from_numpy(np.stack(masks)))


def loss_fn(out, heat, reg, mask, nc: int):
    """CenterNet loss: penalty-reduced focal loss on heatmaps + L1 on log-size and offset at centres."""
    import torch

    p = torch.sigmoid(out[:, :nc]).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg = 1 - pos
    pos_loss = (torch.log(p) * (1 - p) ** 2 * pos).sum()
    neg_loss = (torch.log(1 - p) * p ** 2 * (1 - heat) ** 4 * neg).sum()
    npos = pos.sum().clamp(min=1)
    focal = -(pos_loss + neg_loss) / npos
    m = mask.unsqueeze(1)
    size_l = (torch.abs(out[:, nc:nc + 2] - reg[:, :2]) * m).sum() / (m.sum() * 2).clamp(min=1)
    off_l = (torch.abs(torch.sigmoid(out[:, nc + 2:]) - reg[:, 2:]) * m).sum() / (m.sum() * 2).clamp(min=1)
    parts = {"focal": float(focal.detach()), "size": float(size_l.detach()), "off": float(off_l.detach())}
    return focal + size_l + off_l, parts


def train(data: Path, ckpt: Path, steps: int, batch: int = 8, seed: int = 0, init: Path | None = None,
          lr: float = 3e-3, minutes: float | None = None) -> dict:
    """Train for `steps` optimiser steps (seeded: the same data and steps give the same weights); checkpoints to `ckpt`.

    The schedule depends on the step count only, never on the clock, so a run is reproducible on any machine.
    `minutes` is an optional safety cap: a run it cuts short says so (`stopped_by: time`) and reproduces nothing.
    `init` starts from an earlier checkpoint (fine-tuning on new screens).
    """
    import torch
    from rich.progress import Progress

    torch.set_num_threads(TORCH_THREADS)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    items = load_split(data, "train")
    if not items:
        raise FileNotFoundError(f"no training screens in {data}/labels.jsonl; run with --collect-only first")
    nc = len(CLASSES)
    net, _ = build_model(nc)
    if init:
        net.load_state_dict(torch.load(init, map_location="cpu")["model"])
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    deadline = time.monotonic() + minutes * 60 if minutes else math.inf
    t0 = time.monotonic()
    step, hist, saved = 0, [], t0
    net.train()
    with Progress() as prog:
        task = prog.add_task("training detector", total=steps)
        while step < steps and time.monotonic() < deadline:
            frac = step / steps
            for g in opt.param_groups:  # warm-up then cosine decay over the step budget
                g["lr"] = lr * min(1.0, (step + 1) / WARMUP) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac)))
            imgs, heat, reg, mask = sample_batch(items, batch, rng, nc)
            loss, parts = loss_fn(net(imgs), heat, reg, mask, nc)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            hist.append(loss.item())
            prog.update(task, completed=step, description=f"training detector step {step} loss {np.mean(hist[-20:]):.3f}")
            if time.monotonic() - saved > 60:
                saved = time.monotonic()
                log.info("step %d, %.0f s, loss %.3f %s", step, saved - t0, np.mean(hist[-20:]), parts)
                torch.save({"model": net.state_dict(), "step": step}, ckpt)
    torch.save({"model": net.state_dict(), "step": step}, ckpt)
    return {"steps": step, "planned_steps": steps, "stopped_by": "steps" if step >= steps else "time",
            "batch": batch, "seed": seed, "init": str(init) if init else None,
            "train_seconds": round(time.monotonic() - t0, 1), "train_screens": len(items),
            "final_loss": round(float(np.mean(hist[-50:])), 4)}


def recalibrate_bn(net, data: Path, screens: int = 64) -> None:
    """Re-estimate BatchNorm statistics on whole training screens (what inference sees), not crop batches.

    Running averages collected during training lag behind the fast-moving weights and come from
    control-centred crops; without this the exported model's heatmaps come out several times too weak.
    """
    import torch

    items = load_split(data, "train")
    desktop = [it for it in items if it[2] != "miniwob"]
    chosen = desktop[: screens // 4] + [it for it in items if it[2] == "miniwob"][: screens - min(len(desktop), screens // 4)]
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # cumulative average over all the screens below
    net.train()
    with torch.no_grad():
        for i in range(0, len(chosen), 4):
            x = np.stack([c[0] for c in chosen[i:i + 4]]).astype(np.float32).transpose(0, 3, 1, 2) / 255.0
            net(torch.from_numpy(x))
    net.eval()


def export(ckpt: Path, onnx_path: Path, data: Path | None = None) -> float:
    """Export the checkpoint (BatchNorm re-estimated on `data` when given) to ONNX opset 17.

    Returns the max |onnxruntime - torch| difference on a random input.
    """
    import onnxruntime as ort
    import torch

    torch.set_num_threads(TORCH_THREADS)
    net, Export = build_model(len(CLASSES))
    net.load_state_dict(torch.load(ckpt, map_location="cpu")["model"])
    if data is not None:
        recalibrate_bn(net, data)
    model = Export(net).eval()
    x = torch.rand(1, 3, INPUT_SIZE[1], INPUT_SIZE[0])
    onnx_path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated but needs no onnxscript
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), str(onnx_path), opset_version=17, input_names=["image"],
                          output_names=["maps"], dynamic_axes={"image": {2: "height", 3: "width"}}, dynamo=False)
    with torch.no_grad():
        ref = model(x).numpy()
    got = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"]).run(None, {"image": x.numpy()})[0]
    return float(np.abs(ref - got).max())


def pick_threshold(data: Path, onnx_path: Path, limit: int = 80) -> float:
    """The score threshold with the best F1 on (a sample of) the training screens, never the validation ones."""
    from PIL import Image

    det = Detector(onnx_path, score_threshold=0.1)
    recs = load_labels(data, "train")
    random.Random(1).shuffle(recs)
    desktop = [r for r in recs if r["source"] != "miniwob"]
    grid = [0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6]
    counts = {t: [0, 0, 0] for t in grid}
    for r in desktop[: limit // 4] + [r for r in recs if r["source"] == "miniwob"][: limit - min(len(desktop), limit // 4)]:
        found = det.detect(Image.open(r["image"]).convert("RGB"))
        truth = np.array([[x, y, x + w, y + h] for x, y, w, h, _ in r["boxes"]], np.float32).reshape(-1, 4)
        for t in grid:  # greedy NMS keeps the same high-score boxes whatever the cut-off below them
            pred = np.array([[e.bbox[0], e.bbox[1], e.bbox[0] + e.bbox[2], e.bbox[1] + e.bbox[3]]
                             for e in found if e.confidence >= t], np.float32).reshape(-1, 4)
            c = counts[t]
            c[0] += match(pred, truth)
            c[1] += len(pred)
            c[2] += len(truth)
    f1 = {t: 2 * tp / max(np_ + nt, 1) for t, (tp, np_, nt) in counts.items()}
    return max(f1, key=f1.get)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Example: python -m cua.perception.detect_train --quick --out /tmp/det")
    stage = ap.add_mutually_exclusive_group()
    stage.add_argument("--collect-only", action="store_true", help="only collect screenshots and labels")
    stage.add_argument("--train-only", action="store_true", help="train + export + evaluate on collected data")
    stage.add_argument("--export-only", action="store_true", help="export the checkpoint in --data, evaluate")
    stage.add_argument("--eval-only", action="store_true", help="only evaluate the model in --out")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="dataset dir (default build/detector-data)")
    ap.add_argument("--out", type=Path, default=None,
                    help="where detector.onnx / detector.json go (default: the shipped cua/perception/models; "
                         "build/detector-quick with --quick, so a smoke run never replaces the shipped model)")
    ap.add_argument("--seeds", type=int, default=10, help="variants per MiniWoB++ task")
    ap.add_argument("--steps", type=int, default=STEPS, help=f"optimiser steps (default {STEPS}); the schedule "
                    "follows steps, not the clock, so a run reproduces")
    ap.add_argument("--minutes", type=float, default=None, help="optional time cap; a capped run reproduces nothing")
    ap.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (lower it when fine-tuning)")
    ap.add_argument("--batch", type=int, default=BATCH, help=f"crops per step (default {BATCH})")
    ap.add_argument("--seed", type=int, default=0, help="seed for crops, jitter and initial weights")
    ap.add_argument("--init", type=Path, default=None, help="start from this checkpoint (.pt)")
    ap.add_argument("--no-mousepad", action="store_true", help="skip the sandbox mousepad screens")
    ap.add_argument("--quick", action="store_true", help="small smoke run: 8 tasks x 2 seeds, 40 steps")
    ap.add_argument("--check", action="store_true", help="run the held-out check (always done for the shipped "
                    "model) and compare with the figure the replaced model recorded")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.quick:
        args.seeds, args.steps = 2, min(args.steps, 40)
    if args.out is None:
        args.out = Path("build/detector-quick") if args.quick else MODELS_DIR
    if not (args.train_only or args.eval_only or args.export_only):
        from rich.progress import Progress

        if (args.data / "labels.jsonl").exists():
            (args.data / "labels.jsonl").unlink()
        with Progress() as prog:
            t = prog.add_task("MiniWoB++ pages", total=None)
            n = collect_miniwob(args.data, seeds=args.seeds, tasks=8 if args.quick else None,
                                progress=lambda i, total: prog.update(t, completed=i, total=total))
        log.info("collected %d MiniWoB++ screens", n)
        if not args.no_mousepad:
            try:
                log.info("collected %d mousepad screens", collect_mousepad(args.data))
            except Exception as exc:  # noqa: BLE001 -- no sandbox on this machine: train on the browser data alone
                log.warning("mousepad collection skipped: %s", exc)
        if args.collect_only:
            return 0
    onnx_path = args.out / "detector.onnx"
    meta_path = args.out / "detector.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    shipped_meta = MODELS_DIR / "detector.json"  # the figure a retrained model must reproduce, read before any overwrite
    shipped_check = json.loads(shipped_meta.read_text()).get("heldout_check") if shipped_meta.is_file() else None
    if not args.eval_only:
        args.out.mkdir(parents=True, exist_ok=True)
        ckpt = args.data / "detector.pt"
        if not args.export_only:
            meta["training"] = train(args.data, ckpt, args.steps, batch=args.batch, seed=args.seed, init=args.init,
                                     lr=args.lr, minutes=args.minutes)
            meta.pop("training_history", None)
            meta["reproduce"] = {
                "command": "make train-detector", "seed": args.seed, "data": {
                    "miniwob_seeds_per_task": args.seeds, "layout_rng": "random.Random(f'0:{task}:{seed}')",
                    "mousepad": not args.no_mousepad, "val_tasks": "detect_collect.VAL_TASKS",
                    "val_mousepad_windows": "detect_collect.VAL_PREFIXES (scored inside the window only)"},
                "schedule": {"optimizer": "AdamW wd 1e-4", "lr": args.lr, "warmup_steps": WARMUP,
                             "decay": "cosine to 5% over the steps", "batch": args.batch, "steps": args.steps,
                             "init": str(args.init) if args.init else None},
                "time_s": meta["training"]["train_seconds"], "torch_threads": TORCH_THREADS,
                "torch": _torch_version()}
        meta["onnx_max_abs_diff"] = export(ckpt, onnx_path, args.data)
        log.info("exported %s (%.1f MB), max |onnx - torch| = %.2e", onnx_path,
                 onnx_path.stat().st_size / 1e6, meta["onnx_max_abs_diff"])

    meta.update({"input_size": list(INPUT_SIZE), "pixel_scale": PIXEL_SCALE, "max_input": list(MAX_INPUT),
                 "stride": STRIDE, "classes": CLASSES,
                 "architecture": "CenterNet-style FCN: heatmaps + log-size + offset at stride 4",
                 "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                 "dataset": {s: len(load_labels(args.data, s)) for s in ("train", "val")}})
    meta_path.write_text(json.dumps(meta, indent=1))  # classes/input size first: Detector reads them
    if not args.eval_only or "score_threshold" not in meta:
        meta["score_threshold"] = pick_threshold(args.data, onnx_path)
        meta_path.write_text(json.dumps(meta, indent=1))
    onnx_det = Detector(onnx_path)
    if onnx_det.backend != "onnx":
        raise SystemExit(f"the exported model {onnx_path} does not load in onnxruntime; re-run without --eval-only")
    meta["validation"] = {"iou": 0.5, "score_threshold": onnx_det.score_threshold,
                          "onnx": evaluate(args.data, onnx_det),
                          "cv_fallback": evaluate(args.data, Detector(args.out / "absent.onnx"))}
    meta["model_bytes"] = onnx_path.stat().st_size if onnx_path.is_file() else 0
    meta_path.write_text(json.dumps(meta, indent=1))
    log.info("validation: %s", json.dumps(meta["validation"], indent=1))
    if args.quick or args.eval_only or (args.out.resolve() != MODELS_DIR.resolve() and not args.check):
        return 0
    check = record(meta_path, measure(onnx_det, mousepad=not args.no_mousepad))
    if not shipped_check:
        return 0
    bad = shortfalls(check["detail"], shipped_check, both_ways=True)
    meta = json.loads(meta_path.read_text())
    meta["reproduction"] = {"of": shipped_check["f1"], "got": check["f1"], "tolerance": shipped_check["tolerance"],
                            "reproduced": not bad, "problems": bad}
    meta_path.write_text(json.dumps(meta, indent=1))
    log.info("held-out F1 %s against the shipped model's %s: %s", check["f1"], shipped_check["f1"],
             "reproduced within ±%s" % shipped_check["tolerance"] if not bad else "NOT reproduced: " + "; ".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
