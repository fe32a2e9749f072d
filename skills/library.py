"""The skill library: SQLite (WAL) store with versions, run counts, BM25 retrieval and JSON exchange.

Several writers (two explorers, an agent recording runs) may share one file: every write is a
short IMMEDIATE transaction, so concurrent processes serialise instead of corrupting it.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import snowballstemmer
from pydantic import ValidationError

from skills.skill import Skill
from skills.skill_text import APP_WORD, document

EXPORT_FORMAT = "cua-skills"
EXPORT_VERSION = 1
STOP_WORDS = {"the", "a", "an", "to", "of", "and", "in", "on", "for", "it", "with", "from", "this", "that",
              "me", "my", "please", "then", "is", "be", "into", "by", "at", "or", "as",
              # pronouns, auxiliaries and question words: a question's frame says nothing about the control
              # ("what version of it am I running"), yet each word the library lacks counts against a match
              "i", "im", "am", "are", "was", "were", "do", "does", "did", "can", "could", "would", "will",
              "should", "you", "your", "we", "our", "us", "what", "which", "who", "how", "where", "when", "why",
              "there", "here", "its", "these", "those", "them", "they",
              "let", "so", "just", "very", "really", "too", "also", "some", "any", "anything", "something",
              "want", "need", "like", "way",
              "m", "d", "t", "s", "ll", "ve", "re", "don", "doesn", "didn", "isn", "aren", "won",  # I'm, don't
              *APP_WORD.split()}  # the word an app's own name becomes (skills.skill_text.app_as_word)
_STEMMER = snowballstemmer.stemmer("english")

SCHEMA = """
CREATE TABLE IF NOT EXISTS skills (
  name TEXT NOT NULL, version INTEGER NOT NULL, app TEXT, status TEXT, provenance TEXT,
  verified_runs INTEGER DEFAULT 0, failed_runs INTEGER DEFAULT 0, body TEXT NOT NULL, created REAL,
  PRIMARY KEY (name, version));
CREATE INDEX IF NOT EXISTS skills_app ON skills(app);
CREATE TABLE IF NOT EXISTS library_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, vec BLOB NOT NULL);
"""


class SkillImportError(ValueError):
    """A JSON import that is not a valid skill export; the message says what is wrong and where."""


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens, stop words dropped, each stemmed by the Snowball English stemmer (for BM25
    and label overlap): "replacing" and "Replace", "saving" and "Save" are one word."""
    return [_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP_WORDS]


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _STEMMER.stemWord(word)


def skill_search_text(skill: Skill) -> str:
    """The skill's name and texts plus what exploration saw of it (skills.skill_text.document)."""
    return f"{skill.search_text()} {document(skill)}"


