"""Set-of-mark image: boxes and numbered labels drawn, labels outside the targets and apart."""

from __future__ import annotations

import numpy as np

from cua.perception import som
from cua.perception.elements import Observation
from cua.perception.merge import assign_ids
from tests.perception_fixtures import el, text_image


def _obs():
    img = text_image([(40, 40, "File"), (100, 40, "Edit"), (160, 40, "Search")], size=(400, 200))
    els = assign_ids([el("menu", "File", (36, 38, 40, 22)), el("menu", "Edit", (96, 38, 40, 22)),
                      el("menu", "Search", (156, 38, 60, 22)), el("push button", "", (300, 150, 30, 30))])
    return Observation(screenshot=img, elements=els, size=img.size)


def test_som_draws_boxes_and_labels_without_covering_the_element_text(monkeypatch):
    obs = _obs()
    placed = []
    real_place = som._place

    def spy(*a, **k):
        r = real_place(*a, **k)
        placed.append(r)
        return r

    monkeypatch.setattr(som, "_place", spy)
    out = som.render_som(obs)
    assert out.size == obs.image().size and out.mode == "RGB"
    diff = np.abs(np.asarray(out, np.int16) - np.asarray(obs.image(), np.int16)).sum(axis=2) > 0
    assert diff.sum() > 500  # boxes + labels were drawn
    assert len(placed) == 4
    for i, a in enumerate(placed):  # no label overlaps another label
        for b in placed[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    for e, r in zip(sorted(obs.elements, key=lambda e: e.bbox[2] * e.bbox[3]), placed):
        x, y, w, h = e.bbox  # the label does not sit on the element's inner area (its text)
        inner = (x + 3, y + 3, x + w - 3, y + h - 3)
        assert not (r[0] < inner[2] and inner[0] < r[2] and r[1] < inner[3] and inner[1] < r[3]), (e.name, r)
    # the text inside the boxes is still there, untouched
    crop = lambda im: np.asarray(im.crop((42, 42, 70, 56)))
    assert (crop(out) == crop(obs.image())).all()


def test_som_with_explicit_elements_and_no_elements():
    obs = _obs()
    only = som.render_som(obs, elements=obs.elements[:1])
    none = som.render_som(obs, elements=[])
    assert np.asarray(none).tolist() == np.asarray(obs.image().convert("RGB")).tolist()
    assert np.asarray(only).tolist() != np.asarray(none).tolist()
