"""Ranking skills for a request: sentence embeddings fused with BM25, each score absolute in [0, 1].

fused = w * cosine + (1 - w) * lexical. The cosine is half the request's against the whole skill
document, half its best against one of the skill's short phrases (its label and aliases, the label
under its role's verbs, the dialog it opens, its effect, a synonym): a short request is nearer one
phrase than a long document. Lexical is half the request's BM25 score against the skill divided by
the score a document holding every request word once would get (words the library never uses count
against the match), half the share of the control's label (or an alias) the request names. Both parts are absolute, so one threshold
can tell "a skill covers this" from "no skill does" across requests (the boundary, cua.agent.boundary).
A control inside a dialog loses PLACE_COST for each place on its way (the dialog's title, a tab) that the
request does not name: "hide the clear buttons" is a command of the main window before it is a button
on a preferences tab.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from skills import wordnet
from skills.intent import NUMBER
from skills.library import STOP_WORDS, tokenize
from skills.skill_text import aliases, document, kind_of, phrases, synonyms, ui_path

METHODS = ("fused", "bm25", "embed")
W_EMBED = 0.6
PHRASE_MIX = 0.5  # cosine = half the whole document's, half the nearest short phrase's (skill_text.phrases)
K1, B = 1.2, 0.75
MENU_LABEL = 0.5  # a menu's title counts this much of its label share unless the request says "menu"
PLACE_COST = 0.03  # per place inside a dialog (its title, a tab on the way) that the request does not name
DIALOG_ROLES = ("dialog", "file chooser", "font chooser", "color chooser", "alert")


@dataclass
class Candidate:
    skill: Any
    score: float
    cosine: float = 0.0
    lexical: float = 0.0

    def row(self) -> dict[str, Any]:
        return {"name": self.skill.name, "status": self.skill.status, "score": round(self.score, 3),
                "cosine": round(self.cosine, 3), "lexical": round(self.lexical, 3),
                "description": self.skill.description}


def _without_app(text: str, app: str) -> str:
    return re.sub(rf"\bin {re.escape(app)}\b", "", text) if app else text


def _label_sets(label: str) -> list[tuple[set[str], int, tuple[tuple[str, frozenset[str]], ...]]]:
    """For each name of the control (skills.skill_text.aliases): its words with the label's synonyms,
    how many words the name itself has, and its plain words with their stems (for WordNet)."""
    syn = set(tokenize(synonyms(label)))
    return [(set(tokenize(a)) | syn, len(set(tokenize(a))) or 1,
             tuple((w, frozenset(tokenize(w))) for w in _plain(a))) for a in aliases(label)]


def _plain(text: str) -> list[str]:
    """Lower-case words, unstemmed, stop words out: what WordNet looks up."""
    return [w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOP_WORDS and len(w) > 2]


def _named(qset: set[str], qplain: tuple[set[str], frozenset[str]], words: set[str],
           plain: tuple[tuple[str, frozenset[str]], ...]) -> int:
    """How many words of a control's name the request names: the same word (stemmed), or a WordNet
    synonym of one of the name's plain words ("typeface" names "Font"). `qplain`: the request's plain
    words and the union of their senses."""
    hit = len(qset & words)
    for w, stems in plain:
        if not (stems & qset) and wordnet.synonym_of_any(w, *qplain):
            hit += 1
    return hit


def _places(skill: Any) -> list[set[str]]:
    """Where the control sits when it is inside a dialog: the dialog's title and the named containers on
    the way to it (a tab, a group), each as its words with its synonyms, the app's name left out. Empty
    for a control outside any dialog (a menu item, a toolbar button)."""
    sig = str(skill.extra.get("target") or "") if isinstance(skill.extra, dict) else ""
    segs = sig.split("/")
    app = set(tokenize(getattr(skill, "app", "") or ""))
    for i, seg in enumerate(segs[:-1]):
        if seg.partition(":")[0] in DIALOG_ROLES:
            names = [seg.partition(":")[2]] + [x.partition(":")[2] for x in segs[i + 1:-1]]
            return [words for n in names if (words := set(tokenize(f"{n} {synonyms(n)}")) - app)]
    return []


def _and_phrases(skills: list[Any]) -> tuple[str, ...]:
    """Names of controls with "and" or "&" in them ("Find and Replace"): a request is not split there."""
    found = set()
    for skill in skills:
        for label in re.split(r"\s*›\s*", skill.name):
            label = label.strip(" .:…")
            if re.search(r"\s(and|&)\s", label, re.IGNORECASE) and len(label) <= 40:
                found.add(label)
                first = label.split()[0]  # "search and replace" is the same control as "Find and Replace"
                found.update(f"{alt} {label[len(first) + 1:]}" for alt in synonyms(first).split()
                             if alt not in STOP_WORDS and alt.lower() != first.lower())
    return tuple(sorted(found))


class _BM25:
    """Okapi BM25 with Lucene's always-positive IDF (tiny libraries stay scorable), as a term x doc matrix."""

    def __init__(self, docs: list[list[str]]):
        import numpy as np

        counts = [Counter(d) for d in docs]
        n = len(docs)
        lens = np.array([len(d) for d in docs], dtype=np.float64)
        avg = float(lens.mean()) if n else 1.0
        df: Counter[str] = Counter()
        for d in counts:
            df.update(d.keys())
        self.vocab = {t: i for i, t in enumerate(sorted(df))}
        self.idf = np.array([math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in self.vocab])
        self.max_idf = math.log(1 + (n + 0.5) / 0.5) if n else 1.0
        tf = np.zeros((len(self.vocab), n))
        for j, d in enumerate(counts):
            for t, c in d.items():
                tf[self.vocab[t], j] = c
        norm = K1 * (1 - B + B * lens / avg)
        self.weights = self.idf[:, None] * tf * (K1 + 1) / (tf + norm[None, :])  # BM25 of each term in each doc

    def normalized(self, query: list[str]) -> Any:
        """Per document: BM25 / the BM25 of an average-length document with each query word once."""
        import numpy as np

        q = Counter(query)
        ideal = sum((self.idf[self.vocab[t]] if t in self.vocab else self.max_idf) * c for t, c in q.items()) or 1.0
        rows = [(self.vocab[t], c) for t, c in q.items() if t in self.vocab]
        if not rows:
            return np.zeros(self.weights.shape[1])
        score = sum(self.weights[i] * c for i, c in rows)
        return np.minimum(1.0, score / ideal)


