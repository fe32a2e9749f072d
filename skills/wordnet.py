"""Synonyms from WordNet 3.0 (Princeton), read from the files of Debian's `wordnet-base` package.

Two words are synonyms when one of the most common senses of each is the same synset ("typeface" and
"font", "choose" and "select"): a request worded the way people talk then names a control whose label
uses the other word. Only the first `SENSES` senses of a word count (WordNet orders senses by how often
they were seen), so rare readings ("file" as a rank of soldiers) do not join unrelated words.

The index files are read once, on first use (~0.3 s); a missing package leaves every word only its own
synonym, and `available()` says so (`apt-get install wordnet-base`, or `make setup`).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

ROOT = Path(os.environ.get("CUA_WORDNET", "/usr/share/wordnet"))
POS = ("noun", "verb", "adj", "adv")
SENSES = 2
# WordNet's detachment rules (morphy): how an inflected form's base form is found
_SUFFIXES = {
    "noun": (("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
             ("ies", "y"), ("s", "")),
    "verb": (("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""),
             ("s", "")),
    "adj": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "adv": (),
}
_lock = threading.Lock()
_index: dict[str, tuple[dict[str, tuple[str, ...]], dict[str, str]]] | None = None


def available() -> bool:
    return all((ROOT / f"index.{p}").exists() for p in POS)


def _load() -> dict[str, tuple[dict[str, tuple[str, ...]], dict[str, str]]]:
    """Per part of speech: lemma -> its synset offsets (most common sense first), and the irregular
    forms (`<pos>.exc`: inflected -> base)."""
    global _index
    with _lock:
        if _index is None:
            index = {}
            for pos in POS:
                table: dict[str, tuple[str, ...]] = {}
                path = ROOT / f"index.{pos}"
                if path.exists():
                    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                        if line.startswith(" "):
                            continue  # the licence at the top
                        f = line.split()
                        n_ptr = int(f[3])
                        n_senses = int(f[2])
                        table[f[0]] = tuple(f[6 + n_ptr: 6 + n_ptr + n_senses])
                exc = ROOT / f"{pos}.exc"
                rows = (ln.split() for ln in exc.read_text().splitlines()) if exc.exists() else ()
                index[pos] = (table, {r[0]: r[1] for r in rows if len(r) >= 2})
            _index = index
    return _index


def base_forms(word: str, pos: str) -> list[str]:
    """The word's dictionary forms for one part of speech ("searches" -> "search"), as WordNet's morphy."""
    table, exceptions = _load()[pos]
    word = word.lower()
    out = [word] if word in table else []
    exc = exceptions.get(word)
    if exc and exc in table:
        out.append(exc)
    for suffix, repl in _SUFFIXES[pos]:
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            base = word[: len(word) - len(suffix)] + repl
            if base in table and base not in out:
                out.append(base)
    return out


@lru_cache(maxsize=8192)
def senses(word: str) -> frozenset[str]:
    """The synsets of the word's most common senses, over every part of speech ('n:06825399', ...)."""
    if not re.fullmatch(r"[a-z][a-z'-]*", word.lower()) or not available():
        return frozenset()
    found: set[str] = set()
    for pos in POS:
        for base in base_forms(word, pos)[:1]:
            found.update(f"{pos[0]}:{off}" for off in _load()[pos][0][base][:SENSES])
    return frozenset(found)


def only_modifier(word: str) -> bool:
    """The word is an adjective and no noun or verb ("bigger", "different"; not "bold", a verb too, nor
    "numbers")."""
    if not re.fullmatch(r"[a-z][a-z'-]*", word.lower()) or not available():
        return False
    return bool(base_forms(word, "adj")) and not base_forms(word, "noun") and not base_forms(word, "verb")


def synonymous(a: str, b: str) -> bool:
    """Same word, or words that share one of their most common senses."""
    return synonym_of_any(a, {b.lower()}, senses(b))


def synonym_of_any(word: str, words: set[str], their_senses: frozenset[str]) -> bool:
    """`synonymous(word, w)` for some w of `words` (lower-case), given the union of their senses
    (`senses_of(words)`, computed once for many words)."""
    return word.lower() in words or bool(senses(word) & their_senses)


def senses_of(words: Iterable[str]) -> frozenset[str]:
    return frozenset().union(*map(senses, words))
