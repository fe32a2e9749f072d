"""Skills first, and knowing the boundary: decide from the skill library before any model call.

`decide_request` (what `run_task` uses) ranks skills by meaning (skills.retrieval: sentence embeddings
fused with BM25) for the whole request and for each of its clauses ("turn on X and Y"), then:

- a clause whose best skill scores under the library's calibrated threshold -> "outside known skills";
- two different skills within the calibrated margin of each other -> stop, naming both (no guess);
- the confident match is recorded as failed -> "outside known skills";
- no model and every clause has one confident verified skill -> run them in order, values bound
  from the request (quoted or not, numbers), toggles turned on/off against their current state;
- a skill that needs a value the request does not give -> stop, naming the value.

`decide` is the earlier word-overlap heuristic (half the task's words in the skill's text), kept as
the baseline benchmarks/intent_bench.py measures against.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from cua.agent.keypad import has_keypad, key_skills, missing_keys
from skills import wordnet
from skills.arithmetic import Calculation, calculation
from skills.intent import NUMBER, bind_values, is_toggle, purpose, retrieval_text, splits, strip_verb, wants_flip
from skills.intent import clause as parse_clause
from skills.library import skill_search_text, tokenize
from skills.retrieval import Candidate, Retriever
from skills.skill_text import dialog_title, kind_of, label_of, synonyms, ui_path
from skills.units import typed_context

OUTSIDE = "outside known skills"
MIN_COVER = 0.5
_QUOTED = re.compile(r'"([^"]*)"|“([^”]*)”|(?<![\w])\'([^\']*)\'(?![\w])')
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w|\.\d)")


@dataclass
class Call:
    """One skill to run for one clause of the request."""

    skill: Any
    args: dict[str, Any] = field(default_factory=dict)
    polarity: str | None = None
    clause: str = ""
    score: float = 0.0
    entry: bool = False  # a key that only enters a number of a calculation (a digit, the point)
    implied: bool = False  # the polarity was read into a request that named no on or off ("number the lines")


@dataclass
class Decision:
    kind: Literal["skill", "model", "outside"]
    skill: Any = None
    args: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    nearest: list[dict[str, Any]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    explain: list[str] = field(default_factory=list)
    calculation: Calculation | None = None  # keypad calls: the display must show its result


def _tokens(text: str) -> set[str]:
    return set(tokenize(text))


def _skill_tokens(skill: Any) -> set[str]:
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


# ------------------------------------------------------------------ meaning-based decision (default)
# For a library nobody calibrated (a newly explored app or a hand-written one): the best point of a sweep
# over the five paraphrase splits before fresh3, the three apps pooled (libraries from 15-minute
# explorations). A clear winner is believed lower (gap weight 0.5: up to 0.15 for a lead of 0.3 over the
# best rival). README: Understanding requests.
DEFAULT_BOUNDARY = {"threshold": 0.62, "margin": 0.03, "w": 0.7, "gap_weight": 0.5}
_MENU_WORD = re.compile(r"\bmenus?\b", re.IGNORECASE)
_RETRIEVERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # one index per open library


def boundary_of(library: Any, method: str = "fused") -> dict[str, Any]:
    """The run/refuse threshold, margin and fusion weight stored with the library (calibrated), or defaults."""
    stored = library.get_meta(f"boundary.{method}") if library is not None and hasattr(library, "get_meta") else None
    return {**DEFAULT_BOUNDARY, "calibrated": False, **(stored or {})}


@dataclass
class ClauseMatch:
    text: str
    status: Literal["match", "none", "ambiguous", "failed"]
    best: Any = None  # skills.retrieval.Candidate
    second: Any = None
    clause: Any = None  # skills.intent.Clause
    note: str = ""

    @property
    def score(self) -> float:
        return self.best.score if self.best is not None else 0.0


def _group(skill: Any) -> str:
    """Same control reached two ways (Search › Find, View › Toolbar › Find) is one choice, not a tie."""
    path = ui_path(skill)
    return (path[-1] if path else skill.name).lower()


def _same_line(a: Any, b: Any) -> bool:
    pa, pb = ui_path(a), ui_path(b)
    n = min(len(pa), len(pb))
    return n > 0 and pa[:n] == pb[:n]


JUDGED = 40  # candidates a clause's rules look at, best first (skills.retrieval ranks them all)
LINE_SLACK = 0.05  # a part's best may beat the whole request's skill by this much and still be that skill's


def _covers(skill: Any, part: str, cands: list[Any], bound: dict[str, Any]) -> bool:
    """Does `skill` (the whole request's best) also serve this part? Only when no other control is the
    part's own best match (of any status: an unverified "Match case" is still what "turn on match case"
    names, not the find bar whose dialog shows it), and the skill scores over the threshold on it, or the
    part's best is this skill or a control on its UI path, or its text has every content word of the part
    ("insert today's date and time": "time"). A part all of whose words are in the skill's label serves
    it ("save and load sessions": "save" is Save/Restore Session's)."""
    words = set(tokenize(strip_verb(retrieval_text(parse_clause(part)))))
    if words and words <= set(tokenize(_last_label(skill))):  # "save and load sessions": Save/Restore Session
        return True
    top = next((x for x in cands if kind_of(x.skill) != "menu"), None)
    mine = next((x.score for x in cands if x.skill.name == skill.name), 0.0)
    on_line = top is not None and _same_line(top.skill, skill)
    if top is not None and _group(top.skill) != _group(skill) and top.score - mine > (LINE_SLACK if on_line else 0.02):
        return False
    if _rests_on_verb(part, skill):
        return False
    if mine >= bound["threshold"]:
        return True
    if on_line:  # the part's own best is this skill or a control on its way ("who made this calculator and
        return True  # what version is it": About twice; "the lettering is tiny": Font's OK): nothing else asked
    return bool(words) and words <= set(tokenize(skill_search_text(skill)))


def _last_label(skill: Any) -> str:
    return skill.name.rsplit("›", 1)[-1].strip(" .:…").lower()


def _verb_first(text: str, ranked: list[Any]) -> list[Any]:
    """Among sibling skills that differ only in their final button ("... › Find", "... › Replace"), the
    one whose button is the request's own verb ("find the word ...") comes first, and its siblings are
    alternatives of one form, not rival readings."""
    words = text.strip().split()
    verb = words[0].lower() if words else ""
    if len(ranked) < 2 or not verb:
        return ranked
    top = ranked[0]
    parent = top.skill.name.rsplit("›", 1)[0]
    siblings = [x for x in ranked[:4] if x.skill.name.rsplit("›", 1)[0] == parent]
    pick = next((x for x in siblings if _last_label(x.skill) == verb), None)
    if pick is None or pick is top or top.score - pick.score > 0.15:
        return ranked
    rest = [x for x in ranked if x.skill.name.rsplit("›", 1)[0] != parent]
    return [pick, *rest]


# Controls that hold a setting (a box to tick, a tab to pick): a request can be about one of them. A push
# button in the dialog a skill opens ("Jump to" in Go To) is that dialog's own action, not another intent.
STATEFUL = ("check", "toggle", "radio", "page tab", "combo", "spin", "slider")


def _inner_control(text: str, skill: Any) -> str | None:
    """The name of a control the skill's result shows (a box in the dialog or tab it opens, a button of
    the bar it shows) that the request names more fully than the skill's own label: the request is about
    that control, which this skill only brings on screen ("show thousands separators in numbers" against
    the Numbers tab that shows a "Show thousands separator" box)."""
    path = ui_path(skill)
    own = set(tokenize(" ".join(path[-2:]))) if path else set(tokenize(skill.name))
    words = set(tokenize(retrieval_text(parse_clause(text))))
    named_own = len((own | set(tokenize(synonyms(path[-1]) if path else ""))) & words)  # "settings": Preferences
    shown = [e.name for e in getattr(skill.postcondition, "effects", []) or []
             if e.kind in ("appeared", "state") and e.name and any(r in str(e.role) for r in STATEFUL)]
    shown += [label_of(sig.rsplit("/", 1)[-1].split("#")[0].partition(":")[2]) for sig in skill.postcondition.present
              if any(r in sig.rsplit("/", 1)[-1].partition(":")[0] for r in STATEFUL)]
    for name in shown:
        toks = set(tokenize(name)) - own
        hit = len(toks & words)
        if toks and hit > named_own and (hit == len(toks) or (hit >= 2 and hit >= 0.6 * len(toks))):
            return name
    return None


def _named_by_reason(text: str, skill: Any) -> bool:
    """The skill's label is named in the reason the request gives and not in what it asks for: "put a
    password on this file so nobody else can open it" does not ask for *File › Open*. A reason that only
    describes the wanted effect ("lock this document so I can read it without typing") names no label."""
    head, why = purpose(text)
    label = set(tokenize(_last_label(skill)))
    return bool(why) and bool(label & set(tokenize(why))) and not label & set(tokenize(head))


# Verbs that say little about which control is meant: after one of them, the object names the control
_GENERIC_VERB = re.compile(r"^(open|show|display|bring up|use|get|set|make|put|start|run|launch|activate|enable|"
                           r"go|view|see|give|load)\b", re.IGNORECASE)


def _rests_on_verb(text: str, skill: Any) -> bool:
    """The request names the skill only through a generic verb: "open the preferences" matches File › Open
    by "open" alone, and no word of its object (or a WordNet synonym of one) is in the skill's UI path,
    its label's synonyms or the dialog it opens."""
    plain = retrieval_text(parse_clause(text))
    m = _GENERIC_VERB.match(plain)
    if not m:
        return False
    verb = set(tokenize(m.group(1)))
    obj = [w for w in re.findall(r"[a-z]+", plain[m.end():].lower()) if tokenize(w) and not set(tokenize(w)) & verb]
    path = ui_path(skill)
    named = " ".join([*path, synonyms(path[-1]) if path else "", dialog_title(skill) or ""])
    words = set(tokenize(named))
    if not obj or not verb & words:
        return False
    plain_named = set(re.findall(r"[a-z]+", named.lower()))
    their = wordnet.senses_of(plain_named)
    return not any(set(tokenize(w)) & words or wordnet.synonym_of_any(w, plain_named, their) for w in obj)


# "close mousepad", "quit the calculator", "shut the editor down": about the application itself (its name
# read as "the application", skills.skill_text.app_as_word), not about a Close button of one of its dialogs
_QUIT_APP = re.compile(r"\b(?:close|exit|quit|shut|leave|terminate)\b(?:\s+down)?\s+(?:the\s+|this\s+|my\s+)?"
                       r"(?:application|app|program|editor|calculator|window)\b", re.IGNORECASE)


def _asks_to_quit(text: str, app: str) -> bool:
    return bool(_QUIT_APP.search(retrieval_text(parse_clause(text), app)))


def _app_quit(skill: Any, labels: str = r"(?:quit|exit|close)(?: window)?") -> bool:
    """A top-level Quit/Exit/Close item: a menu's, not the button of a dialog that a menu item or a
    tool-bar button opened."""
    path, role = ui_path(skill), str(skill.extra.get("role") or "menu item")
    return len(path) <= 2 and "menu" in role and bool(re.fullmatch(labels, _last_label(skill)))


def _quit_first(text: str, ranked: list[Any], app: str) -> list[Any]:
    """A request to quit the application takes its Quit/Exit item, at the score of the best match to
    closing something, over a Close item that closes only the document ("close the editor" in an editor
    with tabs) or a dialog: those are no rivals."""
    if not _asks_to_quit(text, app) or not ranked:
        return ranked
    quit_item = next((x for x in ranked if _app_quit(x.skill, r"quit|exit")), None)
    if quit_item is None:
        return ranked
    top = max(x.score for x in ranked)
    return [replace(quit_item, score=top), *(x for x in ranked if not re.fullmatch(
        r"(?:quit|exit|close)(?: window)?", _last_label(x.skill)))]


def _unverified_rival(cands: list[Any], best: Any) -> Any:
    """An unverified skill for another control that matches the request better than the best verified
    one: the request is about that control, and running the verified one would be a wrong run."""
    for x in cands:
        if x.score <= best.score:
            return None
        if x.skill.status == "unverified" and _group(x.skill) != _group(best.skill) \
                and not _same_line(best.skill, x.skill) and kind_of(x.skill) != "menu":
            return x
    return None


# Words for pressing a key or picking a value: with these (or none), a number that is a control's whole
# name asks for that control
_KEY_WORDS = set(tokenize("press push hit tap punch click type enter input key button digit number keypad in "
                          "set use make change switch put select choose pick turn want"))


def _more_than_a_key(c: Any, skill: Any) -> bool:
    """The skill is a key named by a number ("7", "Tab Size › 4"), and the clause asks for more than that
    key: "what is 3 squared", "the cube of 3" name an operation on 3, not the key 3 alone."""
    label = _last_label(skill)
    if not NUMBER.fullmatch(label):
        return False
    words = set(tokenize(retrieval_text(c, names=frozenset({label})))) - _KEY_WORDS - {label}
    known = f"{skill_search_text(skill)} {' '.join(synonyms(p) for p in ui_path(skill))}"
    return bool(words - set(tokenize(known)))


# A request for a place to do something in (a dialog, a panel) rather than for a setting
_PLACE_TO_ACT = re.compile(r"\b(?:box|field|window|dialog|panel|pane|bar|screen|form|prompt|pop-?up)\s+(?:where|in which|that "
                           r"lets|which lets|to type|for typing)\b|\bwhatever lets me\b", re.IGNORECASE)
_TYPING = re.compile(r"\b(?:type|typing|enter|write|fill|input)\b", re.IGNORECASE)


def _types_sample(skill: Any) -> bool:
    """The skill types a fixed text: an explored "set this field" primitive without parameters. A command
    explored on typed text ("type document › Edit › Sort Lines") does not: it runs on the user's text
    (cua.agent.skill_calls.on_users_text)."""
    return not skill.parameters and not typed_context(skill) and any(
        isinstance(st.action, dict) and st.action.get("kind") == "type" for st in skill.steps)


def _explored_field(skill: Any) -> bool:
    """The skill is the explorer's "type <field>" step, typing its sample value (skills.candidates)."""
    return _last_label(skill).startswith("type ")


def _can_turn_off(skill: Any) -> bool:
    """Can the skill's result be off: a toggle or choice, or a click that shows or hides something. A keypad
    key or a command whose only recorded effect is a changed value has nothing to turn off."""
    effects = getattr(skill.postcondition, "effects", []) or []
    if kind_of(skill) not in ("button", "command") or not effects:
        return True
    return any(e.kind in ("appeared", "disappeared", "window_opened", "state", "title") for e in effects)


def _may_open_a_place(skill: Any) -> bool:
    """The skill opens a window, shows new controls or moves the focus (a find bar already shown), or
    its effects were not recorded (an imported library)."""
    effects = getattr(skill.postcondition, "effects", []) or []
    return not effects or any(e.kind in ("window_opened", "appeared", "focus") and not e.inherited for e in effects)


def judge(text: str, cands: list[Any], bound: dict[str, Any], app: str = "") -> ClauseMatch:
    """Is there one confident skill for this clause? Candidates are ranked, best first."""
    c = parse_clause(text)
    # only the best few can win or be the runner-up: the rules below cost per candidate (a third of a
    # decision's time in a 200-skill library, judged on all of them)
    usable = [x for x in cands[:JUDGED] if x.skill.status in ("verified", "failed")]
    has_values = bool(c.quoted or c.numbers or c.unquoted)
    takers = [x for x in usable if x.skill.parameters]
    if has_values and takers and takers[0].score >= bound["threshold"]:
        usable = takers  # the request gives values: a skill that takes them
    elif not has_values:  # no values given: a skill that needs none (not one typing its sample default)
        usable = [x for x in usable if not x.skill.parameters] or usable
    # none that types a fixed sample into the app ("Replace › type text"), unless the request is to type; an
    # explored field's sample never ("let me type expressions as text" is no request for its "Hello")
    usable = [x for x in usable if not (_types_sample(x.skill) and (_explored_field(x.skill) or not _TYPING.search(text)))]
    if c.polarity == "off":  # "take the clear keys off the keypad": not a key, whose click only changes a value
        usable = [x for x in usable if _can_turn_off(x.skill)]
    usable = [x for x in usable if not _more_than_a_key(c, x.skill)]
    if _PLACE_TO_ACT.search(text):  # "the box where I type a line number": not a setting to turn on, and
        # a place it opens, shows or puts the cursor in, not a command whose effect is only a changed text
        # ("open the panel where I type the wrong spelling and the right one" is no Check Spelling)
        usable = [x for x in usable if kind_of(x.skill) not in ("toggle", "radio")] or usable
        usable = [x for x in usable if _may_open_a_place(x.skill)]
    if not _MENU_WORD.search(text):  # opening a menu is hardly ever what a request is for
        usable = [x for x in usable if kind_of(x.skill) != "menu"]
    members: dict[str, list[Any]] = {}
    for x in usable:
        members.setdefault(_group(x.skill), []).append(x)
    groups = {}
    for g, xs in members.items():  # one choice per control; a verified way first (a right-click path to
        top = max(x.score for x in xs)  # Duplicate Line that failed is no reason to refuse the Edit menu's),
        near = [x for x in xs if x.score >= top - 0.05]  # then the shortest way among near-equal scores
        pick = min(near, key=lambda x: (x.skill.status != "verified", len(x.skill.steps), -x.score, x.skill.name))
        groups[g] = Candidate(pick.skill, top, pick.cosine, pick.lexical)
    ranked = sorted(groups.values(), key=lambda x: (-x.score, len(x.skill.steps), x.skill.name))
    ranked = _quit_first(text, _verb_first(text, ranked), app)
    best = ranked[0] if ranked else None
    # a skill on the same UI path (an ancestor that opens the way, a descendant that goes further) is
    # not a rival choice: the margin is to the best skill that does something else
    second = next((x for x in ranked[1:] if not _same_line(best.skill, x.skill)), None) if best else None
    # a match that stands out from everything else is believed at a lower score than one among many
    # near-equals: the gap to the best rival counts towards the threshold (gap_weight, calibrated)
    lead = min(0.3, best.score - second.score) if best is not None and second is not None else 0.3
    if best is None or best.score + bound.get("gap_weight", 0.0) * lead < bound["threshold"]:
        return ClauseMatch(text, "none", best, second, c)
    if second is not None and best.score - second.score < bound["margin"]:
        return ClauseMatch(text, "ambiguous", best, second, c)
    rival = _unverified_rival(cands, best)
    if rival is not None:  # "I want the tool bar visible": the toolbar is known, only not verified
        return ClauseMatch(text, "none", best, second, c, note=f"it reads as {rival.skill.name!r} ({rival.score:.3f}), "
                           f"which exploration found but did not verify; {best.skill.name!r} is only the nearest "
                           "verified skill")
    if _asks_to_quit(text, app) and not _app_quit(best.skill):
        return ClauseMatch(text, "none", best, second, c, note="it asks to quit the application, which no known "
                           f"skill does ({best.skill.name!r} is not the application's Quit)")
    if _named_by_reason(text, best.skill):  # "put a password on this file so nobody else can open it"
        return ClauseMatch(text, "none", best, second, c, note=f"only the reason it gives names {best.skill.name!r}, "
                           "not what it asks for")
    if _rests_on_verb(text, best.skill):  # "open the preferences" against File › Open
        return ClauseMatch(text, "none", best, second, c, note=f"only its verb names {best.skill.name!r}; what it "
                           "asks for is not that skill's")
    inner = _inner_control(text, best.skill)
    if inner:  # "turn on match case" against the find bar that merely shows a Match case box
        return ClauseMatch(text, "none", best, second, c, note=f"names {inner!r}, a control that {best.skill.name!r} "
                           "shows but does not set; no skill for it is known")
    return ClauseMatch(text, "failed" if best.skill.status == "failed" else "match", best, second, c)


def read_request(task: str, library: Any, method: str = "fused",
                 bound: dict[str, Any] | None = None) -> tuple[list[ClauseMatch], ClauseMatch, list[Any]]:
    """The reading of the request to act on (one clause or several), the whole-request match, and the
    whole request's ranked candidates."""
    bound = bound or boundary_of(library, method)
    retriever = _RETRIEVERS.get(library)
    if retriever is None:
        retriever = _RETRIEVERS[library] = Retriever(library)
    retriever.refresh()
    readings = [[task]] + splits(task, keep=retriever.and_phrases)
    texts = [t for r in readings for t in r]
    app = retriever.apps[0] if len(retriever.apps) == 1 else ""
    ranked = retriever.rank([retrieval_text(parse_clause(t), app, retriever.number_names) for t in texts],
                            method=method, w=bound["w"])
    by_text = dict(zip(texts, ranked))
    whole = judge(task, by_text[task], bound, app)
    choice = [whole]
    for reading in readings[1:]:
        parts = [judge(t, by_text[t], bound, app) for t in reading]
        distinct = len({_group(p.best.skill) for p in parts if p.best is not None}) == len(parts)
        if whole.status == "match" and _cut_list(task, reading, parts, whole):
            break
        # believe the split when the whole request's best skill does not itself match every part
        # ("line numbers and the status bar"), not when it does ("find and replace"); a part then left
        # without a skill makes the request outside the library rather than half done
        unexplained = whole.best is None or not all(_covers(whole.best.skill, t, by_text[t], bound) for t in reading)
        if (whole.status == "match" and unexplained) or (
                whole.status != "match" and distinct and all(p.status == "match" for p in parts)):
            choice = parts
            break
    return choice, whole, by_text[task]


def _cut_list(task: str, reading: list[str], parts: list[ClauseMatch], whole: ClauseMatch) -> bool:
    """Is this reading a list of names cut up ("hide the C, AC and backspace keys" -> "hide the C", "hide
    AC", "hide backspace keys")? A part there has a verb carried to it that the request never says before
    it, some part matches nothing, and none matches anything but the whole request's own skill."""
    return any(t.lower() not in task.lower() for t in reading) and any(p.status == "none" for p in parts) and all(
        p.status == "none" or (p.best is not None and _same_line(p.best.skill, whole.best.skill)) for p in parts)


def decide_request(task: str, library: Any, has_model: bool, method: str = "fused",
                   bound: dict[str, Any] | None = None) -> Decision:
    """What to do with `task` given the library (see the module docstring); `explain` says why."""
    if library is None or len(library) == 0:
        why = "no skill library" if library is None else "the skill library is empty"
        return (Decision("model", explain=[why]) if has_model else
                Decision("outside", reason=f"{why}, and no model is configured (--model none)", explain=[why]))
    calc = calculation(task)
    keys = key_skills(library) if calc is not None else {}
    if calc is not None and has_keypad(keys):
        return keypad_decision(calc, keys, has_model)
    bound = bound or boundary_of(library, method)
    parts, whole, cands = read_request(task, library, method, bound)
    nearest = [c.row() for c in cands[:5]]
    explain = [f"retrieval: {method} (threshold {bound['threshold']:.3f}, margin {bound['margin']:.3f}"
               f"{', weight ' + format(bound['w'], '.2f') if method == 'fused' else ''}; "
               f"{'calibrated on ' + str(bound.get('calibrated_on', 'a development set')) if bound.get('calibrated') else 'defaults, not calibrated'})"]
    if not wordnet.available():
        explain.append(f"WordNet is not installed ({wordnet.ROOT} is missing): synonyms such as typeface/font "
                       "are not matched; `apt-get install wordnet-base` (or `make setup`)")
    if len(parts) > 1:
        explain.append(f"read as {len(parts)} intents: " + " | ".join(p.text for p in parts))
    for p in parts:
        b, s = p.best, p.second
        explain.append(f"{p.text!r}: best {b.skill.name if b else '-'} {p.score:.3f}"
                       + (f", next {s.skill.name} {s.score:.3f}" if s else "") + f" -> {p.status}"
                       + (f" ({p.note})" if p.note else ""))
    failed = next((p for p in parts if p.status == "failed"), None)
    if failed is not None:
        s = failed.best.skill
        return Decision("outside", reason=f"the task matches skill {s.name!r}, which is recorded as failed "
                                          f"({s.failed_runs} failed runs)", nearest=nearest, explain=explain)
    if has_model:
        return Decision("model", nearest=nearest, explain=explain + ["a model is configured: it plans, with "
                                                                     "these skills offered"])
    none = next((p for p in parts if p.status == "none"), None)
    if none is not None:
        best = f"; the nearest, {none.best.skill.name!r}, scores {none.score:.3f}" if none.best else ""
        why = none.note or f"best score under the threshold {bound['threshold']:.3f}{best}"
        return Decision("outside", reason=f"no verified skill covers {none.text!r} ({why}), and no model is "
                                          "configured (--model none)", nearest=nearest, explain=explain)
    amb = next((p for p in parts if p.status == "ambiguous"), None)
    if amb is not None:
        return Decision("outside", reason=f"{amb.text!r} matches two skills about equally: {amb.best.skill.name!r} "
                                          f"({amb.best.score:.3f}) and {amb.second.skill.name!r} "
                                          f"({amb.second.score:.3f}); say which one", nearest=nearest, explain=explain)
    calls = []
    for p in parts:
        try:
            args = bind_values(p.best.skill, p.clause)
        except ValueError as e:
            return Decision("outside", reason=str(e), nearest=nearest, explain=explain)
        given = {str(v) for v in args.values()}  # a number may be in the control's own name ("Tab Size › 4")
        unused = [q for q in p.clause.quoted if q not in given] + [
            n for n in p.clause.numbers if n not in given and not re.search(rf"(?<![\d.]){re.escape(n)}(?![\d.])",
                                                                            p.best.skill.name)]
        opener = _opener(p.best.skill, library) if unused and _OPEN_PLACE.search(p.text) else None
        if opener is not None:  # "X should become Y. Open the tool that swaps words": the values say what
            # the tool is for; what the request asks for is the tool
            explain.append(f"{unused[0]!r} is for the dialog {opener.name!r} opens, which is what it asks for")
            calls.append(Call(opener, {}, None, p.text, p.score))
            continue
        if unused:  # running it would leave the request's value unused: success would be a false one
            return Decision("outside", reason=f"the request gives {unused[0]!r}, but its best skill "
                                              f"{p.best.skill.name!r} takes no value for it, and no model is "
                                              "configured (--model none)", nearest=nearest,
                            explain=explain + [f"{unused[0]!r} would be left unused by {p.best.skill.name!r}"])
        pol = p.clause.polarity  # a typed toggle named without on/off words ("number the lines") means on
        if pol == "off" and kind_of(p.best.skill) == "dialog":
            # running it would open the dialog, and finding it closed ("already off") a false success
            return Decision("outside", reason=f"{p.text!r} asks to turn something off, and its best skill "
                            f"{p.best.skill.name!r} only opens a dialog (where that may be set); no known skill "
                            "turns it off, and no model is configured (--model none)", nearest=nearest,
                            explain=explain + [f"'off' for {p.best.skill.name!r}, which opens a dialog"])
        implied = pol is None and is_toggle(p.best.skill) and not wants_flip(p.text)
        pol = "on" if implied else pol
        if calls and calls[-1].skill.name == p.best.skill.name and calls[-1].args == args \
                and calls[-1].polarity == pol:  # two wordings of one intent ("swap some words, open replace")
            continue
        calls.append(Call(p.best.skill, args, pol, p.text, p.score, implied=implied))
        if pol and is_toggle(p.best.skill):
            explain.append(f"{p.best.skill.name!r} is a toggle: turn it {pol}, leaving it alone if it already is")
        elif pol:
            explain.append(f"{p.text!r} asks for {p.best.skill.name!r} {pol}: judged by its visible effect")
    explain.append("run " + ", then ".join(c.skill.name for c in calls))
    return Decision("skill", skill=calls[0].skill, args=calls[0].args, nearest=nearest, calls=calls, explain=explain)


# "open the tool that ...", "bring up the box where ...": the request asks for a place to act, not the act
_OPEN_PLACE = re.compile(r"\b(?:open|bring up|pull up|pop up|show me|give me|get me|find me|take me to)\s+(?:up\s+)?(?:(?:the|a|that|"
                         r"this)?\s*(?:\w+\s+)?(?:tool|thing|window|dialog|box|panel|pane|bar|place|screen|feature)|"
                         r"whatever|something)\b",
                         re.IGNORECASE)


def _opener(skill: Any, library: Any) -> Any:
    """The verified skill on `skill`'s own path that opens the dialog or bar it acts in ("Search › Find and
    Replace..." for "Search › Find and Replace... › Search for: {text} › Replace"), or `skill` itself when
    it opens one (a "Jump to" bar with its line box); else None."""
    path = skill.name.split(" › ")
    for i in range(len(path), 0, -1):
        s = library.get(" › ".join(path[:i]))
        if s is not None and s.status == "verified" and kind_of(s) == "dialog":
            return s
    opens = not skill.parameters and skill.postcondition.effects and _may_open_a_place(skill)
    return skill if opens and skill.status == "verified" else None


def keypad_decision(calc: Calculation, keys: dict[str, Any], has_model: bool) -> Decision:
    """A calculation on the library's keypad: its keys in order; else the model plans, or without one
    "outside" names the keys the library lacks."""
    explain = [f"a calculation: {calc.describe()}, on the keypad: " + " ".join(calc.keys)]
    missing = missing_keys(calc, keys)
    if missing and has_model:
        return Decision("model", explain=explain + [f"no verified key for {', '.join(missing)}: the model plans"])
    if missing:
        why = ", ".join(f"{k!r}" + (f" ({keys[k].name!r} is {keys[k].status})" if keys.get(k) else "") for k in missing)
        return Decision("outside", reason=f"the request is the calculation {calc.text}, but no verified key is known "
                                          f"for {why}, and no model is configured (--model none)",
                        explain=explain + [f"no verified key for {why}"])
    calls = [Call(keys[k], clause=k, score=1.0, entry=e) for k, e in zip(calc.keys, calc.entries)]
    explain.append("run " + ", then ".join(c.skill.name for c in calls) + "; success when the display shows " + (
        "the result for the number it shows first" if calc.from_display else calc.describe().rsplit(" = ", 1)[-1]))
    return Decision("skill", skill=calls[-1].skill, nearest=[], calls=calls, explain=explain, calculation=calc)
