"""OSWorld's Thunderbird metrics: prefs.js, msgFilterRules.dat and mbox folders."""

from __future__ import annotations

import json
import re

from cua.eval.osworld.metrics.rules import match_record, match_value_to_rule

_PREF = re.compile(r'^user_pref\("(?P<key>(?:[^"]|\\")+)\", (?P<val>.+)\);$')
_CONDITION = re.compile(r'\b(?:AND|OR) \((?:[\w ]+),(?:[\w \']+),(?:"(?:(?:[^"]|\")+)"|(?:[^)]+))\)|\bALL\b')


def check_thunderbird_prefs(result: str, rule: dict):
    """prefs.js user_pref lines: every `expect` key seen with a matching value, no `unexpect` match."""
    if result is None:
        return 0.0
    expect, unexpect = rule.get("expect", {}), rule.get("unexpect", {})
    seen = {k: False for k in expect}
    clean = True
    with open(result) as f:
        for line in f:
            m = _PREF.match(line.strip())
            if m is None:
                continue
            key, value = m.group("key"), json.loads(m.group("val"))
            if key in expect:
                seen[key] = match_value_to_rule(value, expect[key])
            elif key in unexpect:
                clean = clean and not match_value_to_rule(value, unexpect[key])
    return float(all(seen.values()) and clean)


def _unescape(val: str) -> str:
    return val.replace('\\"', '"').replace("\\\\", "\\")


def check_thunderbird_filter(result: str, rules: dict) -> float:
    """msgFilterRules.dat filters (name, enabled, type, action, actionValue, condition list) matched
    against `expect`/`unexpect` records."""
    if result is None:
        return 0.0
    filters = []
    fields = (("name=", "name", 6), ("enabled=", "enabled", 9), ("type=", "type", 6), ("action=", "action", 8),
              ("actionValue=", "actionValue", 13))
    with open(result) as f:
        for line in f:
            if line.startswith("name="):
                current = {"name": _unescape(line[6:-2])}
                continue
            for prefix, key, cut in fields[1:]:
                if line.startswith(prefix):
                    current[key] = _unescape(line[cut:-2])  # noqa: F821 (before any name= it fails, as OSWorld's)
                    break
            else:
                if line.startswith("condition="):
                    current["condition"] = _CONDITION.findall(_unescape(line[11:-2]))  # noqa: F821
                    filters.append(current)  # noqa: F821
    expect, unexpect = rules.get("expect", []), rules.get("unexpect", [])
    found = [False] * len(expect)
    clean = True
    for flt in filters:
        for i, r in enumerate(expect):
            found[i] = found[i] or match_record(r, flt)
        clean = clean and not any(match_record(r, flt) for r in unexpect)
    return float(all(found) and clean)


def check_thunderbird_folder(result, reference, **kwargs) -> float:
    """Mbox files hold the same messages. OSWorld's reader skips every non-empty message (`if
    mail.strip(): continue`), so any two readable files compare equal; we keep that (see
    docs/osworld_metrics.md)."""
    return same_mbox_messages(result, reference, reference_quirk=True, **kwargs)


def same_mbox_messages(result, reference, reference_quirk: bool, **kwargs) -> float:
    """1.0 when each result mbox holds the messages of its reference; `reference_quirk` reads as OSWorld
    does (non-empty messages skipped), without it the messages are compared (`--strict-metrics`)."""
    def normalize(msg: str) -> str:
        if kwargs.get("ignore_status", False):
            msg = re.sub(r"X-Mozilla-Status\d?:[\s\d]+", "", msg)
        if kwargs.get("ignore_keys", False):
            msg = re.sub(r"(X-Mozilla-Keys:[^\n]*?)\n(MIME-Version)", r"\2", msg)
        return msg.strip()

    def read(path: str) -> str:
        with open(path) as f:
            data = f.read().strip()
        messages = []
        for mail in data.split("FROM - "):
            if bool(mail.strip()) == reference_quirk:
                continue
            if kwargs.get("remove_deleted", True) and re.search(r"X-Mozilla-Status: 000[89]", mail):
                continue
            messages.append("FROM - " + normalize(mail))
        if kwargs.get("remove_duplicate", True):
            messages = set(messages)
        return "\n".join(sorted(messages))

    if type(reference) is not list:
        result, reference = [result], [reference]
    for pred, gold in zip(result, reference):
        if pred is None or read(pred) != read(gold):
            return 0.0
    return 1.0
