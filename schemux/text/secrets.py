"""Secrets masked in text before an agent reads it (``--mask-secrets``): each known
credential shape is replaced by a marker that keeps its kind and length,
``[masked AWS Access Key: 20 chars]``.

The shapes are detect-secrets' (Yelp's maintained detector library, its plugins' own
regular expressions: AWS, GitHub, GitLab, Slack, Stripe, OpenAI, npm, PyPI, JWTs and the
rest), plus what its plugins only flag: a private key's whole block, from its ``BEGIN``
line to its ``END`` line, the value of a ``password=``-style assignment (its keyword
plugin's expression), and a high-entropy value after a ``token`` or ``secret`` word
(its Shannon entropy). Public IP addresses are not secrets here. Pure; the detectors are
made once a process, at the first text masked.

:class:`SecretMasker` is the one function every output of schemux goes through when
masking is on (results, resources, the audit log; pictures' text and recordings call
:func:`mask_text` too).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

# a value after a token/secret word is masked when it is at least this long and its
# Shannon entropy (bits a character) at least this high: what a generated token has
TOKEN_MIN_LENGTH = 16
TOKEN_MIN_ENTROPY = 3.0

_PRIVATE_KEY = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)",
    re.DOTALL,
)
_TOKEN_ASSIGNMENT = re.compile(
    r"(?i)\w*(?:token|secret|credential|api_?key)\w*['\"]?\s*[:=]\s*['\"]?([^\s'\",;]+)"
)
_NOT_SECRETS = frozenset({"Public IP (ipv4)", "Secret Keyword", "Private Key"})


@dataclass(frozen=True)
class Masked:
    """Text with its secrets masked, and how many there were."""

    text: str
    count: int


@dataclass(frozen=True)
class _Detector:
    kind: str
    pattern: re.Pattern[str]
    group: int  # the group holding the secret (0: the whole match)


@cache
def _detectors() -> tuple[_Detector, ...]:
    """detect-secrets' regular-expression plugins, each expression with the group that
    holds its secret; its keyword plugin's assignment expression (group 5, the value)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.keyword import FOLLOWED_BY_EQUAL_SIGNS_REGEX

    found: list[_Detector] = []
    plugin: Any
    for kind, plugin in sorted(get_mapping_from_secret_type_to_class().items()):
        if kind in _NOT_SECRETS or not issubclass(plugin, RegexBasedDetector):
            continue
        for pattern in plugin().denylist:
            # a group that is the secret itself (AWS's secret key in quotes), not a prefix
            group = pattern.groups if pattern.groups and "{40}" in pattern.pattern else 0
            found.append(_Detector(kind, pattern, group))
    found.append(_Detector("Secret Keyword", FOLLOWED_BY_EQUAL_SIGNS_REGEX, 5))
    return tuple(found)


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _spans(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of each secret found, possibly overlapping."""
    for match in _PRIVATE_KEY.finditer(text):
        yield match.start(), match.end(), "Private Key"
    for detector in _detectors():
        for match in detector.pattern.finditer(text):
            start, end = match.span(detector.group)
            if end - start >= 4:
                yield start, end, detector.kind
    for match in _TOKEN_ASSIGNMENT.finditer(text):
        value = match.group(1)
        if len(value) >= TOKEN_MIN_LENGTH and _entropy(value) >= TOKEN_MIN_ENTROPY:
            yield match.start(1), match.end(1), "High Entropy Token"


def secret_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each secret in ``text`` that masking replaces, in order and
    apart (the first found of overlapping ones wins, a longer one before a shorter one
    at the same place)."""
    if not text:
        return []
    kept: list[tuple[int, int, str]] = []
    at = 0
    for start, end, kind in sorted(_spans(text), key=lambda span: (span[0], -span[1])):
        if start >= at:
            kept.append((start, end, kind))
            at = end
    return kept


def mask_text(text: str) -> Masked:
    """``text`` with each secret (``secret_spans``) replaced by ``[masked KIND: N chars]``."""
    spans = secret_spans(text)
    if not spans:
        return Masked(text, 0)
    parts = []
    at = 0
    for start, end, kind in spans:
        parts.append(text[at:start])
        parts.append(f"[masked {kind}: {end - start} chars]")
        at = end
    parts.append(text[at:])
    return Masked("".join(parts), len(spans))


def mask_value(value: Any) -> tuple[Any, int]:
    """A JSON value with every string in it (keys too) masked, and the count."""
    if isinstance(value, str):
        masked = mask_text(value)
        return masked.text, masked.count
    if isinstance(value, Mapping):
        total = 0
        kept = {}
        for key, item in value.items():
            new_key, key_count = mask_value(key) if isinstance(key, str) else (key, 0)
            new_item, item_count = mask_value(item)
            kept[new_key] = new_item
            total += key_count + item_count
        return kept, total
    if isinstance(value, list | tuple):
        items = [mask_value(item) for item in value]
        return [item for item, _ in items], sum(count for _, count in items)
    return value, 0
