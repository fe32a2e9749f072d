"""What a request asks for, without a language model: its clauses, on/off polarity, and values.

"turn on line numbers and word wrap" -> two clauses ("turn on line numbers", "turn on word wrap"),
both with polarity "on". Values are quoted text ('type "hello"'), unquoted text after a cue word
("search for hello"), and numbers ("set the tab width to 4"). Which clause split to believe is
decided by the boundary (cua.agent.boundary) from how well each part matches a skill.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from skills import wordnet
from skills.effects import Effect
from skills.skill_text import app_as_word, kind_of, label_of, toggle_target

Polarity = Literal["on", "off"] | None
QUOTED = re.compile(r'"([^"]*)"|“([^”]*)”|(?<![\w])\'([^\']*)\'(?![\w])')
NUMBER = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?!\w|\.\d)")  # not the 16 of "UTF-16"; the 3 of "line 3."
# A line, row or column said in words ("the fourth line", "row two"): a value as much as "line 4" is
_NUMBER_WORDS = "zero one two three four five six seven eight nine ten".split()
_ORDINALS = "zeroth first second third fourth fifth sixth seventh eighth ninth tenth".split()
_PLACE_WORD = re.compile(rf"\b(?:({'|'.join(_ORDINALS[1:])})\s+(?:line|row|column)|(?:line|row|column)\s+"
                         rf"({'|'.join(_NUMBER_WORDS[1:])}))\b", re.IGNORECASE)
# A digit said as a word ("punch in a nine"); "one" is left alone, being mostly a pronoun ("a different one")
_DIGIT_WORDS = {w: str(i) for i, w in enumerate(_NUMBER_WORDS) if w != "one"}
# A number base named by its number ("in base 16", "base-two"): the name of a mode, not a value
_BASES = {"2": "binary", "two": "binary", "8": "octal", "eight": "octal", "10": "decimal", "ten": "decimal",
          "16": "hexadecimal", "sixteen": "hexadecimal"}
_BASE = re.compile(rf"\bbase[- ]?({'|'.join(_BASES)})\b", re.IGNORECASE)
_DIGIT_WORD = re.compile(rf"\b({'|'.join(_DIGIT_WORDS)})\b", re.IGNORECASE)
# Where one intent ends and the next begins. A strong break ("and then", "; ", "after that") always
# separates intents; a weak one ("and", a comma) only between imperative clauses ("turn on X and Y",
# "show X, open Y"), not inside a description ("the line and column I'm on", "for opening and saving").
_STRONG = re.compile(r"(\s*(?:,?\s*and then\b|,?\s*(?:and )?after that\b|,?\s*and afterwards\b|,\s*then\b|\bthen\b|;"
                     r"|,?\s*and also\b|\balso\b)\s*)", re.IGNORECASE)
_WEAK = re.compile(r"(\s*(?:,\s*and\b|\band\b|,)\s*)", re.IGNORECASE)
# A piece after a weak break that starts with its own subject is a remark about the request ("hide the menu
# bar, I just want the keypad"), not another item of an imperative list
_SUBJECT = re.compile(r"^(?:i|i'm|i've|i'd|i'll|we|we're|it|it's|its|they|they're|this is|that is|that's|"
                      r"my (?:\w+ ){1,2}(?:is|are|was|were|has|have|keeps?|gets?|feels?|hurts?))\b", re.IGNORECASE)
# A piece after a weak break that starts with a preposition places or qualifies the one before it ("put the
# icons, like save and open, across the top"), and an example list is one phrase ("like save and open")
_PREPOSITION = re.compile(r"^(?:across|along|at|above|below|beneath|under|over|on|onto|in|into|inside|next to|"
                          r"beside|near|to|from|with|without|by|for|down|up)\b", re.IGNORECASE)
_EXAMPLES = re.compile(r"(?:,\s*like|,?\s*\b(?:such as|e\.g\.|including))\s+[^,;.!?()]*", re.IGNORECASE)
_ASIDE = re.compile(r"\([^()]*\)")  # "(new, open, save…)": one aside, never cut
# A list of single words after a preposition names things, not clauses ("buttons for new, open and save")
_WORD_LIST = re.compile(r"\b(?:for|like|with|of)\s+(?:[\w'-]+,\s*)+[\w'-]+,?\s+(?:and|or)\s+[\w'-]+", re.IGNORECASE)
# A piece after a weak break that starts like this is a subordinate clause of the one before it
_SUBORDINATE = re.compile(r"(?:^|\s)(?:what|which|how|where|who|whom|whose|why|when|whether|if|that|so|once|until|unless|"
                          r"while|as soon as)\b", re.IGNORECASE)
_VERB = re.compile(r"^(?:please\s+)?(turn on|turn off|switch on|switch off|switch to|show|hide|enable|disable|"
                   r"open|close|use|set|make|put|display|activate|deactivate|toggle|start|stop|go to|select|"
                   r"choose|change|bring up|get rid of|remove|insert|add|paste|type|write|enter|delete|copy|cut|"
                   r"save|print|find|search|replace|jump|create|run|launch|pick|define|remember|keep|group|list|"
                   r"browse|manage|restore|stamp|tick|untick|check|uncheck|convert|sort|undo|redo|zoom|go|"
                   r"duplicate|move|indent|exit|quit|calculate|compute|clear|reset|load|export|import|lose|ditch|drop|"
                   r"order|arrange|alphabeti[sz]e|reverse|flip|capitali[sz]e|translate|highlight|rename|"
                   r"refresh|reload|increase|decrease|enlarge|shrink|apply|send|email|"
                   r"lock|unlock|encrypt|record|draw|plot|compare)\b",
                   re.IGNORECASE)
_OFF = re.compile(r"\b(turn(?:ed)?\s+off|switch(?:ed)?\s+off|disable|hide|hidden|deactivate|get rid of|lose|ditch|"
                  r"stop (?:(?:it|this|that|them|the \w+)\s+)?(?:from\s+)?\w+ing|"
                  r"(?:don't|do not|no longer) (?:show|display|want|need)|shouldn't|should not|"
                  r"mustn't|must not|"
                  r"no more|without|remove|take away|take off|take (?:\w+ ){1,5}off\b(?! to)|never use|switch \w+(?: \w+)? off|turn \w+(?: \w+)? off|"
                  r"make \w+(?: \w+)? (?:go away|disappear)|unset|uncheck|untick)\b", re.IGNORECASE)
_ON = re.compile(r"\b(turn(?:ed)?\s+on|switch(?:ed)?\s+on|enable|show|display|activate|reveal|unhide|"
                 r"bring back|put on|switch \w+(?: \w+)? on|turn \w+(?: \w+)? on|i want to see|"
                 r"(?:let me|i'd like to|i would like to) see|check|tick|start using)\b", re.IGNORECASE)
_PURPOSE = re.compile(r"\b(?:so that|so (?:i|we|you|it|they|that|nobody|no one|noone|people|others|other people|"
                      r"anyone|everyone|my|the)|because|since|in order to)\b", re.IGNORECASE)
_FLIP = re.compile(r"\b(toggle|flip|switch between|invert)\b", re.IGNORECASE)
_CUE = re.compile(r"\b(?:search(?:ing)? for|look(?:ing)? for|find|hunt for|type|write|enter|insert|named|"
                  r"called|saying|the word|the text|the phrase)\s+(.+)$", re.IGNORECASE)
# What follows a cue word but names a control or a placeholder, not a value
_NO_VALUE = re.compile(r"^(?:(?:bar|box|dialog|window|panel|pane|toolbar|menu|tab|button|field|option|setting|"
                       r"feature|function|tool)s?|(?:a|an|some|any|the|my)? ?(?:word|text|thing|string|phrase|"
                       r"something)s?)\b(?!\s*[\w'\"])", re.IGNORECASE)
_TAIL = re.compile(r"\s+(?:in|inside|within|on|across)\s+(?:the|this|my)\s+\w+.*$|\s+please$|[.!?]+$",
                   re.IGNORECASE)


@dataclass
class Clause:
    text: str
    polarity: Polarity = None
    quoted: list[str] = field(default_factory=list)
    numbers: list[str] = field(default_factory=list)
    unquoted: str | None = None


def quoted(text: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None) for m in QUOTED.finditer(text)]


def polarity(text: str) -> Polarity:
    """'off' when the clause asks to turn something off or hide it, 'on' for on/show words, else None.
    A purpose clause says why, not what to switch: "lock it so I can read without typing" is not off."""
    bare = _PURPOSE.split(QUOTED.sub(" ", text), 1)[0]
    if _OFF.search(bare):
        return "off"
    if _ON.search(bare):
        return "on"
    return None


def wants_flip(text: str) -> bool:
    """'toggle X', 'flip X': change it whatever it is now."""
    return bool(_FLIP.search(QUOTED.sub(" ", text)))


def _named_bases(text: str) -> str:
    return _BASE.sub(lambda m: f"base {_BASES[m.group(1).lower()]}", text)


def clause(text: str) -> Clause:
    text = text.strip()
    bare = _named_bases(QUOTED.sub(" ", text))
    m = _CUE.search(bare)
    while m and re.match(r"(?:and|or|&)\b", m.group(1), re.IGNORECASE):  # "Find and Replace" is a name
        m = _CUE.search(bare, m.start(1))
    value = _TAIL.sub("", m.group(1)).strip() if m else None
    if value:
        value = re.sub(r"^(?:the (?:word|text|phrase)|for)\s+", "", value, flags=re.IGNORECASE).strip() or None
    if value and _NO_VALUE.match(value):  # "open the find bar", "look for a word": no value given
        value = None
    said = [str((_ORDINALS if m.group(1) else _NUMBER_WORDS).index((m.group(1) or m.group(2)).lower()))
            for m in _PLACE_WORD.finditer(bare)]
    return Clause(text=text, polarity=polarity(text), quoted=quoted(text), numbers=NUMBER.findall(bare) + said,
                  unquoted=value)


def splits(request: str, most: int = 3, keep: tuple[str, ...] = ()) -> list[list[str]]:
    """Ways to read the request as several intents, each part a whole clause (a verb carried over from
    the first part when a later part has none: "turn on X and Y" -> "turn on Y"): first at strong breaks
    only ("show X, and then Y"), then at weak ones too where they join imperative clauses. Quoted text
    is never cut, nor a `keep` phrase (a control's own name with "and" in it: "Find and Replace")."""
    held: list[str] = []

    def hold(m: re.Match) -> str:
        held.append(m.group(0))
        return f"\0{len(held) - 1}\0"

    protected = _WORD_LIST.sub(hold, _EXAMPLES.sub(hold, _ASIDE.sub(hold, QUOTED.sub(hold, without_remarks(request)))))
    for phrase in sorted(keep, key=len, reverse=True):
        protected = re.sub(re.escape(phrase), hold, protected, flags=re.IGNORECASE)
    restore = re.compile(r"\0(\d+)\0")

    def unhold(text: str) -> str:  # held text may hold more (an example list, a quoted value)
        return restore.sub(lambda m: unhold(held[int(m.group(1))]), text)

    strong = _STRONG.split(protected)[::2]
    fine = [p for s in strong for p in _weak_parts(s)]
    readings = []
    for parts in (strong, fine):
        parts = [unhold(p).strip(" .") for p in parts]
        parts = [p for p in parts if _content(p)]  # not "please"
        if 2 <= len(parts) <= most and parts not in [r for r, _ in readings]:
            readings.append((parts, _carry_verb(parts)))
    return [out for _, out in readings]


def _content(part: str) -> str:
    return _FILLER_END.sub("", _FILLER.sub("", f"{part} ")).strip(" ,.!?")


def _weak_parts(text: str) -> list[str]:
    """`text` cut at its weak breaks where the piece after one is a clause of its own: it starts with a
    verb, or the text is an imperative list ("turn on X, Y and Z") and neither the piece nor the clause it
    follows is a subordinate clause ("... the strip that shows the line and column"), nor the piece a
    remark with its own subject ("..., I never use them")."""
    pieces = _WEAK.split(text)
    imperative = bool(_VERB.match(_content(pieces[0])))
    out = [pieces[0]]
    for sep, piece in zip(pieces[1::2], pieces[2::2]):
        bare = _content(piece)
        inside = _SUBORDINATE.search(_content(out[-1]), 1)  # "the strip that shows the line and column"
        if _points_back(bare) or _adjectives(out[-1], bare):  # "..., show me the tool for that": the same
            out[-1] += sep + piece                             # intent again; "a bigger, different font"
        elif _VERB.match(bare) or (imperative and bare and not inside and not _SUBORDINATE.match(bare)
                                 and not _SUBJECT.match(bare) and not _PREPOSITION.match(bare)):
            out.append(piece)
        else:
            out[-1] += sep + piece
    return out


def _adjectives(before: str, after: str) -> bool:
    """A comma between two adjectives of one noun ("choose a bigger, different typeface")."""
    last, first = re.findall(r"[A-Za-z'-]+", before)[-1:], re.findall(r"[A-Za-z'-]+", after)[:1]
    return bool(last and first) and wordnet.only_modifier(last[0]) and wordnet.only_modifier(first[0])


# Words that name no particular thing: a clause of only these and a back-reference ("show me the tool
# for that", "do it") asks again for what the clause before it named
_VAGUE = re.compile(r"\b(?:me|us|the|a|an|tool|tools|thing|things|feature|option|setting|function|one|way|place|"
                    r"button|for|to|do|does|with|please|that|those|these|them|it|this)\b", re.IGNORECASE)


def _points_back(piece: str) -> bool:
    rest = _VERB.sub("", piece.strip(), count=1)
    return bool(_BACK_REFERENCE.search(piece) or re.search(r"\bit\b", piece, re.IGNORECASE)) and \
        not _VAGUE.sub(" ", rest).strip(" ,.!?")


def _carry_verb(parts: list[str]) -> list[str]:
    """A part without a verb of its own takes the verb of the nearest part before it that has one; not a
    part with a subject of its own ("...; I want the window as small as possible")."""
    out, verb = [], None
    for p in parts:
        own = _VERB.match(_content(p))
        verb = own or verb
        mine = own or verb is None or _SUBJECT.match(p.strip()) or _WISH.match(p.strip())
        out.append(p if mine else f"{verb.group(1)} {p}")
    return out


def strip_verb(text: str) -> str:
    """The clause without its leading verb ("turn on the status bar" -> "the status bar")."""
    return _VERB.sub("", text.strip(), count=1).strip() or text


# How people wrap a request in politeness and wishes (general English, no app's words): it says nothing
# about which control is meant, and left in it pulls every request towards every other.
_FILLER = re.compile(r"^(?:(?:please|pls|kindly|ok|okay|hey|so|now|just|and)\s+|(?:could|can|would|will) you(?: please)?\s+|"
                     r"(?:can|could|may) i(?: get| have)?\s+|i(?:'d| would) like(?: to)?\s+|i (?:want|need|wish)(?: to)?\s+|"
                     r"i'?m trying to\s+|let me\s+|let's\s+|help me(?: to)?\s+|how (?:do|can) i\s+|"
                     r"is there a way to\s+|(?:give|get) me\s+)+", re.IGNORECASE)
_FILLER_END = re.compile(r"(?:\s*[,.]?\s*(?:please|for me|thanks|thank you|now|right now))+\s*[.!?]*$", re.IGNORECASE)


# An unquoted value announced as one ("look for the word invoice", "a file called notes"): the word after it
_NAMED_VALUE = re.compile(r"\b((?:look(?:ing)? for|search(?:ing)? for|find|locate|highlight|count|type|write|replace|"
                          r"swap|change)\s+(?:every |all |each )?(?:the|a|an) (?:word|phrase|term|string)|called|"
                          r"named|saying)\s+[\w'-]+", re.IGNORECASE)


# A wish with its own subject is the request ("I want to turn some things off"), not a remark about it
_WISH = re.compile(r"^(?:i|we)(?:'d| would)? (?:want|need(?! (?:it|this|that)\b)|like|wish|rather|prefer)\b|^i'd\b",
                   re.IGNORECASE)
# "..., I want the calculator as compact as it gets": a wish for a degree says why, not what
# or for a look ("..., I want a cleaner look", "I'd like a less cluttered window")
_DEGREE_WISH = re.compile(r"^(?:i|we)(?:'d| would)? (?:want|like|need|prefer)\b(?:.*\bas \w+ as (?:possible|it gets|it can "
                          r"(?:be|get)|can be|i can get it)\b| (?:to have )?(?:a |an |it |things |the window |the screen )?(?:"
                          r"\w+er|(?:more|less) \w+|simple|clean|tidy|minimal)(?: and \w+)? ?(?:look(?:ing)?|feel|appearance|view|"
                          r"window|screen|layout|interface|ui|workspace)?\s*[.!]?$)", re.IGNORECASE)
_BACK_REFERENCE = re.compile(r"\b(?:that|those|these|them|they)\b", re.IGNORECASE)  # "take that group off"
# A sentence that only describes the wanted result ("hide the menus. Just the keypad, nothing else")
_ONLY = re.compile(r"^(?:just|only|nothing but)\b", re.IGNORECASE)
_REMARK_BREAK = re.compile(r"(?<=[.?!;])\s+|\s+[-–—]\s+|,\s+(?=" + _SUBJECT.pattern[1:] + r")", re.IGNORECASE)


def without_remarks(text: str) -> str:
    """The request less its remarks: a sentence, or a piece after a comma, that starts with its own subject
    and is no wish ("which release is this? I need it for a bug report", "hide the clear keys, I keep
    hitting them"), or after the first piece wishes only for a degree ("..., I want it as compact as it
    gets"): it says why, not what. A request that is all remarks, or that points back into a remark
    ("I never use the clear keys. Take that group off"), is kept whole."""
    pieces = _REMARK_BREAK.split(text.strip())
    kept = [p for p in pieces if not (_SUBJECT.match(p.strip()) and not _WISH.match(p.strip()))
            and not (p is not pieces[0] and (_ONLY.match(p.strip()) or _DEGREE_WISH.match(p.strip())))]
    commands = [p for p in kept if _VERB.match(_content(p))]
    # beside a command, a question only sets the scene; not beside one that says nothing of its own
    # ("what version of Mousepad is this? Show me.")
    if commands and all(_VAGUE.sub(" ", _VERB.sub("", _content(c), count=1)).strip(" ,.!?") for c in commands):
        kept = [p for p in kept if p in commands or not p.rstrip().endswith("?")]
    if not kept or len(kept) == len(pieces) or any(_BACK_REFERENCE.search(p) for p in kept):
        return text  # all remarks, none, or the request points back into one ("take that group off")
    return " ".join(kept)


# "..., not another tab", "(no replacing, just looking)", "degrees instead of radians": what the request
# does not want, set against what it does; a "no X" that is the request itself ("a minimal look: no
# menus") is not after a comma
_CONTRAST = re.compile(r"(?:,|\()\s*(?:but\s+)?(?:not|no)\b[^,;.!?)]*\)?|\b(?:instead of|rather than)\b[^,;.!?)]*",
                       re.IGNORECASE)


def without_contrast(text: str) -> str:
    """The request less what it sets aside ("open a separate window, not another tab" -> "open a
    separate window"), unless nothing else is left."""
    return _CONTRAST.sub(" ", text).strip() or text


def purpose(text: str) -> tuple[str, str]:
    """The request and the reason it gives, apart ("put a password on this file", "so nobody else can
    open it"); the reason is '' when there is none, or nothing with content comes before it."""
    m = _PURPOSE.search(text)
    if not m or not _content(text[:m.start()]):
        return text, ""
    return text[:m.start()].rstrip(" ,"), text[m.start():]


_BOTH = re.compile(r"\bboth\b", re.IGNORECASE)  # "show me both X and Y": says nothing of either
# What a command acts on, named by the state it is in ("make the selected text all caps", "sort what I've
# highlighted"): the operand, not a control; left in, "selected text" names a "Select Text" check box
_OPERAND = re.compile(r"\b(?:(?:the|my|this|that|these|those)\s+(?:currently\s+)?(?:s(?:e)?l(?:e)?cted|highlighted|marked)"
                      r"(?:\s+(?:text|words?|lines?|part|bit|section|passage|block|region|stuff))?|(?:the|my|this|"
                      r"that)\s+(?:current\s+)?selection|what(?:ever)?\s+(?:i|i've|i\s+have)\s+(?:just\s+)?"
                      r"(?:selected|highlighted|marked)|(?:everything|anything|all(?:\s+of)?(?:\s+the\s+\w+)?|the\s+"
                      r"(?:text|words?|lines?|part|bit|stuff))\s+(?:that\s+)?(?:i|i've|i\s+have)\s+(?:just\s+|already\s+)?"
                      r"(?:selected|highlighted|marked|typed|written)(?:\s+here)?)\b", re.IGNORECASE)


def _operand(m: re.Match) -> str:
    """"the selected text" -> "it"; "the lines I've highlighted" -> "the lines": lines and words are what
    commands are named for (Sort Lines, Duplicate Line), text and a selection are not."""
    noun = re.search(r"\b(lines?|words?)\b", m.group(), re.IGNORECASE)
    return f" the {noun.group(1).lower()} " if noun else " it "


def retrieval_text(c: Clause, app: str = "", names: frozenset[str] = frozenset()) -> str:
    """The clause as the retriever should see it: remarks, quoted values, numbers, a value announced as
    one ("the word invoice"), what a command acts on ("the selected text": it), politeness, "both" and the
    app's own name taken out ("could you open mousepad's settings please" -> "open settings"), and what it
    sets aside ("..., not another tab"). A number in
    `names` is a control's whole name (a keypad's "7", a radio item "4"): it stays ("press 7"), and so
    does such a number said as a word ("a nine" -> "a 9"); a number base says its name ("base 16" -> "base
    hexadecimal")."""
    text = _named_bases(_OPERAND.sub(_operand, QUOTED.sub(" ", without_contrast(without_remarks(c.text)))))
    text = NUMBER.sub(lambda m: m.group() if m.group() in names else " ", text)
    text = _DIGIT_WORD.sub(lambda m: d if (d := _DIGIT_WORDS[m.group().lower()]) in names else m.group(), text)
    text = _NAMED_VALUE.sub(r"\1", text)
    text = _FILLER_END.sub("", _FILLER.sub("", _BOTH.sub(" ", text).strip()))
    return " ".join(app_as_word(text, app).split()) or c.text


def bind_values(skill: Any, c: Clause) -> dict[str, Any]:
    """Arguments for `skill`'s parameters from the clause; ValueError names a missing one and the fix."""
    args: dict[str, Any] = {}
    strings = list(c.quoted) or ([c.unquoted] if c.unquoted else [])
    numbers = list(c.numbers)
    for p in skill.parameters:
        m = re.search(rf'\b{re.escape(p.name)}\s*[=:]\s*(?:"([^"]*)"|\'([^\']*)\'|(\S+))', c.text)
        if m:
            args[p.name] = next(g for g in m.groups() if g is not None)
        elif p.type in ("int", "float") and numbers:
            args[p.name] = numbers.pop(0)
        elif p.type == "str" and strings:
            args[p.name] = strings.pop(0)
        elif p.type == "str" and numbers:
            args[p.name] = numbers.pop(0)
        elif p.default is not None:
            args[p.name] = p.default
        else:
            raise ValueError(f"skill {skill.name!r} needs a value for {p.name!r} ({p.description or p.type}) "
                             f"that the request does not give; say it, e.g. {p.name}=\"...\" or in quotes")
    casts = {"int": int, "float": float, "bool": lambda v: str(v).lower() in ("1", "true", "yes", "on")}
    for p in skill.parameters:
        if p.type in casts and isinstance(args[p.name], str):
            try:
                args[p.name] = casts[p.type](args[p.name])
            except ValueError:
                raise ValueError(f"skill {skill.name!r}: {p.name}={args[p.name]!r} is not a {p.type}") from None
    return args


def with_polarity(skill: Any, on: bool) -> Any:
    """A copy of a toggle skill that leaves the control alone when it is already on (off), closes
    what it opened in that case, and whose postcondition is the control's state, looked at by
    reopening the menu that holds it. Non-toggles come back unchanged."""
    sig = toggle_target(skill)
    if sig is None:
        return skill
    last = skill.steps[-1]
    name = label_of(str((last.action.get("target") or {}).get("text") or skill.name.split("›")[-1]))
    role = str((last.action.get("target") or {}).get("role") or skill.extra.get("role", ""))
    state = "pressed" if "toggle button" in role else "checked"
    opened = _menus_opened([s.action for s in skill.steps[:-1] if s.action.get("kind") == "click"], sig)
    pixels = any(e.pixels for e in skill.postcondition.effects if e.kind == "state" and e.signature == sig)
    want = Effect(kind="state", signature=sig, role=role, name=name, state=state, after=on, pixels=pixels)
    steps = [s.model_copy() for s in skill.steps[:-1]]
    if last.action.get("target"):  # hover first: the runner waits for the control to show before the state is read
        steps.append(last.model_copy(update={"action": {"kind": "move", "target": last.action["target"]}}))
    steps.append(last.model_copy(update={"unless": want}))
    in_menu = "menu" in role.lower()  # a check menu item: hidden again once its menu closes
    if in_menu:  # the click was skipped: the menus it took to get there are still open
        gone = Effect(kind="disappeared", signature=sig, role=role, name=name)
        steps += [last.model_copy(update={"action": {"kind": "key", "key": "esc"}, "unless": gone, "skill": None})
                  for _ in opened]
    reveal = opened if in_menu else []
    effects = [want.model_copy(update={"reveal": reveal})]
    hides_itself = [e for e in skill.postcondition.effects if e.kind == "disappeared" and not e.inherited
                    and sig.startswith(e.signature + "/")]
    if not on and hides_itself:  # "Show menu bar" off hides the menu that holds it: nothing is left to
        effects = hides_itself   # reopen, and what it hid going away is the state (as explored)
    post = skill.postcondition.model_copy(update={"present": [], "absent": [], "state_key": None, "effects": effects})
    return skill.model_copy(update={"steps": steps, "postcondition": post})


def _menus_opened(clicks: list[dict[str, Any]], target: str) -> list[dict[str, Any]]:
    """The clicks that open the menus holding the control: going back from it, each an ancestor of the
    one after it ("View › Scientific Mode › Calculator › Number bases › Hexadecimal" is revealed by
    Calculator and Number bases; clicking Scientific Mode again to look would switch modes, and costs the
    run's steps). A click without a signature (no tree) is kept: nothing says it is not on the way."""
    out: list[dict[str, Any]] = []
    for a in reversed(clicks):
        sig = str((a.get("target") or {}).get("signature") or "")
        if sig and not target.startswith(sig + "/"):
            break
        out.append(a)
        target = sig or target
    return out[::-1]


def is_toggle(skill: Any) -> bool:
    return kind_of(skill) == "toggle"
