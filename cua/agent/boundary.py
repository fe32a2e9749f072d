"""Skills first, and knowing the boundary: decide from the skill library before any model call.

- the task matches a skill recorded as failed -> stop: "outside known skills";
- no model and a verified skill covers the task -> run that skill, its arguments taken from the
  task text (quoted strings, `name=value`, numbers);
- no model and nothing verified covers it -> stop: "outside known skills", nearest skills listed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

OUTSIDE = "outside known skills"
MIN_COVER = 0.5
_QUOTED = re.compile(r'"([^"]*)"|“([^”]*)”|(?<![\w])\'([^\']*)\'(?![\w])')
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


@dataclass
class Decision:
    kind: Literal["skill", "model", "outside"]
    skill: Any = None
    args: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    nearest: list[dict[str, Any]] = field(default_factory=list)


def _tokens(text: str) -> set[str]:
    from skills.library import tokenize

    return set(tokenize(text))


def _skill_tokens(skill: Any) -> set[str]:
    from skills.library import skill_search_text

    return _tokens(skill_search_text(skill))


def quoted(task: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(task)]


def coverage(task: str, skill: Any) -> float:
    """Share of the task's content words (quoted values and numbers left out) the skill's text has."""
    bare = _NUMBER.sub(" ", _QUOTED.sub(" ", task))
    words = _tokens(bare)
    if not words:
        return 0.0
    return len(words & _skill_tokens(skill)) / len(words)


def extract_args(task: str, skill: Any) -> dict[str, Any]:
    """Argument values for `skill` from the task text; ValueError names a missing one and the fix."""
    args: dict[str, Any] = {}
    for p in skill.parameters:  # explicit name=value / name: "value"
        m = re.search(rf'\b{re.escape(p.name)}\s*[=:]\s*(?:"([^"]*)"|\'([^\']*)\'|(\S+))', task)
        if m:
            args[p.name] = next(g for g in m.groups() if g is not None)
    strings = [q for q in quoted(task) if q not in args.values()]
    numbers = _NUMBER.findall(_QUOTED.sub(" ", task))
    for p in skill.parameters:
        if p.name in args:
            continue
        if p.type in ("int", "float") and numbers:
            args[p.name] = numbers.pop(0)
        elif p.type == "str" and strings:
            args[p.name] = strings.pop(0)
        elif p.default is not None:
            args[p.name] = p.default
        else:
            raise ValueError(f"skill {skill.name!r} needs {p.name!r} ({p.description or p.type}); put it in "
                             f'quotes in the task, e.g. {p.name}="..."')
    casts = {"int": int, "float": float, "bool": lambda v: str(v).lower() in ("1", "true", "yes")}
    for p in skill.parameters:
        if p.type in casts and isinstance(args[p.name], str):
            try:
                args[p.name] = casts[p.type](args[p.name])
            except ValueError:
                raise ValueError(f"skill {skill.name!r}: {p.name}={args[p.name]!r} is not a {p.type}") from None
    return args


def nearest_list(matches: list[tuple[Any, float]], task: str) -> list[dict[str, Any]]:
    return [{"name": s.name, "status": s.status, "score": round(score, 3),
             "coverage": round(coverage(task, s), 2), "description": s.description}
            for s, score in matches]


def retrieve(library: Any, task: str, k: int = 5) -> list[tuple[Any, float]]:
    """library.search (BM25) first; then, for what BM25 cannot score (tiny libraries give every
    shared word zero IDF), the remaining skills ranked by word coverage of the task, so the nearest
    skills can always be listed."""
    hits = list(library.search(task, k=k))
    if len(hits) < k:
        seen = {s.name for s, _ in hits}
        extra = [(s, coverage(task, s)) for s in library.list() if s.name not in seen]
        order = {"verified": 0, "unverified": 1, "failed": 2}
        hits += sorted(extra, key=lambda p: (-p[1], order.get(p[0].status, 3), p[0].name))[: k - len(hits)]
    return hits


def prefer_fitting(skills: list[Any], task: str) -> list[Any]:
    """Re-rank retrieved skills (stable, BM25 order kept among equals): when the task gives values (quoted
    text, numbers), skills that take parameters first, since one without cannot use them; then skills whose
    final control (the last UI-path part) the task names more often."""
    has_values = bool(quoted(task) or _NUMBER.findall(_QUOTED.sub(" ", task)))
    words = list(_tokens_list(_QUOTED.sub(" ", task)))

    def final_mentions(skill: Any) -> int:
        last = _tokens(skill.name.split("›")[-1])
        return sum(w in last for w in words)

    return sorted(skills, key=lambda s: (-(has_values and bool(s.parameters)), -final_mentions(s)))


def _tokens_list(text: str) -> list[str]:
    from skills.library import tokenize

    return tokenize(text)


def decide(task: str, matches: list[tuple[Any, float]], has_model: bool, min_cover: float = MIN_COVER) -> Decision:
    """What to do with `task` given library matches (best first) and whether a model is configured."""
    nearest = nearest_list(matches, task)
    covering = [(s, sc) for s, sc in matches if coverage(task, s) >= min_cover]
    if covering and covering[0][0].status == "failed":
        s = covering[0][0]
        return Decision("outside", reason=f"the task matches skill {s.name!r}, which is recorded as failed "
                                          f"({s.failed_runs} failed runs)", nearest=nearest)
    verified = prefer_fitting([s for s, _ in covering if s.status == "verified"], task)
    if has_model:
        return Decision("model", nearest=nearest)
    if not verified:
        why = "the skill library is empty" if not matches else "no verified skill covers this task"
        return Decision("outside", reason=f"{why}, and no model is configured (--model none)", nearest=nearest)
    errors = []
    for skill in verified:
        try:
            return Decision("skill", skill=skill, args=extract_args(task, skill), nearest=nearest)
        except ValueError as e:
            errors.append(str(e))
    return Decision("outside", reason=f"a verified skill matches but its arguments are not in the task: {errors[0]}",
                    nearest=nearest)
