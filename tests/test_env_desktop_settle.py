"""wait_settled on scripted frame sequences: stable, never stable (bounded), changed vs before."""

from __future__ import annotations

import itertools

from cua.env.settle import Settle, frame_digest, wait_settled


def test_a_still_screen_settles_unchanged():
    s = wait_settled(lambda: 1, timeout=2.0, stable_for=0.02)
    assert s == Settle(True, False, s.elapsed) and s.settled and not s.changed


def test_a_screen_that_never_stops_changing_hits_the_bound():
    counter = itertools.count()
    s = wait_settled(lambda: next(counter), timeout=0.3, stable_for=0.05)
    assert not s.settled and s.changed and 0.3 <= s.elapsed < 5


def test_change_is_measured_against_the_frame_before_the_action():
    s = wait_settled(lambda: "after", before="before", timeout=2.0, stable_for=0.02)
    assert s.settled and s.changed


def test_a_burst_of_changes_then_stable_reports_reaction_time():
    frames = iter([0, 0, 0, 1, 2, 3])
    trace: dict[str, float] = {}
    settled, changed, elapsed = wait_settled(lambda: next(frames, 3), before=0, timeout=3.0, stable_for=0.03,
                                             first_change=1.0, trace=trace)
    assert settled and changed and 0 < trace["reaction"] <= elapsed


def test_a_change_back_to_the_old_frame_is_not_a_change():
    frames = iter([0, 5, 0])
    s = wait_settled(lambda: next(frames, 0), before=0, timeout=2.0, stable_for=0.03, first_change=0.5)
    assert s.settled and not s.changed


def test_frame_digest_tells_frames_apart():
    assert frame_digest(b"\x00" * 100) != frame_digest(b"\x00" * 99 + b"\x01")
    assert frame_digest(bytearray(b"ab")) == frame_digest(b"ab")
