"""One normal form for texts that code checks for secrets and orders, with a map back to the original.

A check that matches the text as typed is beaten by the text as an attacker or a careless user
types it: a Cyrillic `а` in "pаssword", a zero-width space inside a key, two spaces between the
groups of a card number, "p a s s w o r d", digits spelled out ("seven three nine one"). So the
checks match a *view* of the text in which those differences are gone, and report what they find
as spans of the original, so that redaction removes the original characters.

The view is built per character: NFKC (full-width digits, ligatures), accents dropped, format
characters (zero-width spaces and joiners, soft hyphens, bidi controls) dropped, Cyrillic and Greek
letters that look like Latin ones folded to those, and every run of white space made one space.
Then runs of single characters ("p a s s w o r d", "h.u.n.t.e.r") are joined, and runs of three or
more spelled-out digits (English, French, German, Spanish, Italian, Portuguese) become digits.
Case is kept: key shapes are case-sensitive.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

#: Cyrillic and Greek letters drawn like Latin ones (the confusables that matter for Latin words).
CONFUSABLES: dict[str, str] = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "і": "i", "ї": "i", "ј": "j", "к": "k", "м": "m",
    "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "һ": "h",
    "ӏ": "l", "ԛ": "q", "ԝ": "w",
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "І": "I", "Ј": "J", "К": "K", "М": "M", "Н": "H", "О": "O",
    "Р": "P", "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "Ԁ": "D", "Һ": "H", "Ԛ": "Q", "Ԝ": "W",
    # Greek
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "ω": "w", "γ": "y",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin look-alikes from other blocks
    "ı": "i", "ȷ": "j", "ℓ": "l", "ſ": "s",
}

_DIGIT_WORDS: dict[str, str] = {
    # English
    "zero": "0", "nought": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9",
    # French
    "un": "1", "une": "1", "deux": "2", "trois": "3", "quatre": "4", "cinq": "5",
    "sept": "7", "huit": "8", "neuf": "9",
    # German
    "null": "0", "eins": "1", "zwei": "2", "drei": "3", "vier": "4", "funf": "5", "sechs": "6",
    "sieben": "7", "acht": "8", "neun": "9",
    # Spanish, Italian, Portuguese
    "cero": "0", "uno": "1", "dos": "2", "tres": "3", "cuatro": "4", "cinco": "5", "seis": "6",
    "siete": "7", "ocho": "8", "nueve": "9", "tre": "3", "quattro": "4", "sei": "6", "sette": "7",
    "otto": "8", "nove": "9", "um": "1", "dois": "2", "quatro": "4", "sete": "7", "oito": "8",
}
_DIGIT_WORD = "|".join(sorted(_DIGIT_WORDS, key=len, reverse=True))
_DIGIT_RUN = re.compile(rf"(?<!\w)(?:{_DIGIT_WORD})(?:[ ,-]+(?:{_DIGIT_WORD})){{2,}}(?!\w)", re.IGNORECASE)
# single characters with one separator between them, four or more: "p a s s w o r d", "h.u.n.t.e.r"
_SPACED = re.compile(r"(?<![\w.*_-])\w(?P<sep>[ ._*-])\w(?:(?P=sep)\w){2,}(?![\w*_-])")


@dataclass(frozen=True)
class View:
    """A normalised text and, for each of its characters, the index in the original it came from."""

    text: str
    origin: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the view's `[start, end)`."""
        return self.origin[start], self.origin[end - 1] + 1

    def sub(self, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str]) -> View:
        """The view with each match replaced; a replacement's characters map onto the match's."""
        out: list[str] = []
        origin: list[int] = []
        last = 0
        for m in pattern.finditer(self.text):
            new = repl(m)
            out.append(self.text[last:m.start()])
            origin.extend(self.origin[last:m.start()])
            width = m.end() - m.start()
            for k in range(len(new)):
                at = m.start() + (round(k * (width - 1) / (len(new) - 1)) if len(new) > 1 else 0)
                origin.append(self.origin[at])
            out.append(new)
            last = m.end()
        out.append(self.text[last:])
        origin.extend(self.origin[last:])
        return View("".join(out), tuple(origin))

    def without_spaces(self) -> View:
        """The view with every space removed: a key split by spaces reads whole again."""
        keep = [i for i, ch in enumerate(self.text) if ch != " "]
        return View("".join(self.text[i] for i in keep), tuple(self.origin[i] for i in keep))


def fold_char(ch: str) -> str:
    """One character in normal form: NFKC, accents dropped, Cyrillic/Greek look-alikes folded."""
    n = unicodedata.normalize("NFKC", ch)
    n = "".join(c for c in unicodedata.normalize("NFKD", n) if not unicodedata.combining(c))
    return "".join(CONFUSABLES.get(c, c) for c in n)


def fold(text: str) -> str:
    """`text` in normal form, character for character (see `view` for the whole treatment)."""
    return "".join(fold_char(c) for c in text)


def view(text: str) -> View:
    """The view of `text` that the secret and instruction checks match (see the module doc)."""
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch) == "Cf":  # zero-width spaces and joiners, soft hyphens, bidi marks
            continue
        for c in fold_char(ch):
            if c.isspace():
                if not chars or chars[-1] == " ":
                    continue
                c = " "
            chars.append(c)
            origin.append(i)
    v = View("".join(chars), tuple(origin))
    v = v.sub(_SPACED, _join_spaced)
    return v.sub(_DIGIT_RUN, lambda m: "".join(_DIGIT_WORDS[w.lower()] for w in re.findall(r"\w+", m.group())))


def _join_spaced(m: re.Match[str]) -> str:
    # digits with dots between them are a version or an address, not a spaced-out word
    if m.group("sep") != " " and not re.search(r"[^\W\d]", m.group()):
        return m.group()
    return m.group().replace(m.group("sep"), "")


__all__ = ["CONFUSABLES", "View", "fold", "fold_char", "view"]