class SkillLibrary:
    """Skills by name (latest version wins), with verification counts and text retrieval."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        self.db.execute("PRAGMA busy_timeout=60000")
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self._index: tuple[Any, Any, list[Skill]] | None = None

    def __enter__(self) -> SkillLibrary:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # -- writes ---------------------------------------------------------------------------------
    def _tx(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def add(self, skill: Skill) -> Skill:
        """Store a skill; a name that exists gets the next version. Returns the stored copy."""
        if not skill.name.strip():
            raise ValueError("a skill needs a non-empty name")
        db = self._tx()
        try:
            row = db.execute("SELECT MAX(version) FROM skills WHERE name=?", (skill.name,)).fetchone()
            version = (row[0] or 0) + 1
            stored = skill.model_copy(update={"version": version})
            db.execute(
                "INSERT INTO skills(name, version, app, status, provenance, verified_runs, failed_runs, body,"
                " created) VALUES (?,?,?,?,?,?,?,?,?)",
                (stored.name, version, stored.app, stored.status, stored.provenance, stored.verified_runs,
                 stored.failed_runs, stored.model_dump_json(), stored.created))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._index = None
        return stored

    def record_run(self, name: str, ok: bool) -> Skill:
        """Count one replay of the latest version; the latest run decides verified/failed."""
        db = self._tx()
        try:
            row = db.execute("SELECT version, body FROM skills WHERE name=? ORDER BY version DESC LIMIT 1",
                             (name,)).fetchone()
            if row is None:
                raise KeyError(f"no skill named {name!r} in {self.path}; `cua skills list` shows the names")
            skill = Skill.model_validate_json(row[1])
            upd = {"verified_runs": skill.verified_runs + ok, "failed_runs": skill.failed_runs + (not ok),
                   "status": "verified" if ok else "failed"}
            skill = skill.model_copy(update=upd)
            db.execute("UPDATE skills SET status=?, verified_runs=?, failed_runs=?, body=? WHERE name=? AND version=?",
                       (skill.status, skill.verified_runs, skill.failed_runs, skill.model_dump_json(), name, row[0]))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._index = None
        return skill

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON value with the library (e.g. the calibrated run/refuse boundary)."""
        self.db.execute("INSERT OR REPLACE INTO library_meta(key, value) VALUES (?, ?)", (key, json.dumps(value)))

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM library_meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def vectors(self, texts: list[str]) -> Any:
        """Sentence embeddings of `texts` (n, 384), cached in the library by text and model."""
        import numpy as np

        from skills.embed import DIM, embedder, text_hash

        keys = [text_hash(t) for t in texts]
        found: dict[str, Any] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i: i + 500]
            q = f"SELECT hash, vec FROM vectors WHERE hash IN ({','.join('?' * len(chunk))})"
            found.update({h: np.frombuffer(v, dtype=np.float32) for h, v in self.db.execute(q, chunk)})
        todo = [i for i, k in enumerate(keys) if k not in found or found[k].shape != (DIM,)]
        if todo:
            vecs = embedder().embed([texts[i] for i in todo])
            try:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.executemany("INSERT OR REPLACE INTO vectors(hash, vec) VALUES (?, ?)",
                                    [(keys[i], v.tobytes()) for i, v in zip(todo, vecs)])
                self.db.execute("COMMIT")
            except sqlite3.OperationalError:  # a read-only library still answers; it just re-embeds
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
            for i, v in zip(todo, vecs):
                found[keys[i]] = v
        return np.stack([found[k] for k in keys]) if keys else np.zeros((0, DIM), dtype=np.float32)

    # -- reads ----------------------------------------------------------------------------------
    def get(self, name: str, version: int | None = None) -> Skill | None:
        if version is None:
            row = self.db.execute("SELECT body FROM skills WHERE name=? ORDER BY version DESC LIMIT 1",
                                  (name,)).fetchone()
        else:
            row = self.db.execute("SELECT body FROM skills WHERE name=? AND version=?", (name, version)).fetchone()
        return Skill.model_validate_json(row[0]) if row else None

    def versions(self, name: str) -> list[Skill]:
        rows = self.db.execute("SELECT body FROM skills WHERE name=? ORDER BY version", (name,))
        return [Skill.model_validate_json(r[0]) for r in rows]

    def list(self, app: str | None = None, status: str | None = None) -> list[Skill]:
        """Latest version of every skill, optionally filtered by app and status, by name."""
        q = ("SELECT s.body FROM skills s JOIN (SELECT name, MAX(version) v FROM skills GROUP BY name) m"
             " ON s.name=m.name AND s.version=m.v")
        where, args = [], []
        if app:
            where.append("s.app=?")
            args.append(app)
        if status:
            where.append("s.status=?")
            args.append(status)
        if where:
            q += " WHERE " + " AND ".join(where)
        return [Skill.model_validate_json(r[0]) for r in self.db.execute(q + " ORDER BY s.name", args)]

    def __len__(self) -> int:
        return self.db.execute("SELECT COUNT(DISTINCT name) FROM skills").fetchone()[0]

    def search(self, text: str, k: int = 5, status: str | None = None) -> list[tuple[Skill, float]]:
        """BM25 over name, description, when_to_use and UI path; best first, zero scores dropped."""
        from rank_bm25 import BM25Okapi

        gen = self.db.execute("SELECT COUNT(*), TOTAL(verified_runs + failed_runs), MAX(rowid) FROM skills").fetchone()
        if self._index is None or self._index[0] != gen:
            skills = self.list()
            docs = [tokenize(skill_search_text(s)) or ["_"] for s in skills]
            self._index = (gen, BM25Okapi(docs) if docs else None, skills)
        _, bm25, skills = self._index
        query = tokenize(text)
        if bm25 is None or not query:
            return []
        scores = bm25.get_scores(query)
        ranked = sorted(zip(skills, scores), key=lambda p: (-p[1], p[0].name))
        out = [(s, float(sc)) for s, sc in ranked if sc > 0 and (status is None or s.status == status)]
        return out[:k]

    # -- exchange -------------------------------------------------------------------------------
    def export_json(self, path: str | Path) -> int:
        """Write the latest version of every skill to a JSON file; returns the count."""
        skills = self.list()
        data = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION,
                "skills": [s.model_dump(mode="json") for s in skills]}
        Path(path).write_text(json.dumps(data, indent=1))
        return len(skills)

    def import_json(self, path: str | Path) -> list[Skill]:
        """Add every skill of an export file (as new versions); reject the whole file if any is invalid."""
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise SkillImportError(f"{path}: no such file") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise SkillImportError(f"{path}: not JSON ({e}); expected a file written by `SkillLibrary.export_json`") from None
        if isinstance(data, list):
            items = data
        elif isinstance(data, dict) and isinstance(data.get("skills"), list):
            if data.get("format", EXPORT_FORMAT) != EXPORT_FORMAT:
                raise SkillImportError(f"{path}: format is {data.get('format')!r}, expected {EXPORT_FORMAT!r}")
            items = data["skills"]
        else:
            raise SkillImportError(f"{path}: expected an object with a 'skills' list (or a list of skills), "
                                   f"got {type(data).__name__}")
        parsed, problems = [], []
        for i, item in enumerate(items):
            try:
                parsed.append(Skill.model_validate(item))
            except ValidationError as e:
                err = e.errors()[0]
                loc = ".".join(str(p) for p in err["loc"])
                label = item.get("name") if isinstance(item, dict) else None
                problems.append(f"skills[{i}]{f' ({label!r})' if label else ''}: {loc}: {err['msg']}")
        if problems:
            raise SkillImportError(f"{path}: {len(problems)} invalid skill(s), nothing imported: "
                                   + "; ".join(problems[:5]))
        return [self.add(s) for s in parsed]
