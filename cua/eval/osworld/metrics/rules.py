"""Rule matching shared by the OSWorld metrics: {"method": ..., "ref": ...} rules and record patterns."""

from __future__ import annotations

import builtins
import functools
import operator
import re
from typing import Any
from urllib.parse import ParseResult, urlparse, urlunparse

_COMPARATORS = {"eq", "ne", "le", "lt", "ge", "gt"}


def match_record(pattern: dict, item: dict) -> bool:
    """Every key of `pattern` is in `item` with the same value."""
    return all(k in item and item[k] == v for k, v in pattern.items())


def _ranges_within(inner, outer) -> bool:
    return all(r in outer for r in inner)


def match_value_to_rule(value: Any, rule: dict) -> bool:
    """OSWorld's rule language: re[.FLAG...], eq/ne/le/lt/ge/gt, approx:T, spreadsheet_range,
    range.XY [a, b], str_list_eq / str_set_eq."""
    method: str = rule["method"]
    if method.startswith("re"):
        flags = functools.reduce(operator.or_, (getattr(re, f) for f in method.split(".")[1:]), re.RegexFlag(0))
        return re.search(rule["ref"], value, flags) is not None
    if method in _COMPARATORS:
        return getattr(operator, method)(value, rule["ref"])
    if method.startswith("approx"):
        threshold = float(method.split(":")[1])
        try:
            value = float(value)
        except (ValueError, TypeError):
            return False
        return abs(value - rule["ref"]) <= threshold
    if method == "spreadsheet_range":
        from openpyxl.worksheet.cell_range import MultiCellRange

        low, high = MultiCellRange(rule["ref"][0]), MultiCellRange(rule["ref"][1])
        return _ranges_within(low, value) and _ranges_within(value, high)
    if method.startswith("range."):
        left, right = method[6], method[7]
        return getattr(operator, "l" + left)(rule["ref"][0], value) and getattr(operator, "l" + right)(
            value, rule["ref"][1]
        )
    if method in {"str_list_eq", "str_set_eq"}:
        container = getattr(builtins, method[4:-3])
        return container(value.strip("\"'").split(",")) == container(rule["ref"])
    raise NotImplementedError(f"unknown rule method {method!r}")


def lists_equal_unordered(list1, list2, same) -> bool:
    """Same length and every item of list1 has a `same` partner in list2 (OSWorld's are_lists_equal)."""
    if len(list1) != len(list2):
        return False
    return all(any(same(a, b) for b in list2) for a in list1)


_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+\-.]*://")


def _registered_parts(host: str) -> tuple[str, str]:
    """(subdomain, domain) of a host, by the public suffix list that tldextract ships (offline)."""
    parts = _offline_extractor()(host)
    return parts.subdomain, parts.domain


@functools.lru_cache(maxsize=1)
def _offline_extractor():
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def normalize_url(url: str, full: bool = True) -> str:
    if not _SCHEME.match(url):
        url = f"http://{url}"
    parsed = urlparse(url)
    subdomain, domain = _registered_parts(parsed.netloc.lower())
    if subdomain == "www":
        subdomain = ""
    netloc = f"{subdomain}.{domain}" if subdomain else domain
    path = parsed.path if parsed.path != "/" else ""
    return urlunparse(
        ParseResult(
            scheme=parsed.scheme.lower(),
            netloc=netloc,
            path=path,
            params=parsed.params if full else "",
            query=parsed.query if full else "",
            fragment=parsed.fragment if full else "",
        )
    )


def compare_urls(url1, url2, full: bool = True) -> bool:
    """Equal after dropping the scheme-less default, 'www', the public suffix and a lone '/' path."""
    if url1 is None or url2 is None:
        return url1 == url2
    return normalize_url(url1, full) == normalize_url(url2, full)
