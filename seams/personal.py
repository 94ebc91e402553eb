"""Deterministic detection of personal data: what a memory may keep only when its owner chooses.

A phone number, an email address, a postal address or a date of birth is not a credential — it
opens nothing — but it identifies or locates a person, and a memory store is a file that is kept
for long, read back into prompts and sometimes sent to a remote model. So `MemoryGate` takes a
setting for it (`pii="admit" | "redact" | "hold"`, see `seams.builtin.memory`), and this module
finds it, in code, on the normal form of the text (`seams.normalise`), as spans of the original:

* `email` — `name@domain.tld`, and the spelled-out form "jane dot doe at gmail dot com";
* `phone` — a number with a leading `+` or `00` country code, the North American shapes
  `(415) 555-0132` / `415-555-0132`, or 7 to 15 digits in groups after a phone word
  (phone, mobile, cell, tel, call, text, WhatsApp, Telefon, téléphone, teléfono, ...);
* `address` — a house number and a street name ending in a street word ("221B Baker Street",
  "1600 Pennsylvania Ave NW", "Calle Mayor 5", "12 rue de Rivoli", "Hauptstraße 7"), the rest of
  the clause after "my address is" / "I live at", a UK postcode and a US "City, ST 12345" line;
* `date_of_birth` — a date after "born", "date of birth", "DOB" or "birthday";
* `id` — an employee, customer, member, patient, NHS or licence-plate number given with its word;
* `name` — a person's full name given as one ("my full name is …", "… is called …").

Health data (diagnoses, medications) is not found: no shape of it is certain enough for code.

Government ids, card and bank account numbers are secrets, not personal data: `seams.secrets`
finds them and the gate rejects them whatever the setting. Each finding names its kind and where
it is, never the value.
"""

from __future__ import annotations

import re

from .normalise import View, view
from .secrets import FlaggedSpan

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b")
_TLD = (r"(?:com|org|net|edu|gov|io|co|uk|de|fr|es|it|nl|be|ch|at|se|no|dk|fi|pl|pt|ie|eu|us|ca|au|nz|in|jp|"
        r"cn|br|mx|ru|me|info|biz|app|dev|email|mail)")
_DOT = r"\s*(?:\(dot\)|\[dot\]|\s(?:dot|punkt|point|punto)\s)\s*"
_EMAIL_SPOKEN = re.compile(
    rf"(?i)\b[a-z0-9][a-z0-9._-]*(?:{_DOT}[a-z0-9_-]+)*\s*(?:\(at\)|\[at\]|\s(?:at|arroba|chez)\s)\s*"
    rf"[a-z0-9-]+(?:{_DOT}[a-z0-9-]+)*{_DOT}{_TLD}\b")
_PHONE_WORD = (r"(?:phone|phones|telephone|tel|mobile|mob|cell|cellphone|landline|whatsapp|signal|telegram|"
               r"number|numbers|no\.?|call|ring|text|sms|reach|dial|fax|extension|ext|contact|line|"
               r"telefon|telefono|teléfono|telefone|téléphone|portable|handy|movil|móvil|cellulare|numero|"
               r"número|nummer|rufnummer)")
_PHONE_INTL = re.compile(r"(?<![\w+])(?:\+|00)\s?[1-9]\d{0,3}(?:[\s.()-]{0,2}\d){6,14}(?![\w-])")
_PHONE_NANP = re.compile(r"(?<![\w(])(?:\(\d{3}\)\s?|\d{3}[-.\s])\d{3}[-.\s]\d{4}(?![\w-])")
#: A national number with its trunk 0 in the UK and European shape: "020 7946 0123", "06 12 34 56 78".
_PHONE_TRUNK = re.compile(r"(?<![\w+.-])0\d{1,4}(?:[ -]?\d{2,4}){2,4}(?![\w.-])")
_OTHER_NUMBER = re.compile(r"(?i)\b(?:order|invoice|tracking|ref\w*|account|policy|serial|ticket|booking|case|"
                           r"model|part|flight|isbn|imei|sku)\b[^\d\n]{0,15}$")
