"""Deterministic secret detection: what must never be stored, whatever a model says.

A model's "holds a secret" probability is a useful second net, but a card number that passes the
Luhn check, a key with a vendor's prefix, a social security number or "my password is ..." is
certain enough to decide in code, before any model is asked — and then the text never reaches a
judge, a log or a store.

Every check matches the normal form of the text (`seams.normalise`: Unicode folded, Cyrillic and
Greek look-alikes made Latin, white space and spaced-out letters joined, spelled-out digits made
digits), and key shapes are also matched with all spaces removed, so "pаssword" with a Cyrillic
`а`, a card number with two spaces between its groups and a JWT split by spaces are found as
surely as the plain forms. Findings are spans of the original text.

Two shapes come from their standards rather than from any set: a wallet seed phrase (12 or more
words in a row from the BIP-39 English list, which ships as package data, or 6 or more in a text
about a wallet), and a card's security code named in words beside its value ("the three digits on
the back are 4 1 7"); an expiry date beside a card is redacted.

A finding is `certain` when its shape is never anything else; a credential word followed by
something that may or may not be the credential ("the password is the name of my first dog") is
found with `certain=False`: `find_secrets(text, possible=True)` returns those too, and the memory
gate holds such a text for review with the span redacted rather than store it (fail closed).
Each finding names its kind and where it is, never the secret itself.

Government ids are found after their word in many languages and scripts (passport, Personalausweis,
dowód osobisty, NIE, pasaporte, codice fiscale, rodné číslo, fødselsnummer, TC kimlik, kitambulisho,
паспорт, ИНН, आधार, شناختی کارڈ, کد ملی, תעודת זהות, ...; `_NATIONAL_STEMS`): digits in groups, or
letters and digits mixed in upper case ("C4X82M19K", "CA 48213 PB"); an Italian codice fiscale by its
own shape. The words that make a text about a credential, and so its value-like words possible
secrets, are read in many languages and scripts too (kód, kodas, riasztó, Tresor, caja fuerte, код,
κωδικός, কোড, 暗証番号, 도어락, ...; `_CONTEXT_WORDS_ABROAD` and its kin): a door code said in Hungarian is redacted as
surely as one said in English.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .normalise import View, fold, view


@dataclass(frozen=True)
class FlaggedSpan:
    """A span of text flagged by a deterministic detector (a secret, an instruction): its kind and
    character span, never the text itself. Not a lint `Finding` (a rule's verdict on code).

    `certain` is False for a value that may be a secret but may also be a description of one.
    """

    kind: str
    start: int
    end: int
    certain: bool = True


@dataclass(frozen=True)
class KeyFormat:
    """A credential shape that is never anything else: a vendor's key prefix, a key header."""

    kind: str  #: machine name, used as a `FlaggedSpan`'s kind
    label: str  #: the same in words, for messages ("a hard-coded AWS access key id")
    pattern: re.Pattern[str]


#: The one table of vendor key formats, shared by the memory gate and `seams lint`'s secret check.
KEY_FORMATS: tuple[KeyFormat, ...] = (
    KeyFormat("private_key", "private key",
              re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    KeyFormat("aws_access_key", "AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    KeyFormat("github_token", "GitHub token",
              re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    KeyFormat("gitlab_token", "GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    KeyFormat("slack_token", "Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    KeyFormat("slack_webhook", "Slack webhook URL",
              re.compile(r"hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]{12,}")),
    KeyFormat("google_api_key", "Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    KeyFormat("stripe_key", "Stripe key",
              re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b|\bwhsec_[0-9A-Za-z]{20,}\b")),  # pk_: publishable
    KeyFormat("openai_style_key", "API secret key", re.compile(r"\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{20,}\b")),
    KeyFormat("huggingface_token", "Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    KeyFormat("npm_token", "npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    KeyFormat("sendgrid_key", "SendGrid key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}")),
    KeyFormat("jwt", "JSON web token",
              re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    KeyFormat("bearer_token", "bearer token", re.compile(r"\b[Bb]earer\s+[A-Za-z0-9_\-.=+/]{20,}")),
    KeyFormat("url_password", "password in a URL", re.compile(
        r"\b[a-z][a-z0-9+.-]*://[^/\s:@\"'{}$<>]*:(?!(?i:password|passwd|pass|pwd|secret|your[-_]?password)@|\*+@|\$)"
        r"[^/\s@\"'{}<>]{4,}@")),
)
#: The formats that start with a fixed prefix, matched again with the spaces removed (a key split by
#: spaces); the others would join ordinary words into false finds.
_PREFIXED = {"aws_access_key", "github_token", "gitlab_token", "slack_token", "google_api_key",
             "stripe_key", "huggingface_token", "npm_token", "jwt"}

# ---------------------------------------------------------------------------------------------
# numbers: cards, national ids, bank accounts
# ---------------------------------------------------------------------------------------------

# 13–19 digits, groups split by up to two spaces, dashes, dots, slashes or underscores.
_CARD = re.compile(r"(?<![\w.-])(?:\d[ ._/-]{0,2}){12,18}\d(?![\w-])")
_CARD_WORD = re.compile(r"(?i)\b(?:card|cards|visa|mastercard|master card|amex|american express|discover|"
                        r"credit|debit|cc|tarjeta|carte|karte|kreditkarte|cartao|carta|kaart)\b")
#: An identifier of something else written just before a number ("order no. 1234 …", "IMEI …").
_OTHER_ID = re.compile(r"(?i)\b(?:order|invoice|tracking|shipment|parcel|package|imei|serial|sku|part|model|"
                       r"ticket|case|booking|confirmation|reservation|reference|ref|policy|account|room|flight|"
                       r"isbn|ean|upc|batch|lot)s?\b(?:\s*(?:number|no\.?|num|id|#|:))*\s*#?\s*$")
_SHIPPED = re.compile(r"(?i)\b(?:tracking|parcel|shipment|courier|consignment|rastreio|rastreamento|seguimiento|"
                      r"suivi|sendungsnummer|przesyłki)\b")
#: A code word that names a parcel's number: "código de rastreio", "code de suivi".
_TRACKING = re.compile(r"(?i)\w+\s+(?:de\s+|do\s+|da\s+|du\s+|of\s+)?(?:rastreio|rastreamento|seguimiento|suivi|tracking)\b")
_SSN = re.compile(r"(?<![\w-])(?!000|666|9\d\d)(\d{3})([- ])(?!00)\d{2}\2(?!0000)\d{4}(?![\w-])")
_NINO = re.compile(r"\b(?![DFIQUV])[A-Z](?![DFIOQUV])[A-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b")
_CPF = re.compile(r"(?<![\d.])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\d-])")
_DNI = re.compile(r"\b(\d{8})-?([A-Z])\b")
_NATIONAL_WORD = (
    r"ssn|social security(?: number| no\.?| #)?|social insurance number|national insurance(?: number| no\.?)?|"
    r"ni number|nino|passport(?: number| no\.?| #)?|aadhaar|aadhar|cpf|dni|nif|codice fiscale|"
    r"steuer-?id|steueridentifikationsnummer|sozialversicherungsnummer|personnummer|personnr|bsn|"
    r"burgerservicenummer|pesel|tax id|tax number|tax reference|utr|unique taxpayer reference|itin|"
    r"driver(?:'|’)?s licen[cs]e(?: number| no\.?)?|numero de securite sociale|numero de seguridad social|"
    r"securite sociale|seguridad social|"
    # short national acronyms, matched whole: Croatia, Romania, Serbia/Bosnia, Slovenia, Greece,
    # Denmark, Pakistan, Malaysia/Singapore, Vietnam, Mexico, Malaysia
    r"oib|cnp|jmbg|emso|afm|amka|cpr|cnic|nric|mykad|cccd|cmnd|curp|pan card|pan number|pan no\.?"
)
#: Acronyms that are also ordinary words in lower case (Polish "nie", English "tin"): upper case only.
_NATIONAL_UPPER = r"NIE|NIK|KTP|TIN|RG|CNH|NIP|TAJ"
#: Id words in other languages and scripts, matched as stems so that inflected and compound forms
#: count too ("Fødselsnummeret", "dowodu osobistego", "kimlik numaram", "Personalausweisnummer").
#: Folded like the text (`word_alternation`), so Cyrillic and Greek are written as they are spelled.
_NATIONAL_STEMS = (
    # English
    "driving licence", "driving license", "driver licence", "driver license", "national id", "identity card",
    "identity number", "id card number", "tax file number", "voter id",
    # German, Dutch
    "personalausweis", "ausweisnummer", "reisepass", "passnummer", "steuernummer", "führerschein",
    "identitätskarte", "paspoort", "identiteitskaart", "rijbewijs", "sofinummer",
    # French, Spanish, Catalan, Italian, Portuguese
    "passeport", "carte d'identité", "carte nationale d'identité", "numéro fiscal", "permis de conduire",
    "pasaporte", "documento de identidad", "documento nacional de identidad", "cédula", "carnet de conducir",
    "licencia de conducir", "número de identificación fiscal", "passaporto", "carta d'identità",
    "carta di identità", "patente di guida", "tessera sanitaria", "passaporte", "cartão de cidadão",
    "bilhete de identidade", "número de contribuinte", "carta de condução", "carteira de identidade",
    "carteira de motorista",
    # Nordic, Baltic, Finnish
    "fødselsnummer", "cpr-nummer", "personnummer", "henkilötunnus", "körkort", "kørekort", "førerkort",
    "asmens kodas", "isikukood", "personas kods",
    # Polish, Czech, Slovak, Hungarian, Romanian, South Slavic
    "dowód osobist", "dowodu osobist", "dowodem osobist", "paszport", "prawo jazdy", "numer pesel",
    "rodné číslo", "rodného čísla", "občanský průkaz", "občanského průkazu", "občiansky preukaz",
    "cestovní pas", "személyi igazolvány", "személyi szám", "adóazonosító", "taj szám", "cod numeric personal",
    "carte de identitate", "pașaport", "osobna iskaznica", "osobne iskaznice", "lična karta", "licna karta",
    "putovnica", "putovnice", "matični broj",
    # Greek, Turkish
    "ταυτότητα", "ταυτότητας", "διαβατήριο", "διαβατηρίου", "kimlik", "pasaport", "vergi numara", "vergi no",
    "ehliyet",
    # Russian, Ukrainian, Serbian, Bulgarian (Cyrillic)
    "паспорт", "инн", "снилс", "водительское удостоверение", "водительского удостоверения",
    "удостоверение личности", "ідентифікаційний код", "ідентифікаційний номер", "іпн", "рнокпп",
    "посвідчення водія", "јмбг", "егн", "лична карта", "личне карте",
    # Hindi, Urdu, Persian, Arabic, Hebrew
    "आधार", "पैन कार्ड", "पैन नंबर", "पासपोर्ट", "मतदाता पहचान", "वोटर आईडी",
    "شناختی کارڈ", "قومی شناختی", "پاسپورٹ", "کد ملی", "کارت ملی", "شماره ملی", "گذرنامه", "رقم الهوية",
    "بطاقة الهوية", "جواز السفر", "الرقم القومي", "תעודת זהות", "תעודת הזהות", "מספר זהות", "ת.ז", "דרכון",
    # Swahili, Malay/Indonesian, Filipino, Vietnamese
    "kitambulisho", "kad pengenalan", "nomor induk kependudukan", "paspor", "philsys", "căn cước", "hộ chiếu",
    # Chinese, Japanese, Korean
    "身份证", "护照", "マイナンバー", "旅券", "パスポート", "주민등록번호", "여권",
)


def word_alternation(words: tuple[str, ...]) -> str:
    """A regex alternation of `words` as the checks see them (`fold`: accents dropped, look-alike
    letters made Latin), each in lower, capitalised and upper case — Greek and Cyrillic letters fold
    differently by case — longest first, a space matching any run of spaces."""
    forms = {fold(f) for w in words for f in (w, w.lower(), w.capitalize(), w.upper())}
    return "|".join(re.escape(f).replace(r"\ ", r"\s+") for f in sorted(forms, key=lambda f: (-len(f), f)))


#: An id given after its word: digits (in any script) in groups, at most three letters before
#: ("AB 123456 C"); or, upper case only, letters and digits mixed ("C4X82M19K", "CA 48213 PB").
_ID_VALUE = (r"(?P<value>[A-Z]{0,3}[\d][\d .\-/]{3,18}(?-i:[\dA-Z])"
             r"|(?<![A-Za-z0-9])(?-i:(?=[A-Z]{0,3}[ -]?[A-Z0-9]*\d)[A-Z0-9]{1,20}(?:[ -][A-Z0-9]{1,10}){0,2})(?!\w))"
             r"(?![\d])")
_NATIONAL = re.compile(
    rf"(?i)(?:(?:\b|(?<=\W))(?:{_NATIONAL_WORD})\b|(?<!\w)(?:{word_alternation(_NATIONAL_STEMS)})[^\W\d_]*"
    rf"|\b(?-i:{_NATIONAL_UPPER})\b)(?P<gap>[^\d\n]{{0,40}}?){_ID_VALUE}")
#: A word in the gap that names another number: the value is that number ("Steuernummer-Anfrage
#: läuft, Aktenzeichen 27/114/0093": a file reference), not the id.
_ANOTHER_NUMBER = re.compile(r"(?i)\b(?:aktenzeichen|az|reference|ref|order|invoice|case|ticket|file|dossier|"
                             r"expediente|pratica|booking|claim|tracking|bestellnummer|rechnungsnummer|"
                             r"kundennummer|vorgangsnummer|referen\w*|phone|telefon\w*|tel)\b")
#: An Italian codice fiscale: six letters (surname, name), birth year, month letter, day, place, check letter.
_CODICE_FISCALE = re.compile(r"\b[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z]\b")
_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")
_SIN_UPPER = re.compile(r"\bSIN\b[^\d\n]{0,30}?(?P<value>\d{3}[ -]?\d{3}[ -]?\d{3})\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
#: An IBAN introduced as one is an account number whether or not its check digits hold.
_IBAN_SAID = re.compile(r"(?i)\biban\b[^\n]{0,40}?(?:\bis\s+|:\s*)(?P<value>[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{2,4}){2,8})")
_BANK = re.compile(r"(?i)\b(?:account number|account no\.?|acct(?: no\.?)?|routing number|sort code|iban|"
                   r"bank account|numero de cuenta|kontonummer)\b[^\d\n]{0,25}?(?P<value>\d[\d \-]{4,30}\d)")

# ---------------------------------------------------------------------------------------------
# credentials given in words
# ---------------------------------------------------------------------------------------------

#: Words that name a password, in several languages (matched folded: "contraseña" as "contrasena").
_PASSWORD_WORDS = (
    "password", "passwort", "passwd", "pass word", "pwd", "pw", "passcode", "pass code", "passphrase",
    "pass phrase", "kennwort", "mot de passe", "mdp", "contraseña", "clave", "senha", "wachtwoord",
    "lösenord", "passord", "adgangskode", "salasana", "hasło", "haslo", "şifre", "şifrem", "sifre",
    "parola", "parola d'ordine", "пароль", "κωδικός", "密码", "密碼", "パスワード", "비밀번호",
    "recovery phrase", "seed phrase", "mnemonic", "wifi key", "wi-fi key", "network key", "wpa key",
    "pswd", "pazzword", "passwrd", "p/w", "login", "log-in", "sign-in", "unlock phrase", "unlock code",
    "memorable word", "memorable information", "memorable place", "security word", "security answer", "secret word",
    "code word", "safe word", "broadband key", "router key", "psk", "lösenordet", "wallet phrase", "recovery words",
)
#: Words that name a numeric code: the value must hold digits.
_CODE_WORDS = (
    "pin", "pin code", "pin number", "pincode", "code pin", "puk", "cvv", "cvc", "cvv2", "csc",
    "security code", "access code", "door code", "alarm code", "gate code", "lock code", "safe code",
    "garage code", "entry code", "entrance code", "keypad code", "verification code", "one-time code",
    "otp", "2fa code", "mfa code", "recovery code", "backup code", "login code", "unlock code",
    "combination", "code secret", "código", "geheimzahl", "codice",
)
#: Words that name a key or token: the value must look like one (digits or symbols in it).
_TOKEN_WORDS = ("api key", "api-key", "apikey", "api token", "secret key", "access key", "access token",
                "auth token", "token", "secret", "private key", "client secret", "credentials")


def _alternation(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(fold(w)).replace(r"\ ", r"[ -]?") for w in sorted(words, key=len, reverse=True))


_COPULA = fold(r"(?:\s*(?:is|was|are|is now|is still|is set to|will be|->|=>|-+>|→|➜|⇒|-|–|—|ist|lautet|est|es|é|e|è|era|är|"
           r"er|jest)(?=[\s\"'`]|$)|\s*(?:是|为|は|는|은)|\s*[:=])\s*")
_QUALIFIER = fold(r"(?:\s+(?:for|to|of|on|at|in|from|into|de|du|des|d'|pour|fur|furs|fürs|zum|zur|für|del|para|da|do|di|van|till|"
              r"til|для|от|на)(?:\s+[^\s.,;:!?=()]+(?![^\s.,;:!?=()])){1,6}?(?:\s*\([^)]{1,40}\))?)?")
# whole words ("his" is no "h" + "is"), then maybe a remark in brackets: "the passphrase for the
# old laptop (two words): ...", "the password of the kids tablet parental controls: ..."
_CRED_WORD = (rf"(?i)(?<![A-Za-z0-9])(?P<what>{_alternation(_PASSWORD_WORDS)}|{_alternation(_CODE_WORDS)}|"
              rf"{_alternation(_TOKEN_WORDS)})(?:s|e|en)?(?![A-Za-z])")
_CRED_WORD_RE = re.compile(_CRED_WORD)
#: A credential word, what it is for, a copula or a colon, and what follows: "the passcode to the
#: office door is 7391", "mot de passe : soleil2024".
_CRED = re.compile(rf"{_CRED_WORD}(?:\s*\((?:[^)]{{1,30}})\))?{_QUALIFIER}(?P<sep>{_COPULA})(?P<rest>.{{0,120}})")
#: A credential word and a value straight after it ("pw Tr0ub4dor&3"): only a strong value counts.
_CRED_BARE = re.compile(rf"{_CRED_WORD}(?P<sep>\s+)(?P<rest>.{{0,120}})")
# "I set my master password to seven crooked bridges": "to" is the copula after a verb of setting
# (checked before the credential word in `find_secrets`; a global (?i) must lead the pattern)
_CRED_SET = re.compile(rf"{_CRED_WORD}{_QUALIFIER}(?P<sep>\s+(?:to|into)\s+)(?P<rest>.{{0,120}})")
_SET_VERB = re.compile(r"(?i)\b(?:set|sets|setting|changed?|changes|changing|reset|resets|updated?|switched)\b[^.;!?\n]{0,40}$")
# "hunter2 is my password", "use Tr0ub4dor&3 as the password"
_CRED_BEFORE = re.compile(
    rf"(?i)(?P<value>[^\s\"'`]{{3,}})[\"'`]?\s+(?:is|was|as)\s+(?:my|the|our|his|her|their|your)\s+"
    rf"(?:[\w-]+\s+){{0,2}}(?:{_alternation(_PASSWORD_WORDS)}|{_alternation(_CODE_WORDS)})\b"
    r"(?!\s*(?:manager|policy|policies|reset|rules|requirements|hint|field|prompt|screen|page|form|app))")
# name = value, in code, configuration and connection strings: DB_PASSWORD=..., "client_secret": "..."
# (at most 64 characters of the name before its credential word: unbounded, a long run of dotted
# digits made the search quadratic; bench/memory_code_scan_cost.py)
_ASSIGNED = re.compile(
    r"(?i)(?P<name>\b[\w.-]{0,64}(?:password|passwd|pwd|secret|token|api_?key|apikey|access_?key|private_?key|"
    r"credential|auth_?token|authorization)[\w.-]*)[\"']?\s*(?::|=|=>)\s*[\"']?(?P<value>[^\s\"',;}]{6,})")

_CLAUSE_END = re.compile(r"[.;!?,)](?:\s|$)|\s(?:and|but|so|or|because|which|though|although|while|since|if|"
                         r"when|then|until|unless|et|und|y|e|mais|aber|pero)\s", re.IGNORECASE)
_UNITS = {"characters", "character", "chars", "char", "digits", "digit", "letters", "letter", "long", "days",
          "day", "weeks", "week", "months", "month", "years", "year", "hours", "hour", "minutes", "times",
          "symbols", "numbers", "words", "attempts", "tries"}
_DETERMINERS = {"the", "a", "an", "my", "your", "his", "her", "our", "their", "its", "this", "that", "mein",
                "meine", "le", "la", "les", "el", "mi", "mon", "ma", "il", "o", "de", "het"}
#: Words that describe a credential rather than give it ("the password is required / on the sticker").
_DESCRIPTORS = {
    "required", "needed", "missing", "expired", "expiring", "expires", "wrong", "incorrect", "invalid", "valid",
    "correct", "right", "changed", "changing", "reset", "set", "stored", "saved", "kept", "written", "taped",
    "printed", "listed", "shown", "displayed", "managed", "shared", "sent", "emailed", "texted", "given",
    "provided", "available", "encrypted", "hashed", "hidden", "visible", "secure", "insecure", "safe",
    "unsafe", "strong", "weak", "long", "short", "easy", "hard", "difficult", "simple", "complex",
    "complicated", "forgotten", "lost", "known", "unknown", "blank", "empty", "default", "temporary", "new",
    "old", "same", "different", "private", "personal", "secret", "case-sensitive", "sensitive", "compromised",
    "leaked", "working", "broken", "ok", "okay", "fine", "good", "bad", "great", "too", "very", "quite",
    "really", "pretty", "also", "just", "only", "still", "no", "not", "never", "always", "usually",
    "generally", "being", "going", "about", "due", "now", "then", "again", "soon", "enough", "there", "here",
    "somewhere", "something", "nothing", "what", "which", "who", "whatever", "mandatory", "optional",
    "necessary", "locked", "rotated", "updated", "needs", "has", "had", "have", "was", "were", "will",
    "should", "must", "can", "could", "would", "may", "might", "does", "did", "do", "yet", "already",
    "on", "in", "at", "under", "behind", "inside", "near", "next", "with", "without", "by", "for", "from",
    "of", "to", "as", "like", "than", "into", "over", "protected", "handled",
    "asked", "requested", "checked", "verified", "accepted", "rejected", "disabled", "enabled", "active",
    "inactive", "configured", "generated", "random", "unique", "memorable", "impossible", "annoying",
    "identical", "similar", "based", "made", "composed", "stuck", "posted", "pinned", "noted",
    "recorded", "obvious", "predictable", "guessable", "public", "common", "typed", "entered", "case",
    "mine", "yours", "theirs", "hers", "his", "ours", "unchanged", "outdated", "current",
    "the", "a", "an", "my", "your", "her", "our", "their", "its", "this", "that", "these", "those",
    "nicht", "pas", "non", "kein", "obligatoire", "requis", "erforderlich", "requerida", "necesaria",
    "vergessen", "oublie", "olvidada", "trop", "court", "courte", "longue", "abgelaufen", "zu", "kurz",
    "lang", "obligatoria", "obligatorio", "corta", "corto", "larga", "incorrecta", "incorrecto", "falsch",
    "richtig", "faux", "demasiado", "muy", "sehr", "tres", "geheim", "segura", "seguro", "sicher", "change",
    "cambiada", "geandert", "expiree", "caducada", "vencida", "errada", "curta", "forte", "debole", "breve",
    "it", "he", "she", "they", "we", "i", "you", "below", "above", "attached", "following", "where", "how",
    "why", "whose",
    # where to get it, not what it is: "Password: ask Sanne"
    "ask", "see", "check", "call", "text",
    # how a secret is kept, not what it is: "my seed phrase is split across two safe deposit boxes"
    "split", "divided", "spread", "sealed", "locked away",
    # quantifiers: "my passwords are all at least 20 characters", "both are in the manager"
    "all", "both", "each", "every", "most", "some", "many", "few", "none", "least", "more", "less",
}
#: After a determiner, words that make the value a description ("the same as", "the name of my dog").
_HINTS = {"same", "name", "one", "usual", "default", "standard", "old", "new", "first", "last", "birthday",
          "date", "year", "number", "word", "thing", "reverse", "opposite", "combination",
          "initials", "street", "postcode", "anniversary", "nickname", "code", "pet", "dog", "cat", "wifi"}
#: A value that stands for one: a template slot ("{{temp_password}}", "${SMTP_PASSWORD}", cut
#: short or not), an elided key ("sk-..."), a read from the environment, a filler word.
_PLACEHOLDER = re.compile(r"(?i)^(?:\[[\w -]+\]|<[^>]*>|\$\{[^}]*\}?|\{\{[^}]*\}\}|\{[^}]*\}|\$\(.*|%\(\w+\)s|[*•●·∙⋅]+|_{2,}|"
                          r"x{3,}|[\w-]{0,8}(?:\.{3,}|…)|(?:os\.environ|os\.getenv|getenv|process\.env|env)\b.*|\$[A-Z_]{3,}|"
                          r"changeme|change_me|replace_?me|your[-_ ].*|none|null|todo|redacted|hidden|example|placeholder)$")
#: A template slot of several words, which `_words` would cut at its first space.
_SLOT = re.compile(r"\s*[\"'`]?(?:<[^<>\n]{1,60}>|\[[^\[\]\n]{1,60}\]|\{\{[^{}\n]{1,60}\}\})")
#: Punctuation that is no value: "password = …" read by `_CRED_BARE` as a word and a value.
_NO_VALUE = re.compile(r"[=:\-–—→➜⇒>|/~]+")
#: A password manager named in another language ("gestor de contraseñas es KeePassXC"): the
#: credential word names the tool, not a value.
_MANAGER_BEFORE = re.compile(r"(?i)\b(?:gestor|gestionnaire|gestore|administrador|gerenciador|beheerder|menedżer|"
                             r"manager)\s+(?:de|di|des|dei|delle|van|of|für|haseł)\s+$")


def _strong(value: str) -> bool:
    """A value shaped like a credential: digits, symbols inside, or capitals after the first letter."""
    inner = value[1:-1] if len(value) > 2 else value
    return bool(re.search(r"\d", value) or re.search(r"[^\w\s'-]", inner) or re.search(r"[a-z][A-Z]", value))


def _words(rest: str) -> list[tuple[int, int, str]]:
    """The words of `rest` up to the end of its clause, as (start, end, word) without quotes or
    trailing punctuation; at most eight."""
    m = _CLAUSE_END.search(rest)
    clause = rest[: m.start()] if m else rest
    out = []
    for w in re.finditer(r"\S+", clause):
        core = w.group().strip("\"'`“”‘’«»").rstrip(".,;:!?)")
        if core:
            start = w.start() + w.group().index(core[0])
            out.append((start, start + len(core), core))
    return out[:8]


def _credential(v: View, m: re.Match[str]) -> FlaggedSpan | None:
    """The value after a credential word, classified: certain, possible, or a description (None)."""
    what = m.group("what").lower()
    family = ("code" if re.fullmatch(_alternation(_CODE_WORDS), what, re.IGNORECASE)
              else "token" if re.fullmatch(_alternation(_TOKEN_WORDS), what, re.IGNORECASE) else "password")
    kind = "credential" if family == "token" else "password"
    if _SLOT.match(m.group("rest")) or _TRACKING.match(v.text[m.start():m.start("sep")]) or \
            re.search(r"(?i)\b(?:tracking|parcel|shipment)\s+$", v.text[max(0, m.start() - 20):m.start()]):
        return None  # "passord: <skriv inn ditt eget>"; "código de rastreio: NL…BR", a parcel's
    words = _words(m.group("rest"))
    while words and _NO_VALUE.fullmatch(words[0][2]):
        words = words[1:]  # "password = the one IT emails you": the sign is the copula, the value follows
    if not words:
        return None
    base = m.start("rest")
    s0, e0, w1 = words[0]
    low = w1.lower()
    spaced_sep = m.re is _CRED_BARE  # "password hunter2": no copula, only a space

    def found(start: int, end: int, certain: bool = True) -> FlaggedSpan:
        a, b = v.span(base + start, base + end)
        return FlaggedSpan(kind, a, b, certain)

    if _PLACEHOLDER.match(w1) or _MANAGER_BEFORE.search(v.text[max(0, m.start() - 30):m.start()]):
        return None
    if family == "code":
        if re.fullmatch(r"[\d -]{3,}|(?=\w*\d)\w{4,}", w1) and not (len(words) > 1 and words[1][2].lower() in _UNITS):
            digits = re.sub(r"\D", "", w1)
            return found(s0, e0) if len(digits) >= 3 else None
        return None
    if _strong(w1):
        if re.fullmatch(r"\d{1,2}", w1) or (len(words) > 1 and words[1][2].lower() in _UNITS):
            return None  # "12 characters long", "the PIN is 4 digits"
        return found(s0, e0)
    if family == "token" or spaced_sep:
        return None  # a key or token is never a plain word; without a copula, only a strong value counts
    if low in _DETERMINERS:
        rest = [w for _, _, w in words[1:]]
        if not rest or rest[0].lower() in _HINTS or all(w.lower() in _DESCRIPTORS for w in rest) or \
                _CRED_WORD_RE.fullmatch(rest[0]):
            return None  # ... or "change my password to a passphrase": a kind of secret, not one
        return found(s0, words[-1][1], certain=False)  # "the passphrase is the quick brown fox"
    if low in _DESCRIPTORS:
        rest = [w.lower() for _, _, w in words[1:]]
        if len(rest) >= 2 and not any(w in _DESCRIPTORS for w in rest):
            return found(s0, words[-1][1], certain=False)  # "correct horse battery staple"
        return None
    if low in _HINTS and not any(_strong(w) for _, _, w in words[1:]):
        return None  # "login is first initial plus surname": how it is made, not what it is
    # a plain word: the password itself ("swordfish"), or the first word of a passphrase; sure only
    # after an English copula or a colon (elsewhere the word lists above know too little), and
    # never after a plural ("reused passwords are dangerous": a plural names no one value)
    plural = v.text[m.end("what"):m.end("what") + 1].lower() == "s"
    english = not plural and re.fullmatch(r"\s*(?:is|was|are|is now|is still|is set to|will be|[:=]|->|=>)\s*", m.group("sep"), re.IGNORECASE)
    end = len(words)
    for i, (_, _, w) in enumerate(words[1:], start=1):
        if w.lower() in _DESCRIPTORS:
            end = i
            break
    return found(s0, words[end - 1][1], certain=bool(english))


#: Key material that is public by design, read around a long token: an SSH public key, a host
#: key's fingerprint, an age recipient, a Bitcoin receiving address, a Stripe publishable key.
_PUBLIC = re.compile(r"(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-\w+|sk-ssh-\w+)\s+AAAA|SHA256:\S*$|\bage1[a-z0-9]{50,}|"
                     r"\bbc1[a-z0-9]{25,}|\bpk_(?:live|test)_")
#: Before a long token, what makes it public: a PEM public key, a DKIM record's key, an id of a
#: shared document or video (read over the 60 characters before it).
_PUBLIC_BEFORE = re.compile(r"(?i)BEGIN (?:RSA |EC )?PUBLIC KEY|\bv=DKIM1\b|\bpublic key\b|\b(?:doc(?:ument)?|file|folder|"
                            r"sheet|spreadsheet|video|playlist|channel|calendar|form)\s+id\b")
# A long run of letters and digits mixed, like an unlabelled key.
_TOKEN = re.compile(r"\b[A-Za-z0-9_\-]{32,}\b")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[\d/+])"
                         r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


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


def _iban_ok(text: str) -> bool:
    s = text.replace(" ", "")
    s = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in s)) % 97 == 1


def _dni_ok(number: str, letter: str) -> bool:
    return "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23] == letter


def _entropy(s: str) -> float:
    counts = Counter(s)
    return -sum(c / len(s) * math.log2(c / len(s)) for c in counts.values())


def _id_value_ok(value: str) -> bool:
    """Whether a value after an id word is an id: five digits or more, or six characters or more
    mixing four digits with letters ("L8KX42T19"); not a date, not one repeated character."""
    digits = len(re.sub(r"\D", "", value))
    alnum = re.sub(r"\W", "", value)
    if _DATE.fullmatch(value) or len(set(alnum)) < 3:
        return False
    return digits >= 5 or (digits >= 4 and 6 <= len(alnum) <= 20 and alnum != re.sub(r"\D", "", alnum))


def _labelled_as_other(text: str, start: int) -> bool:
    """A number introduced as an order, tracking, room ... number, with no card word near it."""
    before = text[max(0, start - 40):start]
    return bool(_OTHER_ID.search(before)) and not _CARD_WORD.search(before)


def _numbers(v: View) -> list[FlaggedSpan]:
    t = v.text
    found: list[FlaggedSpan] = []

    def add(kind: str, start: int, end: int, certain: bool = True) -> None:
        found.append(FlaggedSpan(kind, *v.span(start, end), certain))

    for m in _CARD.finditer(t):
        digits = re.sub(r"\D", "", m.group())
        if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
            continue
        if len(set(re.findall(r"[ ._/-]", m.group()))) > 1 and re.match(r"\d{1,5}\.\d{2}\s", m.group()):
            continue  # "28.00 1184720932": a price, then a listing's id, not one number
        near_card = bool(_CARD_WORD.search(t[max(0, m.start() - 40):m.start()]))
        if near_card or (luhn_ok(digits) and digits[0] in "23456" and not _labelled_as_other(t, m.start())):
            add("card_number", m.start(), m.end())
    for m in _SSN.finditer(t):
        if not _labelled_as_other(t, m.start()) and not _SHIPPED.search(t[max(0, m.start() - 60):m.start()]):
            add("national_id", m.start(), m.end())
    for pattern in (_NINO, _CPF):
        for m in pattern.finditer(t):
            add("national_id", m.start(), m.end())
    for m in _DNI.finditer(t):
        if _dni_ok(m.group(1), m.group(2)):
            add("national_id", m.start(), m.end())
    for pattern in (_NATIONAL, _SIN_UPPER):
        for m in pattern.finditer(t):
            value = m.group("value").rstrip(" .-/")
            if _SHIPPED.search(t[max(0, m.start() - 40):m.start("value")]):
                continue  # "tracking for the passport renewal: RP…GB": a parcel's number
            if m.groupdict().get("gap") and _ANOTHER_NUMBER.search(m.group("gap")):
                continue
            if _id_value_ok(value):
                add("national_id", m.start("value"), m.start("value") + len(value))
    for m in _CODICE_FISCALE.finditer(t):
        add("national_id", m.start(), m.end())
    for m in _IBAN.finditer(t):
        if _iban_ok(m.group()):
            add("bank_account", m.start(), m.end())
    for m in _BANK.finditer(t):
        if len(set(re.sub(r"\D", "", m.group("value")))) > 1:  # "NLxx XXXX 0000 0000 00": a template's zeros
            add("bank_account", m.start("value"), m.end("value"))
    for m in _IBAN_SAID.finditer(t):
        add("bank_account", m.start("value"), m.end("value"))
    return found


@functools.cache
def _squeezed(fmt: KeyFormat) -> re.Pattern[str]:
    return re.compile(fmt.pattern.pattern.removeprefix(r"\b"))


def _keys(v: View) -> list[FlaggedSpan]:
    found: list[FlaggedSpan] = []
    squeezed = v.without_spaces()
    for fmt in KEY_FORMATS:
        for m in fmt.pattern.finditer(v.text):
            found.append(FlaggedSpan(fmt.kind, *v.span(m.start(), m.end())))
        if fmt.kind in _PREFIXED:  # the text run together: its word boundaries are gone too
            for m in _squeezed(fmt).finditer(squeezed.text):
                if re.search(r"\d", m.group()):  # a key has digits; words run together ("sk_live_ prefixes") do not
                    found.append(FlaggedSpan(fmt.kind, *squeezed.span(m.start(), m.end())))
    for m in _AWS_SECRET.finditer(v.text):
        if re.search(r"(?i)aws|secret|amazon", v.text[max(0, m.start() - 60):m.start()]):
            found.append(FlaggedSpan("aws_secret_key", *v.span(m.start(), m.end())))
    for m in _ASSIGNED.finditer(v.text):
        name, value = m.group("name").lower(), m.group("value")
        if not _strong(value) and not (re.search(r"pass|pwd", name) and len(value) >= 6):
            continue
        if _PLACEHOLDER.match(value) or _SLOT.match(v.text, m.start("value")) or value.lower() in _DESCRIPTORS or re.search(
                r"(name|field|header|env|var|path|file|url|uri|prefix|type|kind|label|id|len|length|pattern|ref|"
                r"change|changed|reset|set|updated|created|expires|expiry|expiration|date|time|at|age|policy|hint|"
                r"enabled|required|count|attempts)$", name):
            continue
        kind = "aws_secret_key" if "aws" in name and "secret" in name else \
            "password" if re.search(r"pass|pwd", name) else "credential"
        found.append(FlaggedSpan(kind, *v.span(m.start("value"), m.end("value"))))
    return found


# ---------------------------------------------------------------------------------------------
# values that may be secrets: redacted, never held (issue 30)
# ---------------------------------------------------------------------------------------------

#: The English words that make a text about a credential (with a few for "password" abroad).
_CONTEXT_ENGLISH = fold(
    r"(?i)\b(?:pass(?!port)\w*|pwd|pw|p/w|pswd|pazzword|login|log-?in|sign-?in|logs?\s+in\w*|unlock\w*|pin|pins|"
    r"(?<!zip )(?<!error )(?<!postal )(?<!post )(?<!area )(?<!dress )(?<!morse )(?<!source )(?<!qr )(?<!bar )"
    r"(?<!promo )(?<!discount )(?<!voucher )(?<!coupon )(?<!sort )(?<!status )(?<!country )(?<!tax )(?:code|codes)|"
    r"passcode|keypad|padlock|lockbox|lock\s?box|key\s?safe|combination|combo|alarm|otp|one-time|verification|"
    r"authenticator|2fa|two-factor|totp|backup|recovery|seed|wallet|mnemonic|secret|token|api|key|keys|cvv\w*|cvc|csc|"
    r"card|visa|amex|mastercard|expiry|memorable|security|credentials?|username|user|wifi|wi-fi|wlan|network|"
    r"broadband|router|kennwort|passwort|mot de passe|contrasena|clave|senha|haslo|sifre\w*|lösenord\w*|"
    r"пароль|parola|wachtwoord|opens\s+with|gets\s+onto|types?|guard|p\s?i\s?n|first\s+pet|maiden\s+name|"
    r"security\s+question|favourite\s+teacher|sites?\s+i\s+use|everywhere)\b")
#: The same context in other languages: words for a code, a PIN, a password, an alarm, a safe, a
#: combination or a keypad lock, written from the languages' dictionaries (no labelled set), since
#: the English words alone left a door code said in Kazakh or Yoruba unredacted: on the twenty
#: training sets, 142 of the 315 door, alarm and safe codes code was not sure of kept their digits
#: after redaction, nearly all of them outside English (2026-12-07).
#: Matched folded (`word_alternation`: "kódu" is "kodu"). Whole words: forms an English word could
#: share a stem with.
_CONTEXT_WORDS_ABROAD = (
    # code
    "cod", "codi", "codul", "codului", "codice", "codici", "código", "códigos", "kodiċi", "kóòdù",
    "kodea", "kode", "koden", "kodi", "kodin", "kodo", "koda", "kodu", "kodun", "kodum",
    "kodem", "kodas", "kodai", "kods", "kód", "kódja", "kódot", "kódom", "kood", "koodi", "koodin",
    "koodiga", "kóði", "kóðinn", "digicode", "pinkod", "pinkode", "pin-kód", "pin-koodi", "pin-code",
    "pinkoodi", "msimbo", "sandi", "kata sandi", "kata laluan",
    # alarm, safe, combination, lock
    "alarme", "alarma", "allarme", "alarmu", "alarmy", "alarmen", "alarmet", "alarmanlage", "alarmcode",
    "alarmkod", "alarmkode", "larmkod", "larmet", "tresor", "tresorcode", "coffre", "coffre-fort", "cassaforte",
    "caja fuerte", "cofre", "kluis", "kassaskåp", "pengeskab", "sejf", "sejfu", "seif", "seifas", "seifo", "seifs",
    "széf", "széfet", "combinaison", "combinación", "combinazione", "combinação", "combinació", "combinatie",
    "kombination", "kombinasi", "kombinasie", "cadenas", "candado", "cadeado", "lucchetto", "cijferslot",
    "zahlenschloss", "türcode", "zugangscode", "deurcode", "toegangscode", "dørkode", "portkod", "portkoden",
    # password
    "contrasinal", "contrasenya", "cyfrinair", "pasfhocal", "pasahitza", "wagwoord", "nenosiri", "nywila",
    "parole", "parool", "parol", "geslo", "gesla", "heslo", "hesla", "heslem", "salasana", "tunnusluku",
    "passord", "adgangskode", "lykilorð", "jelszó", "jelszava", "jelszavam", "jelszót", "fjalëkalimi",
    "mật khẩu", "mã pin", "mã cửa", "mã khóa", "mã số bí mật", "mã báo động", "mã két", "mã otp", "mã xác nhận", "mã xác thực", "neno la siri", "namba ya siri", "nambari ya siri", "lambar sirri",
    "maxfiy so'z", "iphasiwedi",
)
#: Stems: inflected or compound forms count ("slaptažodžio", "lozinku", "kodot", "құпия сөзі").
_CONTEXT_STEMS_ABROAD = (
    "slaptažod", "lozink", "šifr", "hasł", "jelsz", "riaszt", "hälytys", "signalizacij", "signalizatsiya",
    "код", "парол", "лозинк", "сырсөз", "құпия сөз", "нууц үг", "сейф", "сигнализац", "пин",
    "κωδικ", "συνθηματικ", "συναγερμ", "χρηματοκιβ", "קוד", "הקוד", "סיסמ", "הסיסמ", "رمز", "الرمز",
    "كلمة المرور", "كلمة السر", "الرقم السري", "رقم سري", "کد", "گذرواژه", "پاس ورڈ", "کوڈ",
    "कोड", "पासवर्ड", "पिन", "কোড", "পাসওয়ার্ড", "পিন", "குறியீடு", "கடவுச்சொல்", "கோட்", "కోడ్",
    "పాస్వర్డ్", "పిన్", "കോഡ്", "പാസ്വേഡ്", "പിൻ", "කේත", "කෝඩ්", "මුරපද", "ಕೋಡ್", "ಪಾಸ್ವರ್ಡ್", "કોડ",
    "પાસવર્ડ", "ਕੋਡ", "ਪਾਸਵਰਡ", "ኮድ", "የይለፍ ቃል", "ፒን", "კოდ", "პაროლ", "կոդ", "գաղտնաբառ",
)
#: In scripts written without spaces between words: matched anywhere.
_CONTEXT_ANYWHERE_ABROAD = (
    "密码", "密碼", "暗码", "口令", "验证码", "驗證碼", "保险箱", "保險箱", "门禁", "暗証", "パスワード", "パスコード",
    "コード", "金庫", "認証", "ダイヤル", "비밀번호", "비번", "도어락", "금고", "인증번호", "인증 코드", "잠금",
    "รหัส", "ตู้เซฟ", "លេខកូដ", "ពាក្យសម្ងាត់",
)
#: Any word that makes a text about a credential, in any of those languages: its value-like words
#: are then redacted (`_possible`).
_CONTEXT = re.compile(
    rf"{_CONTEXT_ENGLISH}"
    rf"|(?<!\w)(?:{word_alternation(_CONTEXT_WORDS_ABROAD)})(?!\w)"
    rf"|(?<!\w)(?:{word_alternation(_CONTEXT_STEMS_ABROAD)})"
    rf"|{word_alternation(_CONTEXT_ANYWHERE_ABROAD)}")
_UNIT_AFTER = re.compile(r"(?i)^\s*(?:%|percent|characters?|chars?|digits?|letters?|days?|weeks?|months?|years?|"
                         r"hours?|hrs?|minutes?|mins?|seconds?|secs?|times|words?|attempts?|tries|people|kg|g|km|m|"
                         r"miles?|pm|am|gb|mb|tb)\b")
_MONEYISH = re.compile(r"[£$€¥]\s?$")
#: A word with letters and digits, or digits of three or more, or symbols inside: what a value looks like.
_VALUEISH = re.compile(r"(?<![\w@/.:-])(?=[\w!@#$%^&*+=?~.:/-]*\d)[\w!@#$%^&*+=?~.:/-]{3,}"
                       r"|(?<![\w.:-])\d{2,4}(?:[ -]\d{2,4}){1,7}(?![\w-])")
_QUOTED = re.compile(r"(?<!\w)['\"‘“«]([^'\"‘’“”«»\n]{3,80})['\"’”»](?!\w)")
_OPENS = re.compile(r"(?i)\b(?:opens?|unlocks?|(?:gets?|logs?|signs?)\s+(?:in(?:to)?|onto|on)\b[^.;!?\n]{0,40}?)\s+with:?\s+"
                    r"(?P<rest>[^.;!?\n—–]{3,80})")
#: A sign-in given as a pair: "priya.s / sunflower", "user jo_k pass daisy", "logs in as rajesh.k and bluebird".
_PAIR = re.compile(r"(?i)(?<![\w@./$£€-])(?=[\w.@+-]*[a-z])(?=[\w.@+-]*[._@\d])[\w.@+-]{3,40}(?:\s+/|,\s*(?:pass(?:word)?|pw|pwd)\s*:?|"
                   r"\s(?:pass(?:word)?|pw|pwd)\s*:?)\s+(?P<value>[^\s,;/|]{3,40})"
                   r"|\b(?:logs?|signs?|gets?)\s+(?:in|on|onto)\s+(?:\w+\s+){0,5}?as\s+\S+\s+(?:with|using|and|then|/)\s+"
                   r"(?P<value2>[^\s,;.]{3,40})")
_STRONG_TOKEN = re.compile(r"(?<![\w@/.:%-])[\w!@#$%^&*+=?~.:/-]{6,}(?![\w@/])")
_HEX = re.compile(r"(?<![\w-])(?:(?=[0-9]*[a-fA-F])[0-9a-fA-F]{20,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![\w-])")
_HEX_ID = re.compile(r"(?i)\b(?:commit|sha\w*|hash|checksum|digest|md5|request|trace|build|run|job|order|git|"
                     r"revision|rev|etag|uuid|guid|correlation|tracking|parcel|shipment|id|invoice|reference|ref)\b")
_SPELLED = re.compile(r"(?<![\w])(?:[\w#!@$%&*+=][ .\-_*\n]{1,2}){5,}[\w#!@$%&*+=](?![\w])")
_CONCAT = re.compile(r"(?:['\"][^'\"\n]{1,30}['\"]\s*\+\s*){2,}['\"][^'\"\n]{1,30}['\"]")
_SEED_CONTEXT = re.compile(r"(?i)\b(?:seed|recovery|wallet|mnemonic|ledger|trezor|metamask|bip-?39|"
                           r"(?:twelve|twenty-?four|12|24|six|other six)(?:-word)?\s+words)\b")
_WORD_RUN = re.compile(r"(?<![\w'])(?:[a-z]{3,9}\s+){5,}[a-z]{3,9}\b")
_DERIVED = re.compile(r"(?i)\b(?:maiden name|first (?:pet|car|school|street|house)|birth ?(?:year|day|date)|"
                      r"backwards|reversed|spelled backwards|plus|followed by|on the end|formula|first (?:three|two|four) "
                      r"letters|regiment number|badge number|old mobile|favourite (?:teacher|team|band|film)|"
                      r"name of (?:my|his|her|their|our)|(?:cat|dog|pet|horse|rabbit|hamster|parrot)'?s\s+name|street we lived|"
                      r"mother'?s|father'?s|memorable)\b")
_CAPWORD = re.compile(r"(?<=[\s,(:'\"])(?:Mrs?\.?\s|Ms\.?\s|Dr\.?\s)?[A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})?\b|\b[A-Z]{4,}\b|"
                      r"(?<=[\s,(:'\"])[A-Z][a-z]+[A-Z]\w*")  # and run together: "StAldhelms"
_BRANDS = {"1password", "2fa", "mp3", "mp4", "ps5", "ps4", "x86_64", "covid-19", "b2b", "b2c", "h2o", "co2", "4g",
           "5g", "ipv4", "ipv6", "3d", "gpt-4", "wi-fi", "usb-c", "o2", "win10", "win11", "e-mail", "7-eleven"}
_NOT_A_VALUE = re.compile(r"(?i)^(?:\d{1,2}[:.]\d{2}(?:[ap]m)?|\d{1,2}(?:st|nd|rd|th)|"
                          r"\d+(?:[.,]\d+)*(?:k|m|bn|%|x)?|v?\d+(?:\.\d+){1,3}|\d+(?:am|pm|kg|km|g|mb|gb|ml|cm|mm))$")
_URLISH = re.compile(r"(?i)^(?:https?://|www\.)|^[\w.+-]+@[\w-]+\.[a-z]{2,}|^[\w.-]+\.(?:com|org|net|io|co|uk|de|app|dev|me|biz|info)\b")


def _strong_token(tok: str) -> bool:
    """Letters and digits and capitals and small letters, or a symbol among letters and digits: a password's shape."""
    core = tok.strip(".,;:!?)(\"'`")
    if len(core) < 6 or core.lower() in _BRANDS or _URLISH.search(core) or "/" in core:
        return False
    if re.fullmatch(r"[0-9a-fA-F-]+", core):  # a hash or an id: `_HEX` decides it, by what is written before it
        return False
    has_l, has_u, has_d = bool(re.search(r"[a-z]", core)), bool(re.search(r"[A-Z]", core)), bool(re.search(r"\d", core))
    sym = bool(re.search(r"[!@#$%^&*+=?~]", core))
    if not (has_l or has_u) or not has_d:
        return sym and (has_l or has_u) and len(core) >= 8
    return (has_l and has_u) or sym or (len(core) >= 8 and re.search(r"[_.-]", core) is not None)


def _possible(v: View) -> list[FlaggedSpan]:
    """Values that may be secrets, found where a credential shows in the text (see `find_secrets`)."""
    t = v.text
    out: list[FlaggedSpan] = []

    def add(kind: str, start: int, end: int) -> None:
        if end > start:
            out.append(FlaggedSpan(kind, *v.span(start, end), certain=False))

    for m in _STRONG_TOKEN.finditer(t):
        core = m.group().rstrip(".,;:!?)'\"")
        if _strong_token(core) and not _labelled_as_other(t, m.start()):
            add("password", m.start(), m.start() + len(core))
    for m in _HEX.finditer(t):
        if not _HEX_ID.search(t[max(0, m.start() - 40):m.start()]):
            add("credential", m.start(), m.end())
    for m in _CONCAT.finditer(t):
        add("password", m.start(), m.end())
    if _CONTEXT.search(t):
        for m in _VALUEISH.finditer(t):
            tok = m.group().rstrip(".,;:!?)'\"-")
            if not tok or _URLISH.search(tok) or tok.lower() in _BRANDS:
                continue
            after, before = t[m.start() + len(tok):], t[max(0, m.start() - 2):m.start()]
            if _NOT_A_VALUE.match(tok) and (_UNIT_AFTER.match(after) or _MONEYISH.search(before)
                                            or not re.fullmatch(r"\d{3,}", tok)):
                continue
            if re.fullmatch(r"\d{1,2}", tok):
                continue
            add("password", m.start(), m.start() + len(tok))
        for m in _QUOTED.finditer(t):
            add("password", m.start(1), m.end(1))
        for m in _SPELLED.finditer(t):
            if re.search(r"\d", m.group()) or re.search(r"[a-z].*[A-Z]|[A-Z].*[a-z]", m.group()):
                add("password", m.start(), m.end())
        if _DERIVED.search(t):
            for m in _CAPWORD.finditer(t):
                if m.start() > 0:
                    add("password", m.start(), m.end())
        for m in _OPENS.finditer(t):
            add("password", m.start("rest"), m.start("rest") + len(m.group("rest").rstrip(" ,")))
    for m in _PAIR.finditer(t):  # a sign-in as a pair needs no credential word beside it
        g = "value" if m.group("value") is not None else "value2"
        value = m.group(g).rstrip(".!?)'\"")
        if not _URLISH.search(value) and value.lower() not in _DESCRIPTORS | _UNITS:
            add("password", m.start(g), m.start(g) + len(value))
    if _SEED_CONTEXT.search(t):
        for m in _WORD_RUN.finditer(t):
            add("seed_phrase", m.start(), m.end())
    return out


# ---------------------------------------------------------------------------------------------
# seed phrases and card security codes: shapes from their standards, not from any set (issue 30)
# ---------------------------------------------------------------------------------------------


@functools.cache
def bip39_words() -> frozenset[str]:
    """The BIP-39 English word list (2,048 words; `seams/data/bip39-english.txt`, MIT, see its LICENSE)."""
    path = Path(__file__).parent / "data" / "bip39-english.txt"
    return frozenset(path.read_text(encoding="ascii").split())


#: What may stand between two words of a written-out seed phrase: spaces, commas, dashes, line
#: breaks, list numbers ("1. abandon 2. ability") — anything but letters, eight characters at most.
_SEED_GAP = re.compile(r"[^A-Za-z]{1,8}")
#: Words that make a text about a wallet's seed (then a shorter run of list words is one).
_SEED_WORDS = re.compile(r"(?i)\b(?:seed|recovery|restore|backup|back-up|wallet|mnemonic|ledger|trezor|metamask|"
                         r"electrum|exodus|phantom|coinbase|bitcoin|btc|ethereum|eth|crypto\w*|bip-?39|"
                         r"secret\s+phrase|words?\s+phrase|\d{1,2}[- ]word|(?:twelve|eighteen|twenty[- ]?four|12|15|18|"
                         r"21|24|six|other six)(?:-word)?\s+words)\b")
#: A run of this many list words is a seed phrase, said or not (ordinary prose breaks a run within
#: eight: "the", "a", "and", "is", "my", "of", "to" are not on the list; a phrase has 12 to 24) ...
SEED_RUN_ALONE = 12
#: ... and this many in a text about a wallet or a seed (half a phrase, given in two parts).
SEED_RUN_SAID = 6


def _seed_runs(v: View) -> list[tuple[int, int, int]]:
    """Runs of BIP-39 words in the view's text: (start, end, how many words)."""
    words = bip39_words()
    runs: list[tuple[int, int, int]] = []
    start = end = count = 0
    for m in re.finditer(r"[A-Za-z]+", v.text):
        w = m.group().lower()
        if w in words and count and _SEED_GAP.fullmatch(v.text[end:m.start()]):
            end, count = m.end(), count + 1
            continue
        if count:
            runs.append((start, end, count))
        start, end, count = (m.start(), m.end(), 1) if w in words else (0, 0, 0)
    if count:
        runs.append((start, end, count))
    return runs


def _seed_phrases(v: View) -> list[FlaggedSpan]:
    """Written-out wallet seeds: 12 or more BIP-39 words in a row, or 6 or more in a text about a
    wallet or a seed. (A shorter run is left alone: prose has runs of three to five everywhere.)"""
    said = bool(_SEED_WORDS.search(v.text))
    return [FlaggedSpan("seed_phrase", *v.span(start, end)) for start, end, n in _seed_runs(v)
            if n >= SEED_RUN_ALONE or (said and n >= SEED_RUN_SAID)]


_CARD_NEAR = re.compile(r"(?i)\b(?:card|cards|visa|mastercard|master\s?card|maestro|amex|american express|discover|"
                        r"diners|jcb|unionpay|debit|credit|barclaycard|\w+card|"
                        # the word for a card in other languages (matched folded: "kártya" as "kartya")
                        r"kart|karta|karte|kaart|kort|kortet|carte|carta|tarjeta|cartao|kartya|kortti|karti|"
                        r"bankpas|pinpas|betaalpas|bankkaart|betaalkaart|creditkaart|bankkort|bankkarte|kreditkarte)\b")
#: What names a card's security code, in words: the code is then certain ("the three digits on the
#: back are 4 1 7", "the number on the signature strip: 460").
_CVV_SAID = re.compile(
    r"(?i)\b(?:cvv2?|cvc2?|csc|cvn|card\s+verification\s+(?:code|value|number)|signature\s+(?:strip|panel|box)|"
    r"(?:code|digits|numbers?)\s+on\s+(?:the\s+)?(?:back|reverse|rear)|back\s+of\s+(?:the|my|his|her|their)\s+"
    r"(?:\w+\s+)?card)\b")
#: The same in words that name it only beside a card ("the Amex's four-digit code is 2290").
_CVV_NEAR_CARD = re.compile(r"(?i)\b(?:security\s+(?:code|number|digits)|verification\s+(?:code|value|number)|"
                            r"(?:three|four|3|4)[- ]digits?(?:\s+(?:security\s+)?(?:code|number))?|"
                            r"guvenlik\s+kodu|codice\s+di\s+sicurezza|codigo\s+de\s+seguridad|codigo\s+de\s+seguranca|"
                            r"cryptogramme|code\s+de\s+securite|beveiligingscode|veiligheidscode|prufnummer|"
                            r"sicherheitscode|kod\s+zabezpieczajacy|sakerhetskod|kontrollsiffror)\b")
#: A card's security code after it: three or four digits, maybe spaced or dashed out ("8 3 1").
_CVV_VALUE = re.compile(r"(?<!\d)(?<!\d[/.,:-])(?:\d{3,4}|\d(?:[ -]\d){2,3})(?!\d|[/.,:-]\d|\s?(?:%|am|pm|kg|km|mph|ml|gb|mb)\b)")
#: A card's expiry date: MM/YY, MM/YYYY, MM-YY.
_EXPIRY = re.compile(r"(?<![\d/.-])(?:0[1-9]|1[0-2])\s?[/-]\s?(?:\d{2}|20\d{2})(?![\d/.-])")
_EXPIRY_SAID = re.compile(r"(?i)\b(?:exp(?:iry|ires|iring|iration)?|valid\s+(?:thru|through|until|till|to)|good\s+thru|"
                          r"end\s+date|scadenza|scade|son\s+kullanma|vervaldatum|geldig\s+tot|gultig\s+bis|ablauf\w*|"
                          r"vencimiento|validade|valable\s+jusqu|wazna\s+do|giltig\s+till|utgangsdato|udlobsdato|"
                          r"λ[ηn]ξ[ηn])\b")


def _card_codes(v: View) -> list[FlaggedSpan]:
    """A card's security code named in words (certain) and its expiry date (possible: redacted)."""
    t = v.text
    out = []
    said = [*_CVV_SAID.finditer(t), *(_CVV_NEAR_CARD.finditer(t) if _CARD_NEAR.search(t) else ())]
    for m in said:
        window = t[m.end():m.end() + 45]
        for n in _CVV_VALUE.finditer(window):
            if not re.search(r"[.;!?]\s", window[:n.start()]) and not re.fullmatch(r"(?:19|20)\d\d", n.group()):
                out.append(FlaggedSpan("card_security_code", *v.span(m.end() + n.start(), m.end() + n.end())))
                break
        else:  # "460 is the code on the back"
            before = t[max(0, m.start() - 25):m.start()]
            n = None
            for n in _CVV_VALUE.finditer(before):
                pass
            if n is not None and not re.search(r"[.;!?]\s", before[n.end():]):
                a = m.start() - len(before) + n.start()
                out.append(FlaggedSpan("card_security_code", *v.span(a, a + len(n.group()))))
    if _CARD_NEAR.search(t) or said:
        for m in _EXPIRY.finditer(t):
            if _EXPIRY_SAID.search(t[max(0, m.start() - 25):m.start()]) or said:
                out.append(FlaggedSpan("card_expiry", *v.span(m.start(), m.end()), certain=False))
    return out


def _every(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """Every match of a credential pattern, one per credential word: `finditer` would skip a word
    inside an earlier match's 120 characters ("the PIN is on the card, the password is sunshine")."""
    out, pos = [], 0
    while (m := pattern.search(text, pos)) is not None:
        out.append(m)
        pos = m.end("what")
    return out


def find_secrets(text: str, *, possible: bool = False) -> list[FlaggedSpan]:
    """Every card number, national id, bank account, vendor key, credential in words or key-like
    token in `text`, as spans of `text` (matched on its normal form, see the module doc).

    With `possible=True`, also the values after a credential word that may be the credential or a
    description of it (`FlaggedSpan.certain` False).
    """
    v = view(text)
    found = _numbers(v) + _keys(v) + _seed_phrases(v) + _card_codes(v)
    setting = [m for m in _every(_CRED_SET, v.text) if _SET_VERB.search(v.text[max(0, m.start() - 60):m.start()])]
    for m in [*_every(_CRED, v.text), *_every(_CRED_BARE, v.text), *setting]:
        f = _credential(v, m)
        if f is not None:
            found.append(f)
    for m in _CRED_BEFORE.finditer(v.text):
        value = m.group("value").strip("\"'`")
        if value.lower() not in _DESCRIPTORS and not _PLACEHOLDER.match(value):
            found.append(FlaggedSpan("password", *v.span(m.start("value"), m.start("value") + len(value)),
                                 certain=_strong(value)))
    for m in _TOKEN.finditer(v.text):
        tok = m.group()
        a, b = v.span(m.start(), m.end())
        if any(f.start <= a < f.end for f in found) or re.fullmatch(r"[0-9a-fA-F-]+", tok):
            continue  # inside another finding, or a hash or a commit id: an identifier, not a secret
        if _PUBLIC.search(v.text[max(0, m.start() - 24):m.end()]) or _PUBLIC_BEFORE.search(v.text[max(0, m.start() - 60):m.start()]):
            continue  # a public key, its fingerprint or a receiving address: published on purpose
        if re.search(r"[A-Za-z]", tok) and re.search(r"\d", tok) and _entropy(tok) >= 3.5:
            found.append(FlaggedSpan("token", a, b))
    if not possible:
        found = [f for f in found if f.certain]
    else:
        found += _possible(v)
        found += _logins(text, found)
    return _dedupe(found)


#: Words for a sign-in name, in several languages ("gebruiker sk-nacht", "kullanıcı kleisanne").
_USER_WORD = re.compile(r"(?i)\b(?:user(?:\s?name|\s?id)?|login(?:\s?name)?|account(?:\s?name)?|gebruiker(?:snaam)?|"
                        r"kullan[ıi]c[ıi](?:\s+ad[ıi])?|utente|nome\s+utente|benutzer(?:name)?|usuario|utilisateur|"
                        r"identifiant|anv[äa]ndar(?:e|namn)|brugernavn|brukernavn|u[żz]ytkownik|login\s?id|"
                        r"χρ[ήη]στης|όνομα\s+χρ[ήη]στη|ユーザー名?|ユーザーid)\s*[:=]?\s*(?P<login>[\w.@+-]{3,60})"
                        r"(?:\s+(?:en|and|und|e|y|ve|och|og|i)(?:\s+(?:dan|then|poi|dann|luego|sonra|sedan))?|"
                        r"(?:\s+(?:en|and|und|e|y|ve|och|og|i)\b[^.;!?\n]{0,20})?\s+(?:pass(?:word)?|pw|pwd|ww|[şs]ifre|"
                        r"parola|wachtwoord|passwort)(?:\s+(?:is|ist|è|e|es|är|er))?)?\s*[:=]?\s*$")
#: A sign-in name just before a password: "skaya01 Nachtuil#7", "admin -> ...", "shopstats with ...".
_LOGIN_BEFORE = re.compile(r"(?i)(?:^|(?<=[\s:>(|/,]))(?P<login>[\w.@+-]{3,60})(?P<sep>\s*(?:[:|+]|//?|->|→|=>)\s*|"
                           r"\s+(?:with|and|then|en dan|en|e|und|dann|y|ve|och|og|pass(?:word)?|pw|pwd|ww|"
                           r"[şs]ifre|parola|wachtwoord|passwort)\s*:?\s+|\s+)$")
_PAIR_SEP = re.compile(r"\s+(?:[:|+/]|//|->|→|=>)\s+|\s*(?://|->|→|=>)\s*")
_NOT_LOGINS = {"is", "are", "was", "ist", "es", "est", "är", "er", "e", "è", "é", "era", "jest", "now", "still", "set",
               "to", "for", "of", "on", "at", "in", "from", "be", "use", "with", "and", "then", "code", "key", "pin",
               "wifi", "wi-fi", "login", "user", "username", "password", "pass", "pw", "pwd", "it's", "its", "that's"}


def _logins(text: str, found: list[FlaggedSpan]) -> list[FlaggedSpan]:
    """The sign-in name given with a password found: a pair is one credential, and a password
    redacted beside its user name still leaves the name that a guess needs. Possible, never
    certain: redacted, not refused."""
    out = []
    for f in found:
        if f.kind not in ("password", "credential"):
            continue
        before = text[max(0, f.start - 80):f.start]
        m = _USER_WORD.search(before)
        if m is None:
            m = _LOGIN_BEFORE.search(before)
            if m is None or m.group("login").lower() in _NOT_LOGINS | _DETERMINERS or _CRED_WORD_RE.fullmatch(m.group("login")):
                continue
            login = m.group("login")
            # a plain word only before a pair's separator set off by spaces ("bellinihouse | ..."):
            # "word: value" is a label and "keys with ..." a clause; otherwise a name shaped as one
            # ("skaya01", "elif.bellini", an address)
            sep = m.group("sep")
            if not (_PAIR_SEP.fullmatch(sep) or re.search(r"[._@\d-]", login.strip(".-"))):
                continue
            if re.fullmatch(r"[\d.,:/-]+", login):  # a number, a date or a time: not a name
                continue
        a = f.start - len(before) + m.start("login")
        if not any(g.start <= a < g.end for g in found):
            out.append(FlaggedSpan("username", a, a + len(m.group("login")), certain=False))
    return out


_GENERIC = {"password", "credential", "token"}  # a vendor's or a number's own kind says more


def _dedupe(found: list[FlaggedSpan]) -> list[FlaggedSpan]:
    """One finding per span: a certain one over a possible one, the wider over the narrower."""
    found.sort(key=lambda f: (f.start, -f.end, not f.certain, f.kind in _GENERIC, f.kind))
    out: list[FlaggedSpan] = []
    for f in found:
        if out and out[-1].start <= f.start and f.end <= out[-1].end and (out[-1].certain or not f.certain):
            continue
        out.append(f)
    return out


def redact(text: str, findings: list[FlaggedSpan] | None = None) -> str:
    """`text` with every finding replaced by `[kind]` (overlapping findings merged into one)."""
    findings = find_secrets(text, possible=True) if findings is None else findings
    out, last = [], 0
    for f in sorted(findings, key=lambda f: (f.start, -f.end)):
        if f.start < last:  # overlaps the previous redaction: it grows to cover this one
            last = max(last, f.end)
            continue
        out += [text[last:f.start], f"[{f.kind}]"]
        last = f.end
    out.append(text[last:])
    return "".join(out)


_VALUE_LIKE = re.compile(r"\S*\d\S*|\S*[a-z][A-Z]\S*|\S+[^\w\s]\S+|\S{16,}")


def redact_values(text: str) -> str:
    """`text` with every secret code finds redacted and, to fail closed, every value-like word too
    (digits, symbols or inner capitals in it, or 16 characters and longer): what a held memory keeps
    when a model suspected a secret that code could not place."""
    spans = find_secrets(text, possible=True)
    spans += [FlaggedSpan("value", m.start(), m.end()) for m in _VALUE_LIKE.finditer(text)]
    v = view(text)
    for m in _CRED.finditer(v.text):  # and the rest of the clause after any credential word
        words = _words(m.group("rest"))
        if words:
            spans.append(FlaggedSpan("value", *v.span(m.start("rest") + words[0][0], m.start("rest") + words[-1][1])))
    return redact(text, spans)


__all__ = ["KEY_FORMATS", "FlaggedSpan", "KeyFormat", "find_secrets", "luhn_ok", "redact", "redact_values"]
