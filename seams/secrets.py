"""Deterministic secret detection: what must never be stored, whatever a model says.

A model's "holds a secret" probability is a useful second net, but a card number that passes the
Luhn check, a key with a vendor's prefix or "my password is ..." is certain enough to decide in
code, before any model is asked — and then the text never reaches a judge, a log or a store.

Each finding names its kind and where it is, never the secret itself.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """One secret found in a text: what kind, and its character span (the text is not kept)."""

    kind: str
    start: int
    end: int


# 13–19 digits, optionally grouped by single spaces or dashes (how card numbers are written).
_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")

@dataclass(frozen=True)
class KeyFormat:
    """A credential shape that is never anything else: a vendor's key prefix, a key header."""

    kind: str  #: machine name, used as a `Finding`'s kind
    label: str  #: the same in words, for messages ("a hard-coded AWS access key id")
    pattern: re.Pattern[str]


#: The one table of vendor key formats, shared by the memory gate and `seams lint`'s secret check.
KEY_FORMATS: tuple[KeyFormat, ...] = (
    KeyFormat("private_key", "private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    KeyFormat("aws_access_key", "AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    KeyFormat("github_token", "GitHub token",
              re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    KeyFormat("slack_token", "Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    KeyFormat("google_api_key", "Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    KeyFormat("stripe_key", "Stripe key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}\b")),
    KeyFormat("openai_style_key", "API secret key", re.compile(r"\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{20,}\b")),
    KeyFormat("jwt", "JSON web token",
              re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b")),
    KeyFormat("bearer_token", "bearer token", re.compile(r"\b[Bb]earer\s+[A-Za-z0-9_\-.=+/]{20,}")),
    KeyFormat("url_password", "password in a URL", re.compile(
        r"\b[a-z][a-z0-9+.-]*://[^/\s:@\"'{}$<>]+:(?!password@|pass@|\*+@)[^/\s@\"'{}$<>]{4,}@")),
)

#: "password is hunter2", "pwd: x", "api key = ...": a credential given in words.
_CREDENTIAL = re.compile(
    r"\b(?P<what>pass(?:word|wd|phrase|code)?|pwd|pin|api[ _-]?key|secret[ _-]?key|access[ _-]?token|"
    r"auth[ _-]?token|token|secret)\b"
    r"(?:\s+(?:for|to|of|on)\s+[\w.@-]+)?"
    r"\s*(?:is|was|:|=|->)\s*[\"'`]?(?P<value>[^\s\"'`]{4,})",
    re.IGNORECASE,
)
_NOT_A_VALUE = {"required", "needed", "missing", "expired", "wrong", "incorrect", "invalid", "correct",
                "changed", "reset", "set", "stored", "secure", "strong", "weak", "long", "short", "the",
                "a", "an", "not", "now", "still", "same", "different", "empty", "hidden", "private"}

# A long run of letters and digits mixed, like an unlabelled key.
_TOKEN = re.compile(r"\b[A-Za-z0-9_\-]{32,}\b")


def luhn_ok(digits: str) -> bool:
    """The Luhn checksum that every payment card number satisfies."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _entropy(s: str) -> float:
    counts = Counter(s)
    return -sum(c / len(s) * math.log2(c / len(s)) for c in counts.values())


def find_secrets(text: str) -> list[Finding]:
    """Every card number, vendor key, credential in words or key-like token in `text`."""
    found: list[Finding] = []
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and luhn_ok(digits) and len(set(digits)) > 1:
            found.append(Finding("card_number", m.start(), m.end()))
    for fmt in KEY_FORMATS:
        for m in fmt.pattern.finditer(text):
            found.append(Finding(fmt.kind, m.start(), m.end()))
    for m in _CREDENTIAL.finditer(text):
        value = m.group("value").rstrip(".,;!?")
        if value.lower() in _NOT_A_VALUE or len(value) < 4:
            continue
        kind = "password" if m.group("what").lower().startswith(("pass", "pwd", "pin")) else "credential"
        found.append(Finding(kind, m.start("value"), m.start("value") + len(value)))
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if any(f.start <= m.start() < f.end for f in found):
            continue
        if re.fullmatch(r"[0-9a-fA-F]+", tok):  # a hash or a commit id: an identifier, not a secret
            continue
        if re.search(r"[A-Za-z]", tok) and re.search(r"\d", tok) and _entropy(tok) >= 3.5:
            found.append(Finding("token", m.start(), m.end()))
    found.sort(key=lambda f: (f.start, f.kind))
    return found


def redact(text: str, findings: list[Finding] | None = None) -> str:
    """`text` with every finding replaced by `[kind]`."""
    findings = find_secrets(text) if findings is None else findings
    out, last = [], 0
    for f in sorted(findings, key=lambda f: f.start):
        if f.start < last:
            continue
        out.append(text[last:f.start])
        out.append(f"[{f.kind}]")
        last = f.end
    out.append(text[last:])
    return "".join(out)


__all__ = ["KEY_FORMATS", "Finding", "KeyFormat", "find_secrets", "luhn_ok", "redact"]
