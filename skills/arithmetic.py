"""A calculation asked for in words, as the keys a calculator's keypad needs, and its result.

"how much is 17 multiplied by 23" -> keys 1 7 times 2 3 equals, result 391; "what's the square root of
1369" -> 1 3 6 9 sqrt, result 37; "take 58 and flip its sign" -> 5 8 negate, result -58. A request is a
calculation only when everything in it besides the numbers and the operation is filler ("what's",
"for me", "please"): "multiply two 3x3 matrices" is not one. Keys are abstract names (digits, ".",
"plus", "sqrt", ...); `KEY_LABELS` lists the labels calculators give them. The result is computed here
from the parsed numbers, never by evaluating the request's text.
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
    (rf"{_NUM}\s*(?:\+|plus|added\s+to)\s*{_NUM}", "plus", False),
    (rf"add\s+{_NUM}\s+(?:and|to|plus)\s+{_NUM}", "plus", False),
    (rf"(?:the\s+)?(?:sum|total)\s+of\s+{_NUM}\s+and\s+{_NUM}", "plus", False),
    (rf"{_NUM}\s*(?:-|−|–|minus|less)\s*{_NUM}", "minus", False),
    (rf"(?:subtract|take(?:\s+away)?|deduct)\s+{_NUM}\s+(?:away\s+)?(?:from|off(?:\s+of)?)\s+{_NUM}", "minus", True),
    (rf"(?:the\s+)?difference\s+(?:between|of)\s+{_NUM}\s+and\s+{_NUM}", "minus", False),
    (rf"{_NUM}\s*(?:\*|×|x|times|multiplied\s+by)\s*{_NUM}", "times", False),
    (rf"multiply\s+{_NUM}\s+(?:by|and|times|with)\s+{_NUM}", "times", False),
    (rf"(?:the\s+)?product\s+of\s+{_NUM}\s+and\s+{_NUM}", "times", False),
    (rf"{_NUM}\s*(?:/|÷|divided\s+by|over)\s*{_NUM}", "divide", False),
    (rf"divide\s+{_NUM}\s+by\s+{_NUM}", "divide", False),
    (rf"{_NUM}\s*(?:\^|\*\*|to\s+the\s+power\s+of|to\s+the|raised\s+to(?:\s+the\s+power\s+of)?)\s*{_NUM}"
     r"(?:st|nd|rd|th)?(?:\s+power)?", "power", False),
]
_UNARY: list[tuple[str, str]] = [
    (rf"(?:the\s+)?square\s+root{_OF}{_NUM}\)?|(?:sqrt|√){_OF}{_NUM}\)?|{_NUM}'?s\s+square\s+root", "sqrt"),
    (rf"{_NUM}\s+squared|(?:the\s+)?square\s+of\s+{_NUM}|square\s+{_NUM}", "square"),
    (rf"{_NUM}\s+cubed|(?:the\s+)?cube\s+of\s+{_NUM}", "cube"),
    (rf"(?:negate|the\s+negative\s+of|{_SIGN}\s+(?:of|on))\s+{_NUM}|make\s+{_NUM}\s+negative|"
     rf"{_NUM},?\s+(?:and\s+)?(?:then\s+)?{_SIGN}", "negate"),
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
mentally fast""".split())
_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                     "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}
_WORD_NUM = re.compile(rf"\b({'|'.join(_WORDS)})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Calculation:
    """The keys to press in order, which of them only enter the numbers (digits, the point, the sign of a
    negative number) rather than operate on them, and the number the display must show at the end."""

    keys: tuple[str, ...]
    entries: tuple[bool, ...]
    result: float
    text: str
    other_unit: float | None = None  # an angle's function in radians, when the request did not say degrees


    def describe(self) -> str:
        return f"{self.text} = {format_number(self.result)}"


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


def calculation(request: str) -> Calculation | None:
    """The calculation the request asks for, or None when it asks for something else too (or nothing)."""
    text = _WORD_NUM.sub(lambda m: str(_WORDS[m.group().lower()]), without_remarks(request).lower().replace(",", " , "))
    text = re.sub(r"(?<=\d) , (?=\d{3}\b)", "", text)  # 1,369 is one number
    for pattern, op, swap in _BINARY:
        m = re.search(pattern, text)
        if m and _only_filler(text[:m.start()] + " " + text[m.end():]):
            a, b = (m.group(2), m.group(1)) if swap else (m.group(1), m.group(2))
            result = _value(op, float(a), float(b))
            if result is None or math.isnan(result) or math.isinf(result):
                return None
            return _calc([*_digits(a), (op, False), *_digits(b), ("equals", False)], result, f"{a} {op} {b}")
    for pattern, op in _UNARY:
        m = re.search(pattern, text)
        if m and _only_filler(text[:m.start()] + " " + text[m.end():]):
            a = next(g for g in m.groups() if g is not None)
            rad = "rad" in m.group()
            result = _value(op, float(a), radians=rad)
            if result is None or math.isnan(result) or math.isinf(result) or (op == "factorial" and "." in a):
                return None
            other = _value(op, float(a), radians=True) if op in ("sin", "cos", "tan") and not rad else None
            unit = " radians" if rad else " degrees" if other is not None else ""
            return replace(_calc([*_digits(a), (op, False)], result, f"{op} {a}{unit}"), other_unit=other)
    return None