class Retriever:
    """A ranking index over a library's latest skills; rebuilt when the library changes."""

    def __init__(self, library: Any, statuses: tuple[str, ...] = ("verified", "unverified", "failed")):
        self.library = library
        self.statuses = statuses
        self._gen: Any = None
        self.skills: list[Any] = []
        self.cache_queries = False  # remember query vectors and rankings (calibration re-asks the same ones)
        self._qcache: dict[str, Any] = {}
        self._rcache: dict[tuple, Any] = {}

    def refresh(self) -> None:
        """Re-read the library if it changed (skills, apps, names with "and" in them)."""
        self._refresh(need_vectors=False)

    def _refresh(self, need_vectors: bool) -> None:
        gen = self.library.db.execute(
            "SELECT COUNT(*), TOTAL(verified_runs + failed_runs), MAX(rowid) FROM skills").fetchone()
        if gen != self._gen:
            self.skills = [s for s in self.library.list() if s.status in self.statuses]
            # the app's own name is in every description ("... in mousepad"): left out, it says nothing
            self.docs = [_without_app(f"{document(s)} {s.when_to_use}", s.app) for s in self.skills]
            self.bm25 = _BM25([tokenize(f"{s.name} {d}") or ["_"] for s, d in zip(self.skills, self.docs)])
            self.labels = [_label_sets((ui_path(s) or [s.name])[-1]) for s in self.skills]
            self.places = [_places(s) for s in self.skills]
            self.menus = [kind_of(s) == "menu" for s in self.skills]
            self.phrases = [phrases(s) for s in self.skills]
            self.apps = sorted({s.app for s in self.skills if s.app})
            self.and_phrases = _and_phrases(self.skills)
            self.number_names = frozenset(p[-1] for s in self.skills if (p := ui_path(s)) and NUMBER.fullmatch(p[-1]))
            self.vecs = None
            self._gen = gen
        if need_vectors and self.vecs is None:
            import numpy as np

            flat = [p for ps in self.phrases for p in ps]
            self.vecs = self.library.vectors(self.docs)
            self.pvecs = self.library.vectors(flat) if flat else np.zeros((0, self.vecs.shape[1]), np.float32)
            self.powner = np.repeat(np.arange(len(self.skills)), [len(ps) for ps in self.phrases])

    def query_vectors(self, queries: list[str]) -> Any:
        """Embeddings of the queries; remembered (bounded) when `cache_queries` is set, e.g. while calibrating."""
        import numpy as np

        from skills.embed import embedder

        if not self.cache_queries:
            return embedder().embed(queries)
        todo = [q for q in dict.fromkeys(queries) if q not in self._qcache]
        if todo:
            if len(self._qcache) > 4096:
                self._qcache.clear()
            self._qcache.update(zip(todo, embedder().embed(todo)))
        return np.stack([self._qcache[q] for q in queries])

    def rank(self, queries: list[str], method: str = "fused", w: float = W_EMBED) -> list[list[Candidate]]:
        """Candidates for each query, best first (one embedding batch for all queries)."""
        if method not in METHODS:
            raise ValueError(f"retrieval method must be one of {', '.join(METHODS)}, not {method!r}")
        self._refresh(need_vectors=method != "bm25")
        key = (tuple(queries), method, w, self._gen)
        if self.cache_queries and key in self._rcache:
            return self._rcache[key]
        out = self._rank(queries, method, w)
        if self.cache_queries:
            self._rcache[key] = out
        return out

    def _rank(self, queries: list[str], method: str, w: float) -> list[list[Candidate]]:
        if not self.skills:
            return [[] for _ in queries]
        cos_rows = None
        if method != "bm25":
            import numpy as np

            qv = self.query_vectors(queries)
            cos_rows = qv @ self.vecs.T
            if PHRASE_MIX and len(self.powner):
                near = np.full(cos_rows.shape, -1.0, dtype=np.float32)  # per skill, its nearest phrase
                np.maximum.at(near.T, self.powner, (qv @ self.pvecs.T).T)
                cos_rows = (1 - PHRASE_MIX) * cos_rows + PHRASE_MIX * near
        out = []
        for qi, q in enumerate(queries):
            words = tokenize(q)
            bm = self.bm25.normalized(words)
            qset = set(words)
            plain_q = set(_plain(q))
            qplain = (plain_q, wordnet.senses_of(plain_q))  # once per request, not per skill and word
            cands = []
            for i, s in enumerate(self.skills):
                # both ways: how much of the request the skill explains, how much of its label the request names
                lab = max(min(1.0, _named(qset, qplain, words, plain) / n) for words, n, plain in self.labels[i])
                if self.menus[i] and "menu" not in qset:  # "a word in this file" does not ask for the File menu
                    lab *= MENU_LABEL
                lex = 0.5 * float(bm[i]) + 0.5 * lab
                c = float(cos_rows[qi, i]) if cos_rows is not None else 0.0
                score = lex if method == "bm25" else c if method == "embed" else w * c + (1 - w) * lex
                # a control inside a dialog is what a request means when it says where ("match case in
                # the replace dialog"); unnamed, the same words more likely mean a control outside it
                score -= PLACE_COST * sum(not (p & qset) for p in self.places[i])
                cands.append(Candidate(s, score, c, lex))
            cands.sort(key=lambda c: (-c.score, c.skill.name))
            out.append(cands)
        return out
