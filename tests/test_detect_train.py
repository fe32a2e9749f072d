"""`make train-detector` end to end on a tiny run: collect MiniWoB++ screens, train, export, evaluate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cua.perception.detect import Detector
from cua.perception.detect_collect import VAL_TASKS, collect_miniwob, load_labels

pytest.importorskip("torch", reason="training needs the `train` extra: pip install -e '.[train]'")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("detector-data")
    n = collect_miniwob(data, seeds=2, only={"click-button", "enter-text"})
    assert n == 4
    return data


def test_collected_labels_split_by_task(dataset):
    recs = load_labels(dataset)
    assert {r["task"] for r in recs if r["split"] == "val"} == {"click-button"} and "click-button" in VAL_TASKS
    assert {r["task"] for r in recs if r["split"] == "train"} == {"enter-text"}
    for r in recs:
        assert Path(r["image"]).is_file() and r["size"] == [1280, 800]
        assert r["boxes"] and all(len(b) == 5 and b[2] > 0 and b[3] > 0 for b in r["boxes"])


def test_train_export_evaluate(dataset, tmp_path):
    from cua.perception.detect_train import main

    out = tmp_path / "model"
    assert main(["--train-only", "--data", str(dataset), "--out", str(out), "--steps", "2", "--batch", "2"]) == 0
    meta = json.loads((out / "detector.json").read_text())
    assert meta["training"]["steps"] == 2 and meta["training"]["train_screens"] == 2
    assert meta["training"]["stopped_by"] == "steps" and meta["reproduce"]["schedule"]["steps"] == 2
    assert meta["onnx_max_abs_diff"] < 1e-3  # onnxruntime agrees with torch
    assert meta["dataset"] == {"train": 2, "val": 2}
    assert set(meta["validation"]) >= {"onnx", "cv_fallback"} and "miniwob" in meta["validation"]["cv_fallback"]
    det = Detector(out / "detector.onnx")
    assert det.backend == "onnx" and det.score_threshold == meta["score_threshold"]


def test_bad_data_dir_names_the_fix(tmp_path):
    from cua.perception.detect_train import main

    with pytest.raises(FileNotFoundError, match="--collect-only"):
        main(["--train-only", "--data", str(tmp_path / "empty"), "--out", str(tmp_path / "m"), "--steps", "1"])


def test_training_is_reproducible(dataset, tmp_path):
    """The schedule follows steps, not the clock: the same data, seed and steps give the same weights."""
    import torch

    from cua.perception.detect_train import train

    runs = []
    for name in ("a", "b"):
        ckpt = tmp_path / f"{name}.pt"
        info = train(dataset, ckpt, steps=3, batch=2, seed=0)
        assert info["steps"] == 3 and info["stopped_by"] == "steps"
        runs.append(torch.load(ckpt, map_location="cpu")["model"])
    assert all(torch.equal(runs[0][k], runs[1][k]) for k in runs[0])
    other = tmp_path / "c.pt"
    train(dataset, other, steps=3, batch=2, seed=1)
    changed = torch.load(other, map_location="cpu")["model"]
    assert not all(torch.equal(runs[0][k], changed[k]) for k in runs[0])  # the comparison can fail


def test_collection_is_reproducible(dataset, tmp_path):
    """The same tasks and seeds render the same screens and boxes: a second collection matches the first."""
    again = tmp_path / "again"
    assert collect_miniwob(again, seeds=2, only={"click-button", "enter-text"}) == 4
    first = {Path(r["image"]).name: r for r in load_labels(dataset)}
    for r in load_labels(again):
        old = first[Path(r["image"]).name]
        assert r["boxes"] == old["boxes"]
        assert (again / r["image"]).read_bytes() == (dataset / old["image"]).read_bytes()
