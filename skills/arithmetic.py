"""A calculation asked for in words, as the keys a calculator's keypad needs, and its result.

"how much is 17 multiplied by 23" -> keys 1 7 times 2 3 equals, result 391; "what's the square root of
1369" -> 1 3 6 9 sqrt, result 37; "take 58 and flip its sign" -> 5 8 negate, result -58. Steps chain
with "then" ("the square root of 144, then flip its sign" -> 1 4 4 sqrt negate), numbers may be words
("forty-two", "three hundred and five"), and everyday idioms name operations ("3.2 lots of 5", "91 split
seven ways", "double 17"). A request is a calculation only when everything in it besides the numbers and
the operations is filler ("what's", "for me", "please"): "multiply two 3x3 matrices" is not one. Keys are
abstract names (digits, ".", "plus", "sqrt", ...); `KEY_LABELS` lists the labels calculators give them.
The result is computed here from the parsed numbers, never by evaluating the request's text.

A calculation may start from the number the calculator already shows: "make that number negative",
"the square root of what's on the display" (keys: the operation alone; the result is computed when the
display has been read, `Calculation.on`), or "6 factorial, the 6 is already on the display" (its digits
are not typed again).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from skills.intent import without_remarks

_NUM = r"(-?\d+(?:\.\d+)?)"
_OF = r"\s*(?:of\s+)?\(?\s*"
_UNIT = r"(?:\s*(?:degrees?|deg|°|radians?|rad)\b)?"
_SIGN = r"(?:flip|change|switch|invert|reverse|toggle)\s+(?:its|the)\s+sign"
_SPLIT = r"(?:split|share|shared|divided|divide|cut|broken|break)\s+(?:up\s+)?(?:evenly\s+|equally\s+)?"
_INTO = r"(?:(?:in)?to\s+|among(?:st)?\s+|between\s+|by\s+|in\s+)?"
_SHARES = r"(?:\s+(?:ways|parts|pieces|portions|shares|groups|people|persons))?"

# The labels calculators give each key (lower case); digits and "." are their own labels
KEY_LABELS: dict[str, tuple[str, ...]] = {
    "plus": ("+",), "minus": ("-", "−", "–"), "times": ("*", "×", "x"), "divide": ("/", "÷", ":"),
    "equals": ("=", "enter"), "sqrt": ("sqrt", "√", "√x", "√ x", "sqr"), "square": ("x^2", "x²", "x2", "sq"),
    "cube": ("x^3", "x³"), "negate": ("+/-", "±", "+/−", "−/+", "-/+", "neg", "chs"),
    "reciprocal": ("1/x", "x^-1", "x⁻¹"), "power": ("x^y", "xʸ", "^", "y^x", "pow", "x**y"),
    "factorial": ("n!", "x!", "!"), "sin": ("sin",), "cos": ("cos",), "tan": ("tan",), "ln": ("ln",),
    "log": ("log", "log10"),
}

# (pattern, operation, swap the operands); the numbers are the pattern's groups in reading order
_BINARY: list[tuple[str, str, bool]] = [
    (rf"{_NUM}\s*(?:\+|plus|added\s+to|increased\s+by|more\s+than)\s*{_NUM}", "plus", False),
    (rf"add\s+{_NUM}\s+(?:and|to|plus)\s+{_NUM}", "plus", False),
    (rf"(?:the\s+)?(?:sum|total)\s+of\s+{_NUM}\s+and\s+{_NUM}", "plus", False),
    (rf"{_NUM}\s+(?:less|fewer)\s+than\s+{_NUM}", "minus", True),
    (rf"{_NUM}\s*(?:-|−|–|minus|less|take\s+away|decreased\s+by|reduced\s+by)\s*{_NUM}", "minus", False),
    (rf"(?:subtract|take(?:\s+away)?|deduct)\s+{_NUM}\s+(?:away\s+)?(?:from|off(?:\s+of)?)\s+{_NUM}", "minus", True),
    (rf"(?:the\s+)?difference\s+(?:between|of)\s+{_NUM}\s+and\s+{_NUM}", "minus", False),
    (rf"{_NUM}\s*(?:\*|×|x|times|multiplied\s+(?:by|with)|(?:lots|groups|sets|batches)\s+of)\s*{_NUM}", "times",
     False),
    (rf"multiply\s+{_NUM}\s+(?:by|and|times|with)\s+{_NUM}", "times", False),
    (rf"(?:the\s+)?product\s+of\s+{_NUM}\s+and\s+{_NUM}", "times", False),
    (rf"{_NUM}\s*(?:/|÷|divided\s+by|over)\s*{_NUM}", "divide", False),
    (rf"divide\s+{_NUM}\s+by\s+{_NUM}", "divide", False),
    (rf"{_NUM}\s+(?:gets\s+|is\s+)?{_SPLIT}{_INTO}{_NUM}{_SHARES}", "divide", False),
    (rf"{_SPLIT}{_NUM}\s+{_INTO}{_NUM}{_SHARES}", "divide", False),
    (rf"how\s+many\s+times\s+(?:does\s+|do\s+|will\s+)?{_NUM}\s+go(?:es)?\s+into\s+{_NUM}", "divide", True),
    (rf"{_NUM}\s*(?:\^|\*\*|to\s+the\s+power\s+of|to\s+the|raised\s+to(?:\s+the\s+power\s+of)?)\s*{_NUM}"
     r"(?:st|nd|rd|th)?(?:\s+power)?", "power", False),
]
# the same operations with one operand fixed by the word ("double 17" is 17 times 2)
_SCALE: list[tuple[str, str, str]] = [
    (rf"(?:double|twice)\s+{_NUM}|{_NUM}\s+doubled", "times", "2"),
    (rf"(?:triple|treble)\s+{_NUM}|{_NUM}\s+tripled", "times", "3"),
    (rf"(?:half\s+of|halve)\s+{_NUM}|{_NUM}\s+halved", "divide", "2"),
]
_UNARY: list[tuple[str, str]] = [
    (rf"(?:the\s+)?square\s+root{_OF}{_NUM}\)?|(?:sqrt|√){_OF}{_NUM}\)?|{_NUM}'?s\s+square\s+root", "sqrt"),
    (rf"{_NUM}\s+squared|(?:the\s+)?square\s+of\s+{_NUM}|square\s+{_NUM}", "square"),
    (rf"{_NUM}\s+cubed|(?:the\s+)?cube\s+of\s+{_NUM}", "cube"),
    (rf"(?:negate|the\s+negative\s+of|{_SIGN}\s+(?:of|on))\s+{_NUM}|{_NUM},?\s+(?:and\s+)?(?:then\s+)?{_SIGN}|"
     rf"(?:make|turn|change|convert|switch)\s+{_NUM}\s+(?:(?:in)?to\s+)?(?:a\s+)?negative(?:\s+number)?", "negate"),
    (rf"(?:the\s+)?(?:reciprocal|multiplicative\s+inverse){_OF}{_NUM}\)?", "reciprocal"),
    (rf"{_NUM}\s*(?:!|factorial)|(?:the\s+)?factorial\s+of\s+{_NUM}", "factorial"),
    (rf"(?:the\s+)?(?:natural\s+log(?:arithm)?|ln){_OF}{_NUM}\)?", "ln"),
    (rf"(?:the\s+)?(?:common\s+)?(?:log(?:arithm)?(?:\s+base\s+10)?|log10){_OF}{_NUM}\)?", "log"),
    (rf"(?:the\s+)?(?:sine|sin){_OF}{_NUM}\)?{_UNIT}", "sin"),
    (rf"(?:the\s+)?(?:cosine|cos){_OF}{_NUM}\)?{_UNIT}", "cos"),
    (rf"(?:the\s+)?(?:tangent|tan){_OF}{_NUM}\)?{_UNIT}", "tan"),
]
# What may surround a calculation in a request and say nothing more
_FILLER = set("""what whats is how much many the of calculate compute work working out figure evaluate tell me give
please can could would will you for i id need want wanna to know get result answer find do solve equal equals
come comes in a an this that calculator it its be are we us here there up with using use on screen show display
gives number value so make take let lets see like quick quickly just now thanks thank hey ok okay then and
again real check enter type punch key press hit input put into negative positive sign got have does did
mentally fast each share after if""".split())
_UNITS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                     "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)}
_SMALL = rf"(?:(?:{'|'.join(_TENS)})(?:[\s-]+(?:{'|'.join(list(_UNITS)[1:10])}))?|{'|'.join(_UNITS)})"
_WORD_NUM = re.compile(rf"\b(?:{_SMALL}(?:\s+(?:hundred|thousand)(?:\s+and)?(?:\s+{_SMALL})?)*)\b", re.IGNORECASE)
# "then ..." refers back to the result so far
_THEN = re.compile(r"\s*(?:,|;|\.)?\s*(?:and\s+)?then\s+|\s*[,;.]\s*(?:and\s+)?after\s+that\s+", re.IGNORECASE)
_BACK = re.compile(r"\b(?:it|that|this|the\s+(?:result|answer|total|number))\b")
_LEFT_OUT = re.compile(r"^(?:add|plus|subtract|minus|take\s+away|multiply(?:\s+(?:it\s+)?by)?|times|divide(?:\s+"
                       r"(?:it\s+)?by)?|(?:multiplied|divided)\s+by|raise(?:\s+it)?\s+to(?:\s+the\s+power\s+of)?)\b")
@dataclass(frozen=True)
class Calculation:
    """The keys to press in order, which of them only enter the numbers (digits, the point, the sign of a
    negative number) rather than operate on them, and the number the display must show at the end."""

    keys: tuple[str, ...]
    entries: tuple[bool, ...]
    result: float
    text: str
    other_unit: float | None = None  # an angle's function in radians, when the request did not say degrees
    from_display: str = ""  # starts from the number shown: the request with SHOWN for it (result NaN until `on`)

    def on(self, shown: float) -> Calculation | None:
        """This calculation from a display showing `shown`: its result known (None when there is none,
        e.g. the square root of a negative number)."""
        if not self.from_display:
            return self
        done = _parse(self.from_display.replace(SHOWN, format_number(shown)))
        return None if done is None else replace(self, result=done.result, other_unit=done.other_unit,
                                                 text=done.text, from_display="")

    def describe(self) -> str:
        return self.text if self.from_display else f"{self.text} = {format_number(self.result)}"


def format_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.10g}"


def _digits(n: str) -> list[tuple[str, bool]]:
    """Keys that enter `n`: its digits and point, then the sign key for a negative number."""
    return [(k, True) for k in [*n.lstrip("-"), *(["negate"] if n.startswith("-") else [])]]


def _calc(keys: list[tuple[str, bool]], result: float, text: str) -> Calculation:
    return Calculation(tuple(k for k, _ in keys), tuple(e for _, e in keys), result, text)


def _value(op: str, a: float, b: float | None = None, radians: bool = False) -> float | None:
    try:
        if op in ("sin", "cos", "tan"):  # an angle in degrees unless the request says radians
            return round(getattr(math, op)(a if radians else math.radians(a)), 12)
        return {"plus": lambda: a + b, "minus": lambda: a - b, "times": lambda: a * b,
                "divide": lambda: a / b, "power": lambda: a ** b, "sqrt": lambda: math.sqrt(a),
                "square": lambda: a * a, "cube": lambda: a ** 3, "negate": lambda: -a,
                "reciprocal": lambda: 1 / a, "factorial": lambda: float(math.factorial(int(a))),
                "ln": lambda: math.log(a), "log": lambda: math.log10(a)}[op]()
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        return None


def _only_filler(text: str) -> bool:
    return all(w in _FILLER for w in re.findall(r"[a-z]+", re.sub(r"['’]", "", text.lower())))


def _number_words(m: re.Match) -> str:
    """"forty-two" -> "42", "three hundred and five" -> "305"."""
    total = current = 0
    for w in re.findall(r"[a-z]+", m.group().lower()):
        if w in _UNITS or w in _TENS:
            current += _UNITS.get(w, 0) + _TENS.get(w, 0)
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w == "thousand":
            total, current = total + max(current, 1) * 1000, 0
    return str(total + current)


def _operation(text: str) -> tuple[str, list[str]] | None:
    """The one operation `text` asks for and its operands in the order the keys enter them, when all else
    in it is filler."""
    for pattern, op, swap in _BINARY:
        m = re.search(pattern, text)
        if m and _only_filler(text[:m.start()] + " " + text[m.end():]):
            return op, [m.group(2), m.group(1)] if swap else [m.group(1), m.group(2)]
    for pattern, op, n in _SCALE:
        m = re.search(pattern, text)
        if m and _only_filler(text[:m.start()] + " " + text[m.end():]):
            return op, [next(g for g in m.groups() if g is not None), n]
    for pattern, op in _UNARY:
        m = re.search(pattern, text)
        if m and _only_filler(text[:m.start()] + " " + text[m.end():]):
            return op + (" rad" if "rad" in m.group() else ""), [next(g for g in m.groups() if g is not None)]
    return None


_SO_FAR = "987654321.25"  # stands for the result so far in a step after "then"


def _then_step(text: str) -> tuple[str, list[str]] | None:
    """A step after "then", on the result so far: its operation and the operand it adds (none for a
    function of the result: "then flip its sign", "then take the square root", "then add 5")."""
    text = text.strip(" .?!")
    said = _BACK.sub(_SO_FAR, text)
    left_out = _LEFT_OUT.match(text)
    tries = [said, f"{_SO_FAR} {text}", f"{text} of {_SO_FAR}"]
    if left_out:  # "add 5", "divide by 4": the result so far is the operand left out
        verb = left_out.group().split()[0]
        rest = text[left_out.end():]
        tries.insert(0, {"add": f"add {rest} to {_SO_FAR}", "plus": f"{_SO_FAR} plus {rest}",
                         "subtract": f"subtract {rest} from {_SO_FAR}", "minus": f"{_SO_FAR} minus {rest}",
                         "take": f"{_SO_FAR} take away {rest}", "raise": f"{_SO_FAR} to the power of {rest}",
                         "multiplied": f"{_SO_FAR} times {rest}", "divided": f"{_SO_FAR} divided by {rest}",
                         }.get(verb, f"{_SO_FAR} {'times' if verb in ('multiply', 'times') else 'divided by'} {rest}"))
    for t in tries:
        found = _operation(t)
        if found is None or _SO_FAR not in found[1]:
            continue
        op, args = found
        if args[0] == _SO_FAR and _SO_FAR not in args[1:]:
            return op, args[1:]
        if op in ("plus", "times") and args[1] == _SO_FAR:  # "add 5 to it" enters 5 after the result
            return op, args[:1]
    return None


def _apply(op: str, args: list[str], keys: list[tuple[str, bool]], result: float | None,
           text: str) -> tuple[list[tuple[str, bool]], float | None, str]:
    """The keys, result and description after one more operation (`result` None: the first one)."""
    name, rad = op.removesuffix(" rad"), op.endswith(" rad")
    a = result if result is not None else float(args[0])
    entered = [] if result is not None else _digits(args[0])
    rest = args[1:] if result is None else args
    if rest:  # a binary operation: the second number, then equals
        value = _value(name, a, float(rest[0]))
        keys = [*keys, *entered, (name, False), *_digits(rest[0]), ("equals", False)]
        said = f"{args[0]} {name} {rest[0]}" if result is None else f"({text}) {name} {rest[0]}"
    else:
        value = _value(name, a, radians=rad)
        keys = [*keys, *entered, (name, False)]
        unit = (" radians" if rad else " degrees") if name in ("sin", "cos", "tan") else ""
        said = f"{name} {args[0]}{unit}" if result is None else f"{name} ({text})"
    return keys, value, said


SHOWN = "424242.4242"  # stands for the number on the display in a request that names it, not its digits
# "the number on the display", "what's shown", "that number": the display's number as an operand
_DISPLAYED = re.compile(
    r"\b(?:the|that|this)\s+(?:current\s+|displayed\s+)?(?:number|value|figure|amount|result)(?:\s+(?:that'?s|that\s+is|"
    r"which\s+is|currently|now))?(?:\s+(?:shown|showing|displayed))?(?:\s+(?:on|in)\s+(?:the\s+)?(?:display|screen))?"
    r"|\bwhat(?:'s|\s+is)\s+(?:currently\s+|now\s+)?(?:(?:on|in)\s+(?:the\s+)?(?:display|screen)|shown|showing|displayed)"
    r"(?:\s+(?:on|in)\s+(?:the\s+)?(?:display|screen))?|\bthe\s+display\b(?!\s+(?:shows|reads))")
# "the 6 is already on the display", "I've already typed in 6": that number is entered
_ALREADY = re.compile(rf"(?:^|[.;,!?]\s*|\band\s+)(?:the\s+)?(?:number\s+)?{_NUM}\s+(?:is|'s)\s+(?:already\s+)?(?:"
                      r"(?:on|in)\s+(?:the\s+)?(?:display|screen)|(?:typed|entered|punched)(?:\s+in)?|showing|shown|displayed)"
                      r"(?:\s+(?:on|in)\s+(?:the\s+)?(?:display|screen))?\s*[.!]?|(?:^|[.;,!?]\s*)i(?:'ve|\s+have)\s+"
                      rf"already\s+(?:typed|entered|put|punched)(?:\s+in)?\s+{_NUM}(?:\s+(?:in|on\s+the\s+display))?\s*[.!]?")
_COMMUTED = re.compile(rf"\b(add|multiply)\s+{_NUM}\s+(?:to|by|with)\s+{re.escape(SHOWN)}")  # "add 5 to the display"


def calculation(request: str) -> Calculation | None:
    """The calculation the request asks for, or None when it asks for something else too (or nothing)."""
    said = _normal(request)
    shown = _ALREADY.search(said)
    if shown is not None:  # "6 factorial. the 6 is already on the display": 6 is entered; its keys are not
        number = next(g for g in shown.groups() if g is not None)
        calc = _parse(_it_is(_normal(f"{said[:shown.start()]} {said[shown.end():]}", remarks=True), number))
        return _entered(calc, number) if calc is not None else None
    text = _normal(request, remarks=True)
    found = _parse(text)
    if found is not None or not _DISPLAYED.search(text):
        return found
    said = _COMMUTED.sub(lambda m: f"{SHOWN} {'plus' if m.group(1) == 'add' else 'times'} {m.group(2)}",
                         _DISPLAYED.sub(SHOWN, text, count=1))
    calc = _parse(said)
    calc = _entered(calc, SHOWN) if calc is not None else None
    # its result is unknown until the display is read (Calculation.on): NaN, which no display shows
    return None if calc is None else replace(calc, from_display=said, result=math.nan, other_unit=None,
                                             text=calc.text.replace(SHOWN, "the number shown"))


def _normal(request: str, remarks: bool = False) -> str:
    """Lower case, number words as digits ("forty-two" -> 42, "1,369" -> 1369), remarks out if asked."""
    text = _WORD_NUM.sub(_number_words, (without_remarks(request) if remarks else request).lower().replace(",", " , "))
    return re.sub(r"(?<=\d) , (?=\d{3}\b)", "", text)


def _it_is(text: str, number: str) -> str:
    """"take its square root", the number being on the display already: "take 144's square root"."""
    return re.sub(r"\b(?:it|that|this)\b", number, re.sub(r"\bits\b", f"{number}'s", text))


def _entered(calc: Calculation, number: str) -> Calculation | None:
    """`calc` without typing its first number, which is on the display already (None when the
    calculation does not start with it)."""
    typed = [k for k, _ in _digits(number)]
    if list(calc.keys[:len(typed)]) != typed:
        return None
    return replace(calc, keys=calc.keys[len(typed):], entries=calc.entries[len(typed):])


def _parse(text: str) -> Calculation | None:
    """calculation() of a request already lower-cased, its number words as digits."""
    first, *later = _THEN.split(text)
    later = [p for p in later if p.strip(" .?!")]  # "what is 2 plus 3 then?": nothing follows
    found = _operation(first)
    if found is None and later and (only := re.fullmatch(rf"[^\d]*?{_NUM}[^\d]*", first)) and _only_filler(
            first.replace(only.group(1), " ")):
        found = ("", [only.group(1)])  # "take 58, then flip its sign": the first step only enters 58
    if found is None:
        return None
    op, args = found
    if op:
        keys, result, said = _apply(op, args, [], None, "")
    else:
        keys, result, said = _digits(args[0]), float(args[0]), args[0]
    for piece in later:
        step = _then_step(piece)
        if step is None or result is None:
            return None
        keys, result, said = _apply(step[0], step[1], keys, result, said)
    if result is None or math.isnan(result) or math.isinf(result) or (op == "factorial" and "." in args[0]):
        return None
    other = None
    if not later and op.removesuffix(" rad") in ("sin", "cos", "tan") and not op.endswith(" rad"):
        other = _value(op, float(args[0]), radians=True)  # an angle's function: degrees unless it said radians
    return replace(_calc(keys, result, said), other_unit=other)