_PHONE_NEAR = re.compile(rf"(?i)\b{_PHONE_WORD}\b[^\d\n]{{0,30}}?(?P<value>\(?\d[\d\s().-]{{5,20}}\d)(?![\w-])")
_STREET_WORD = (r"(?:street|st|avenue|ave|av|road|rd|lane|ln|drive|dr|boulevard|blvd|court|ct|place|pl|square|sq|"
                r"terrace|way|close|crescent|cres|parkway|pkwy|highway|hwy|alley|row|mews|gardens|grove|hill|walk|"
                r"circle|cir|trail|plaza)")
_ADDRESS = re.compile(
    rf"(?i)(?<![\w-])\d{{1,5}}[a-z]?(?:[-/]\d{{1,4}})?,?\s+(?:[a-z][\w'.-]*\s+){{0,4}}?{_STREET_WORD}\b\.?"
    rf"(?:\s+(?:n|s|e|w|ne|nw|se|sw)\b\.?)?(?:,?\s*(?:apt|apartment|flat|unit|suite|#)\.?\s*\w+)?")
_ADDRESS_FOREIGN = re.compile(
    r"(?i)\b(?:calle|avenida|av\.|plaza|paseo|carrer|rua|via|viale|piazza|corso|rue|avenue|boulevard|chemin|"
    r"place|allee)\s+(?:(?:de|del|de la|des|du|da|do|della|di|dei|la|le|les|l')\s*)?[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3}"
    r",?\s*(?:n[.o°º]?\s*)?\d{1,4}[a-z]?\b"
    r"|\b\d{1,4}[a-z]?,?\s+(?:rue|avenue|boulevard|bd|chemin|place|allee|impasse|quai)\s+(?:(?:de|du|des|de la|d')\s*)?"
    r"[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3}"
    r"|\b[a-z][\w-]*(?:strasse|straße|str\.|weg|gasse|platz|allee|ring|damm|ufer|laan|straat|gracht|plein|vej|gatan|gata|"
    r"veien|katu)\s+\d{1,4}[a-z]?\b")
_ADDRESS_SAID = re.compile(
    r"(?i)\b(?:my|our|his|her|their|the user'?s?|home|postal|mailing|shipping|billing|delivery|street)\s+address\s+"
    r"(?:is|was|is now|:|=|-)\s*(?P<value>[^.;!?\n]{6,100})"
    r"|\b(?:i|we|he|she|they|the user)\s+(?:live|lives|living|moved|stay|stays|reside|resides)\s+(?:now\s+)?(?:at|to)\s+"
    r"(?P<value2>\d[^.;!?\n]{4,100})")
_STREET_NAMED = re.compile(r"\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)?\s(?:Road|Street|Lane|Avenue|Close|Drive|Crescent|Terrace|"
                           r"Gardens|Grove|Mews|Way|Place|Square)\b")
#: A person's name given as one: "my full name is Margaret Eleanor Whitfield-Osei".
_NAME_SAID = re.compile(r"(?i:\bname\s+is\s+|\bcalled\s+|\bnamed\s+)(?P<value>[A-Z][\w'-]+(?:\s[A-Z][\w'-]+){1,3})")
_UK_POSTCODE = re.compile(r"\b(?:[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]?) ?\d[ABD-HJLNP-UW-Z]{2}\b")
_US_CITY_ZIP = re.compile(r"\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)*,\s*[A-Z]{2}\s+\d{5}(?:-\d{4})?\b")
_MONTHS = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
           r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|januar|februar|marz|mai|juni|juli|oktober|dezember|"
           r"janvier|fevrier|mars|avril|juin|juillet|aout|septembre|octobre|novembre|decembre|enero|febrero|marzo|"
           r"abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre)")
