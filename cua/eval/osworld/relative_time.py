"""The `rule_relativeTime` getter: expected dates written relative to today ("next Monday"), made absolute.

Same rules as OSWorld's get_rule_relativeTime. Its timezone comes from the task's `rules.timezone`;
where the task gives none OSWorld asks an IP-geolocation service, falling back to UTC offline: cua
never calls out and uses UTC (docs/osworld.md).
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone as dt_timezone
from typing import Any

DOW = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
MONTH = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
         "November", "December"]
SIMPLE = {"tomorrow": 1}


def fmt(template: str, d: datetime) -> str:
    subs = [("{DoW}", DOW[d.weekday()]), ("{Month}", MON[d.month - 1]), ("{DayD}", str(d.day)),
            ("{Year}", str(d.year)), ("{Month0D}", f"{d.month:02d}"), ("{month}", MONTH[d.month - 1].lower()),
            ("{MonthFull}", MONTH[d.month - 1]), ("{Day0D}", f"{d.day:02d}"), ("{MonthD}", str(d.month))]
    for k, v in subs:
        template = template.replace(k, v, 1)
    return template


def _tz(config: dict):
    name = (config.get("rules") or {}).get("timezone")
    if name:
        try:
            from zoneinfo import ZoneInfo

            return ZoneInfo(name)
        except Exception:  # noqa: BLE001 - OSWorld falls back to UTC on an unknown zone
            pass
    return dt_timezone.utc


def _nth_next_month(now: datetime, day: int) -> datetime:
    year, month = (now.year + 1, 1) if now.month == 12 else (now.year, now.month + 1)
    return datetime(year, month, day, tzinfo=now.tzinfo)


def _first_monday(now: datetime, months: int, year_bump_from: int) -> datetime:
    year = now.year + 1 if now.month >= year_bump_from else now.year
    month = (now.month + months) % 12  # OSWorld's arithmetic, month 0 included (it raises there too)
    first = datetime(year, month, 1, tzinfo=now.tzinfo)
    return first + timedelta(days=((6 - first.weekday()) + 1) % 7)


def _from_day(name: str, now: datetime) -> datetime | None:
    wd = now.weekday()
    if name in SIMPLE:
        return now + timedelta(days=SIMPLE[name])
    table = {
        "5th next month": lambda: _nth_next_month(now, 5),
        "10th next month": lambda: _nth_next_month(now, 10),
        "this month": lambda: now,
        "next Monday": lambda: now + timedelta(days=(6 - wd) + 1),
        "next Monday split": lambda: now + timedelta(days=(6 - wd) + 1),
        "first monday four months later": lambda: _first_monday(now, 4, 9),
        "first monday eight months later": lambda: _first_monday(now, 8, 5),
        "this Saturday": lambda: now + timedelta(days=5 - wd),
        "next Friday": lambda: now + timedelta(days=4 - wd if wd < 4 else 7 if wd == 4 else (7 - wd) + 4),
        "next Saturday": lambda: now + timedelta(days=5 - wd if wd < 5 else 7 if wd == 5 else 6),
        "next week Friday": lambda: now + timedelta(days=(7 - wd) + 4),
        "next week Saturday": lambda: now + timedelta(days=(7 - wd) + 5),
        "next week Sunday": lambda: now + timedelta(days=(7 - wd) + 6),
    }
    return table[name]() if name in table else None


def _to_day(name: str, frm: str, start: datetime | None, now: datetime) -> datetime | None:
    wd = now.weekday()
    if name in SIMPLE:
        return now + timedelta(days=SIMPLE[name])
    if name == "this Sunday":
        return now + timedelta(days=6 - wd)
    if name == "11th next month":
        return _nth_next_month(now, 11)
    if name in ("next Friday", "next Friday split"):
        if frm in ("next Monday", "next Monday split") and start is not None:
            return start + timedelta(days=4)
        return now + timedelta(days=4 - wd if wd < 4 else (6 - wd) + 5)
    if name == "next Sunday":
        if frm in ("next Friday", "next Saturday") and start is not None:
            return start + timedelta(days=6 - start.weekday())
        return now + timedelta(days=6 - wd if wd < 6 else 7)
    if name == "next week Sunday":
        if frm in ("next week Friday", "next week Saturday") and start is not None:
            return start + timedelta(days=6 - start.weekday())
        return now + timedelta(days=(7 - wd) + 6)
    return None


def rule_relative_time(config: dict, now: datetime | None = None) -> Any:
    config = copy.deepcopy(config)
    rules = config["rules"]
    rel, exp = rules["relativeTime"], rules["expected"]
    now = now or datetime.now(_tz(config))
    frm = rel["from"]
    start = _from_day(frm, now)
    if "to" not in rel:
        exp["time"] = fmt(exp["time"], start)  # type: ignore[arg-type]
        return rules
    if frm == "next Monday split":
        for k in ("puDay", "puMonth", "puYear"):
            exp[k] = fmt(exp[k], start)  # type: ignore[arg-type]
    else:
        exp["from"] = fmt(exp["from"], start)  # type: ignore[arg-type]
    end = _to_day(rel["to"], frm, start, now)
    if rel["to"] == "next Friday split":
        for k in ("doDay", "doMonth", "doYear"):
            exp[k] = fmt(exp[k], end)  # type: ignore[arg-type]
    else:
        exp["to"] = fmt(exp["to"], end)  # type: ignore[arg-type]
    return rules
