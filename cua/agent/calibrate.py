"""Choosing the run/refuse boundary on a development set, and storing it with the library.

Each development request names the skills that should run (none: it is outside the library). For a
grid of (fusion weight, threshold, margin, gap weight) the decision is made for every request; a run
of the right skills is a true positive, any other run (a wrong skill, or anything for an uncovered request)
a false positive. The chosen point maximises right runs minus three times wrong runs, less one right run
for every 0.02 its threshold lies from the shipped default's (cua.agent.boundary.DEFAULT_BOUNDARY); among
equals, the one nearest the default. The precision/recall
curve over the threshold at the chosen weight, margin and gap weight is kept with it (library meta
`boundary.<method>`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cua.agent.boundary import _RETRIEVERS, DEFAULT_BOUNDARY, _group, decide_request
from skills.retrieval import Retriever
from skills.skill_text import ui_path

WRONG_COST = 3.0
SHIFT_COST = 50.0  # right runs a threshold must gain per unit it moves from the default's (1 per 0.02)
GAP_WEIGHTS = [0.0, 0.25, 0.5]  # how much a lead over the best rival counts towards the threshold


@dataclass
class DevRequest:
    text: str
    expect: list[str] = field(default_factory=list)  # skill names in order; [] = outside the library


def expected_skill(name: str, library: Any) -> Any:
    """The verified skill that does what `name` names: that skill, else the shortest verified one that
    ends with it (exploration reached *Calculator › Angle units › Radians* only from scientific mode:
    *View › Scientific Mode › Calculator › Angle units › Radians* sets radians too); None if neither."""
    s = library.get(name)
    if s is not None and s.status == "verified":
        return s
    rows = library.db.execute("SELECT DISTINCT name FROM skills WHERE name LIKE ? ORDER BY LENGTH(name), name",
                              (f"% › {name}",)).fetchall()
    return next((s for (n,) in rows if n.endswith(f" › {name}") and (s := library.get(n)) and
                 s.status == "verified"), None)


def covered(req: DevRequest, library: Any) -> bool:
    """Every expected control has a verified skill, its own or one reaching it through another control
    (else the right answer is to refuse)."""
    return bool(req.expect) and all(expected_skill(n, library) is not None for n in req.expect)


def verdict(req: DevRequest, decision: Any, library: Any) -> str:
    """right (ran the expected skills) | wrong (ran something else) | refused. A calculation is right when
    its keys include every expected one: "17 times 23" may name its "×", its "=" or both, "enter 9 and
    take its square root" its 9 and its square root key."""
    if decision.kind != "skill":
        return "refused"
    if not covered(req, library):
        return "wrong"
    ran = _collapse([c.skill for c in decision.calls if not c.entry] if decision.calls else [decision.skill])
    want = _collapse([expected_skill(n, library) for n in req.expect])
    if decision.calculation is not None:
        keys = {_group(c.skill) for c in decision.calls}
        return "right" if set(want) <= keys else "wrong"
    return "right" if ran == want else "wrong"


def _collapse(skills: list[Any]) -> list[str]:
    """Groups of the skills in order, a skill dropped when the next one goes through it (Search › Find,
    then Search › Find › Match case, is the latter alone)."""
    out = []
    for i, s in enumerate(skills):
        nxt = skills[i + 1] if i + 1 < len(skills) else None
        if nxt is not None and len(ui_path(nxt)) > len(ui_path(s)) and ui_path(nxt)[:len(ui_path(s))] == ui_path(s):
            continue
        out.append(_group(s))
    return out


def _frange(a: float, b: float, step: float) -> list[float]:
    n = int(round((b - a) / step))
    return [round(a + i * step, 4) for i in range(n + 1)]


def sweep(library: Any, reqs: list[DevRequest], method: str = "fused", weights: list[float] | None = None,
          margins: list[float] | None = None, thresholds: list[float] | None = None,
          gap_weights: list[float] | None = None) -> list[dict[str, Any]]:
    """One row per grid point: right/wrong/refused counts, precision and recall."""
    retriever = _RETRIEVERS.get(library) or Retriever(library)
    _RETRIEVERS[library] = retriever
    retriever.cache_queries = True
    n_cov = sum(covered(r, library) for r in reqs) or 1
    rows = []
    try:
        for w in (weights or ([0.5, 0.6, 0.7] if method == "fused" else [0.0])):
            for m, g in [(m, g) for m in margins or [0.0, 0.03, 0.06] for g in gap_weights or GAP_WEIGHTS]:
                for t in thresholds or _frange(0.2, 0.8, 0.02):
                    bound = {"threshold": t, "margin": m, "w": w, "gap_weight": g}
                    v = [verdict(r, decide_request(r.text, library, False, method, bound), library) for r in reqs]
                    right, wrong = v.count("right"), v.count("wrong")
                    rows.append({"w": w, "margin": m, "gap_weight": g, "threshold": t, "right": right, "wrong": wrong,
                                 "refused": v.count("refused"), "precision": round(right / max(1, right + wrong), 3),
                                 "recall": round(right / n_cov, 3)})
    finally:
        retriever.cache_queries = False
        retriever._rcache.clear()
    return rows


def choose(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The best grid point (right - 3 * wrong - 50 * |threshold - default threshold|); among equals, the
    one nearest the shipped default. A dev set of a few dozen requests is separated by a wide range of
    thresholds, and its middle sat high: new wordings score lower than the ones the set was tuned on.
    The default was chosen on 278 requests of three apps pooled, so a library's own set moves it only as
    far as that set requires, and only where the move gains more than it costs: galculator's 24 dev
    requests put it at 0.46 for one more right run than at 0.62, and on eight later splits that point ran
    10 more right and 4 more wrong."""
    def util(r: dict[str, Any]) -> float:
        return r["right"] - WRONG_COST * r["wrong"] - SHIFT_COST * abs(r["threshold"] - DEFAULT_BOUNDARY["threshold"])

    def distance(r: dict[str, Any]) -> float:
        return sum(abs(r[k] - DEFAULT_BOUNDARY[k]) for k in ("threshold", "w", "margin", "gap_weight"))
    best = max(util(r) for r in rows)
    return dict(min((r for r in rows if util(r) == best), key=lambda r: (distance(r), r["threshold"])))


def calibrate(library: Any, reqs: list[DevRequest], method: str = "fused", source: str = "",
              store: bool = True, **grid: Any) -> dict[str, Any]:
    """Sweep (grid: weights, margins, thresholds), choose, and (store=True) save the boundary with the
    library; returns what was stored."""
    rows = sweep(library, reqs, method, **grid)
    pick = choose(rows)
    curve = [{k: r[k] for k in ("threshold", "precision", "recall", "right", "wrong")} for r in rows
             if r["w"] == pick["w"] and r["margin"] == pick["margin"] and r.get("gap_weight") == pick["gap_weight"]]
    bound = {"threshold": pick["threshold"], "margin": pick["margin"], "w": pick["w"],
             "gap_weight": pick["gap_weight"], "calibrated": True,
             "calibrated_on": source or f"{len(reqs)} development requests", "dev": {k: pick[k] for k in (
                 "right", "wrong", "refused", "precision", "recall")}, "curve": curve}
    if store:
        library.set_meta(f"boundary.{method}", bound)
    return bound