_DATE = (rf"(?:\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}|\d{{1,2}}[-/.]\d{{1,2}}[-/.]\d{{2,4}}|"
         rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\.?,?\s+\d{{4}}|{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|"
         rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?\b)")
_DOB = re.compile(
    rf"(?i)\b(?:born|date of birth|birth ?date|d\.?o\.?b\.?|birthday|geboren|geburtsdatum|ne le|nee le|"
    rf"date de naissance|nacido|nacida|fecha de nacimiento|nato il|nata il|data di nascita)\b[^\d\n]{{0,25}}?"
    rf"(?P<value>{_DATE})")
_ID_WORDS = (r"(?:employee|staff|customer|client|member|membership|patient|student|loyalty|frequent flyer|"
             r"nhs|medicare|medical record|insurance|policy holder|licen[cs]e plate|number plate|plate|"
             r"registration|vin)")
_ID = re.compile(rf"(?i)\b{_ID_WORDS}\s*(?:id|number|no\.?|num|#|card)?\b[^\w\n]{{0,12}}(?:is\s+|:\s*)?"
                 rf"(?P<value>(?=[A-Z0-9 -]*\d)[A-Z0-9][A-Z0-9 -]{{3,18}}[A-Z0-9])\b")


def _add(v: View, kind: str, start: int, end: int, out: list[FlaggedSpan]) -> None:
    if end > start:
        out.append(FlaggedSpan(kind, *v.span(start, end)))


def _trimmed(value: str) -> int:
    """The length of `value` without trailing spaces and punctuation."""
    return len(value.rstrip(" ,.;:!?)'\""))


def find_personal(text: str) -> list[FlaggedSpan]:
    """Every email address, phone number, postal address, date of birth and personal id number
    in `text` that code can be sure of (see the module doc), as spans of `text`, one per span."""
    v = view(text)
    t = v.text
    out: list[FlaggedSpan] = []
    for pattern in (_EMAIL, _EMAIL_SPOKEN):
        for m in pattern.finditer(t):
            _add(v, "email", m.start(), m.end(), out)
    for pattern in (_PHONE_INTL, _PHONE_NANP):
        for m in pattern.finditer(t):
            _add(v, "phone", m.start(), m.start() + _trimmed(m.group()), out)
    for m in _PHONE_TRUNK.finditer(t):
        if 10 <= len(re.sub(r"\D", "", m.group())) <= 11 and not _OTHER_NUMBER.search(t[max(0, m.start() - 30):m.start()]):
            _add(v, "phone", m.start(), m.start() + _trimmed(m.group()), out)
    for m in _PHONE_NEAR.finditer(t):
        value = m.group("value")
        digits = re.sub(r"\D", "", value)
        if 7 <= len(digits) <= 15 and not re.fullmatch(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}", value.strip()):
            _add(v, "phone", m.start("value"), m.start("value") + _trimmed(value), out)
    for m in _NAME_SAID.finditer(t):
        _add(v, "name", m.start("value"), m.start("value") + _trimmed(m.group("value")), out)
    for pattern in (_ADDRESS, _ADDRESS_FOREIGN, _STREET_NAMED, _UK_POSTCODE, _US_CITY_ZIP):
        for m in pattern.finditer(t):
            _add(v, "address", m.start(), m.start() + _trimmed(m.group()), out)
    for m in _ADDRESS_SAID.finditer(t):
        group = "value" if m.group("value") is not None else "value2"
        _add(v, "address", m.start(group), m.start(group) + _trimmed(m.group(group)), out)
    for m in _DOB.finditer(t):
        _add(v, "date_of_birth", m.start("value"), m.start("value") + _trimmed(m.group("value")), out)
    for m in _ID.finditer(t):
        _add(v, "id", m.start("value"), m.start("value") + _trimmed(m.group("value")), out)
    return _merged(out)


#: Which kind names a span two detectors found: the one whose word said more ("NHS number" over "number").
_PRIORITY = {"id": 0, "date_of_birth": 1, "email": 2, "address": 3, "phone": 4, "name": 5}


def _merged(found: list[FlaggedSpan]) -> list[FlaggedSpan]:
    """Overlapping findings merged into one, named for the widest (the more specific on a tie)."""
    out: list[FlaggedSpan] = []
    for f in sorted(found, key=lambda f: (f.start, -f.end, _PRIORITY[f.kind])):
        if out and f.start < out[-1].end:
            last = out[-1]
            if f.end > last.end:
                out[-1] = FlaggedSpan(last.kind, last.start, f.end)
            continue
        out.append(f)
    return out


__all__ = ["find_personal"]
