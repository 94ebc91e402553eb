"""Deterministic detection of personal data: what a memory may keep only when its owner chooses.

A phone number, an email address, a postal address or a date of birth is not a credential — it
opens nothing — but it identifies or locates a person, and a memory store is a file that is kept
for long, read back into prompts and sometimes sent to a remote model. So `MemoryGate` takes a
setting for it (`pii="admit" | "redact" | "hold"`, see `seams.builtin.memory`), and this module
finds it, in code, on the normal form of the text (`seams.normalise`), as spans of the original:

* `email` — `name@domain.tld`, and the spelled-out form "jane dot doe at gmail dot com";
* `phone` — a number with a leading `+` or `00` country code (8 to 15 digits after it), the North
  American shapes `(415) 555-0132` / `415-555-0132`, a national number with its trunk 0
  ("07700 900263", "06 12 34 56 78"), a 7-digit local "555-0183" near a contact word or an email,
  or 7 to 15 digits after a phone word in English, German, French, Spanish, Italian, Portuguese,
  Dutch, Nordic, Finnish, Polish, Czech, Hungarian, Turkish, Greek, Russian, Ukrainian, Hindi, Urdu,
  Persian, Arabic, Hebrew, Malay/Indonesian, Swahili, Chinese, Japanese and Korean, compounds included
  ("Handynummer", "cep numarası"); not after an order, tracking, serial, ticket, VAT or IBAN word,
  not the tail of a longer code ("1Z 4F8 W27 03 9182 6650"), never across a line break;
* `address` — a house number and an English street word ("221B Baker Street", "B-204 Shanti
  Apartments"); a street word before the name ("Calle Mayor 5", "Via Garibaldi 18", "ul. Długa 15/3",
  "Rua Augusta 210", "вул. Хрещатик, 22", "ул. Тверская, д. 12", "Odos Knossou 41", "Sderot HaNassi 77")
  or after it, as a word ("Tiroler Straße 41", "Pannónia utca 21", "Kordon Sokak No. 8") or written onto
  it ("Hauptstraße 7", "Keizersgracht 112", "Havsvägen 3B", "Aleksanterinkatu 12"), "12 rue de Rivoli";
  then a flat or floor, a postcode and city ("10969 Berlin", "3811 AB Amersfoort", "80-826 Gdańsk",
  "414 58 Göteborg", "1100-053 Lisboa") and a city; Hindi and Urdu house numbers ("मकान नंबर 42",
  "مکان نمبر 12"), Persian plate numbers; Japanese, Chinese and Korean block and road numbers
  ("大阪市北区梅田3-1-14", "마포구 월드컵로12길 34, 502호"); a postcode with its city where the postcode's
  shape is its own (Dutch, Polish, Swedish, Portuguese); a UK postcode, a US "City, ST 12345" line;
  a street named without a number before a town and postcode or after a word of living there;
  and what follows an address word in some 30 languages ("my address is", "Adresse:", "adresim",
  "мой адрес:", "मेरा पता:", "میرا پتہ:") when it holds a number and a word. Street names must not
  start in lower case ("via email 2", "a table for 4 at the Thai place Friday 7pm" are none), and a
  house number is not a time or a price;
* `date_of_birth` — a date after a birth word ("born", "date of birth", "DOB", "geboren",
  "Geburtsdatum", "né le", "nací", "nasci", "nato il", "född", "syntymäpäivä", "urodziła się",
  "rođena", "született", "doğum tarihi", "lahir", "родился", "народилася", "जन्म", "پیدائش",
  "נולדה", "出生", "生年月日", "태어났", ... in some 40 languages), or a star sign said of someone
  ("I'm a Leo — 8 August 1995"), or before one ("am 3. Mai 1990 geboren", "1979年11月2日生まれ").
  Dates: numeric (12.09.1990, 1990-06-21), a day and a month name with the year (month names in
  the languages above, genitives included: "11 de agosto de 1995", "23. Oktober 1987",
  "17 Οκτωβρίου 1986", "12 апреля 1984", "15 अगस्त 1990"), the year first ("1990. május 5.",
  "1988 m. liepos 15 d."), Chinese, Japanese and Korean (1988年9月21日, 1990년 3월 5일); after a
  birth word also a day and a month alone. After a birthday word ("birthday", "Geburtstag",
  "cumpleaños", "doğum günü", "день рождения") only a date with its year is one — "el cumpleaños
  de la abuela, el 9 de noviembre" is a reminder — and not a party's or a dinner's;
* `id` — an employee, customer, member, patient, NHS, vehicle or licence-plate number given with
  its word: one upper-case token or a few, five characters or more, with a digit;
* `name` — a person's full name given as one ("my full name is …", "… is called …").

Words and month names are written as they are spelled and folded like the text (`word_alternation`),
so Cyrillic, Greek and accented words match the normal form.

Health data (diagnoses, medications) is not found: no shape of it is certain enough for code.

Government ids, card and bank account numbers are secrets, not personal data: `seams.secrets`
finds them and the gate rejects them whatever the setting. Each finding names its kind and where
it is, never the value.
"""

from __future__ import annotations

import re

from .normalise import View, fold, view
from .secrets import FlaggedSpan, word_alternation

# ---------------------------------------------------------------------------------------------
# email
# ---------------------------------------------------------------------------------------------

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b")
_TLD = (r"(?:com|org|net|edu|gov|io|co|uk|de|fr|es|it|nl|be|ch|at|se|no|dk|fi|pl|pt|ie|eu|us|ca|au|nz|in|jp|"
        r"cn|br|mx|ru|me|info|biz|app|dev|email|mail)")
_DOT = r"\s*(?:\(dot\)|\[dot\]|\s(?:dot|punkt|point|punto)\s)\s*"
#: The local part at most 64 characters, as an address's may be (unbounded, a long run of dotted
#: digits made the search quadratic; bench/memory_code_scan_cost.py).
_EMAIL_SPOKEN = re.compile(
    rf"(?i)\b[a-z0-9][a-z0-9._-]{{0,63}}(?:{_DOT}[a-z0-9_-]+)*\s*(?:\(at\)|\[at\]|\s(?:at|arroba|chez)\s)\s*"
    rf"[a-z0-9-]+(?:{_DOT}[a-z0-9-]+)*{_DOT}{_TLD}\b")

# ---------------------------------------------------------------------------------------------
# phone
# ---------------------------------------------------------------------------------------------

_PHONE_WORD = (r"(?:phone|phones|telephone|tel|mobile|mob|cell|cellphone|landline|whatsapp|signal|telegram|"
               r"number|numbers|no\.?|call|ring|text|sms|reach|reached|reachable|dial|fax|extension|ext|contact|line|"
               r"telefon|telefono|teléfono|telefone|téléphone|portable|handy|movil|móvil|cellulare|numero|"
               r"número|nummer|rufnummer)")
#: Phone words of other languages, and compounds ("Handynummer", "telefoonnummer", "numer telefonu",
#: "cep numarası"), matched as stems: any ending may follow.
_PHONE_STEMS = word_alternation((
    "handynummer", "telefonnummer", "mobilnummer", "festnetznummer", "telefoonnummer", "mobiel", "gsm",
    "telemóvel", "celular", "numéro de portable", "numéro de téléphone", "cellulare", "telefonino",
    "puhelin", "kännykkä", "matkapuhelin", "numer telefonu", "komórk",
    "telefonu", "mobilní", "mobil", "telefonszám", "mobilszám", "cep telefon", "cep numara", "telefon numara",
    "κινητό", "τηλέφωνο", "τηλέφωνό", "телефон", "мобильн", "мобільн", "номер телефону", "номер телефона",
    "फ़ोन", "फोन", "मोबाइल", "فون", "موبائل", "شماره تماس", "تلفن", "هاتف", "جوال", "טלפון", "נייד",
    "nomor hp", "nomor telepon", "nombor telefon", "simu", "電話", "携帯", "电话", "手机", "전화", "휴대폰",
))
_PHONE_INTL = re.compile(r"(?<![\w+])(?:\+|00) ?[1-9]\d{0,3}(?:[ .()-]{0,2}\d){6,14}(?![\w-])")
_PHONE_NANP = re.compile(r"(?<![\w(])(?:\(\d{3}\)\s?|\d{3}[-.\s])\d{3}[-.\s]\d{4}(?![\w-])")
#: A national number with its trunk 0 in the UK and European shape: "020 7946 0123", "06 12 34 56 78";
#: a full stop after it ends a sentence ("… on 07700 900263."), one before a digit makes a decimal.
_PHONE_TRUNK = re.compile(r"(?<![\w+.-])0\d{1,4}(?:[ -]?\d{2,4}){2,4}(?!\w|[.-]\d)")
#: A seven-digit local number, "555-0183": found only near a phone or contact word or an email
#: address (a contact record), since the shape alone is also a part or an invoice number.
_PHONE_LOCAL = re.compile(r"(?<![\w./-])\d{3}-\d{4}(?!\w|[.-]\d)")
#: A word that names some other number just before one: order, tracking, serial, VAT, IBAN ...
_OTHER_NUMBER = re.compile(r"(?i)\b(?:order|invoice|tracking|ref\w*|account|policy|serial|ticket|booking|case\s*(?:number|no\.?|#|id)|"
                           r"model|part|flight|isbn|imei|sku|vat|iban|container|registration|shipment|parcel|"
                           r"sendungsnummer|rechnung\w*|bestell\w*)\b[^\d\n]{0,25}$")
#: A number that goes on from a code before it on the line ("1Z 4F8 W27 03 9182 6650"): not a phone.
_CONTINUES_CODE = re.compile(r"(?<![\w-])(?=[A-Z0-9]*\d)[A-Z0-9]{2,6} $")
_PHONE_NEAR = re.compile(rf"(?i)(?:\b{_PHONE_WORD}\b|(?<!\w)(?:{_PHONE_STEMS})[^\W\d_]*)"
                         rf"[^\d\n]{{0,30}}?(?P<value>\(?\d[\d\s().-]{{5,20}}\d)(?![\w-])")
_CONTACT_NEAR = re.compile(rf"(?i)(?:\b{_PHONE_WORD}\b|(?<!\w)(?:{_PHONE_STEMS})|@[\w-]+\.[a-z]{{2,}})")

# ---------------------------------------------------------------------------------------------
# address
# ---------------------------------------------------------------------------------------------

_STREET_WORD = (r"(?:street|st|avenue|ave|av|road|rd|lane|ln|drive|dr|boulevard|blvd|court|ct|place|pl|square|sq|"
                r"terrace|way|close|crescent|cres|parkway|pkwy|highway|hwy|alley|row|mews|gardens|grove|hill|walk|"
                r"circle|cir|trail|plaza|apartments|apts|residency|society|towers|nagar|colony|marg|enclave)")
#: A house number, then capitalised words and an English street word ("221B Baker Street"), or an
#: Indian flat number ("B-204 Shanti Apartments"). The names are capitalised, so "section 112, row F"
#: and "25 minutes each way" are not addresses.
_ADDRESS = re.compile(
    rf"(?<![\w-])(?:[A-Z]-)?\d{{1,5}}[a-zA-Z]?(?:[-/]\d{{1,4}})?\s+(?:[A-Z][\w'.-]*\s+){{0,4}}?(?i:{_STREET_WORD})\b\.?"
    rf"(?:\s+(?i:n|s|e|w|ne|nw|se|sw)\b\.?)?(?:,?\s*(?i:apt|apartment|flat|unit|suite|#)\.?\s*\w+)?")
#: Words that come before a street's name, in the languages that put them first (folded: "Οδός" is
#: matched as written). Several are also ordinary words ("via", "place", "route"), so the name after
#: them must be capitalised.
_STREET_BEFORE = word_alternation((
    # Spanish, Catalan, Portuguese, Italian, French, Romanian
    "calle", "c/", "avenida", "avda.", "av.", "plaza", "paseo", "camino", "carretera", "ronda", "travesía", "carrer",
    "avinguda", "plaça", "passeig", "camí", "rua", "travessa", "praça", "largo", "alameda", "estrada", "via",
    "viale", "piazza", "piazzale", "corso", "vicolo", "strada", "lungomare", "rue", "avenue", "boulevard", "bd",
    "chemin", "place", "allée", "impasse", "quai", "route", "cours", "bulevardul", "calea", "aleea", "șoseaua",
    "str.",
    # Polish, Czech, Slovak, South Slavic, Baltic
    "ul.", "ulica", "ulicy", "ulici", "al.", "aleja", "alei", "os.", "osiedle", "plac", "nám.", "náměstí", "třída",
    "trg", "bulevar", "cesta", "iela",
    # Greek, Hebrew (in Latin letters and in Hebrew), Arabic and Persian, Indonesian/Malay
    "οδός", "οδού", "λεωφόρος", "odos", "leoforos", "sderot", "rehov", "rechov", "רחוב", "ברחוב", "שדרות",
    "شارع", "خیابان", "jalan", "jl.", "jln.",
    # Russian, Ukrainian, Serbian, Bulgarian
    "ул.", "улица", "улице", "улици", "вул.", "вулиця", "вулиці", "просп.", "проспект", "пр-т", "пер.", "переулок",
    "пров.", "провулок", "бульв.", "бульвар", "б-р", "площа", "площадь", "пл.", "шосе", "шоссе", "наб.",
))
#: Words that come after a street's name as a word of their own: German "Tiroler Straße 41",
#: Hungarian "Pannónia utca 21", Turkish "Kordon Sokak No. 8" (where the name may be a number).
_STREET_AFTER = word_alternation((
    "straße", "strasse", "str.", "allee", "weg", "platz", "gasse", "damm", "ufer", "chaussee", "markt", "steig",
    "utca", "u.", "út", "útja", "tér", "körút", "köz", "fasor", "sokak", "sokağı", "sok.", "sk.", "cadde", "caddesi",
    "cad.", "cd.", "bulvarı", "yolu", "tänav", "gate", "gata", "vei", "veien", "vej", "gade", "katu", "tie",
))
#: A house number after a street's name: "5", "52/4", "No. 8", "n° 12", "д. 7", "буд. 3".
_HOUSE_NO = (r"(?:n[.o°º]?\s*|nr\.?\s*|no\.?\s*|д\.\s*|буд\.\s*|č\.\s*)?\d{1,4}[a-zA-Z]?"
             r"(?:\s?[/-]\s?\d{1,4}[a-zA-Z]?)?(?![^\W_]|[:.,]\d)")
_NAME_WORD = r"[^\W\d_][\w'’.-]*"
#: A letter that is not lower case (Latin, Cyrillic, Greek; scripts without case count as capitals).
_CAP = r"(?-i:[^\W\d_a-zß-ÿа-яёіїєґјћђα-ωłøæđ])"
_CAP_WORD = rf"{_CAP}[\w'’.-]*"
_PARTICLE = r"(?:de|del|de la|des|du|da|do|dos|das|della|di|dei|la|le|les|l'|d'|van|von|der|den)"
_STREET_NAME = rf"(?P<name>(?:{_PARTICLE}\s+)?{_NAME_WORD}(?:\s+(?:{_PARTICLE}\s+)?{_NAME_WORD}){{0,3}}?)"
#: Street addresses in other languages' orders, each with the street's name as its group `name`
#: (which must not start in lower case: "via email 2", "place for 4" are no addresses).
_ADDRESS_FOREIGN = (
    # the street word first: "Calle Mayor 5", "ul. Ogarna 52/4", "вул. Січових Стрільців, 37", "Odos Knossou 41"
    re.compile(rf"(?i)(?<!\w)(?:{_STREET_BEFORE})\s*{_STREET_NAME},?\s*{_HOUSE_NO}"),
    # French order, the number first: "12 rue de Rivoli"
    re.compile(r"(?i)\b\d{1,4}[a-z]?,?\s+(?:rue|avenue|boulevard|bd|chemin|place|allee|impasse|quai)\s+"
               r"(?:(?:de|du|des|de la)\s+|d')?(?P<name>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3})"),
    # the street word written onto the name: "Hauptstraße 7", "Havsvägen 3B", "Aleksanterinkatu 12"
    re.compile(r"(?P<name>\b[A-Z][\w-]*(?i:strasse|straße|str\.|weg|gasse|platz|allee|damm|ufer|laan|straat|gracht|"
               r"plein|kade|singel|dijk|dreef|steeg|vej|gade|gatan|gata|vagen|vag|veien|vei|katu|tie|kuja|utca|"
               rf"sokak|caddesi))\s+{_HOUSE_NO}"),
    # the street word after the name: "Tiroler Straße 41", "Pannónia utca 21", "1024 Sokak No. 3"
    re.compile(rf"(?i)(?P<name>\d{{1,5}}\.?|{_CAP_WORD}(?:\s+{_CAP_WORD}){{0,2}}?)\s+(?:{_STREET_AFTER})\s*,?\s*"
               rf"{_HOUSE_NO}"),
)
#: A house number given with its word in Hindi and Urdu ("मकान नंबर 12", "مکان نمبر 12", "گلی نمبر 5"),
#: and the Persian plate number ("پلاک ۲۷") after a street ("خیابان ...").
_HOUSE_SAID = re.compile(rf"(?i)(?<!\w)(?:{word_alternation(('मकान', 'घर', 'फ्लैट', 'गली', 'مکان', 'گھر', 'فلیٹ', 'گلی', 'سیکٹر', 'सेक्टर'))})"
                         rf"\s*(?:{word_alternation(('नंबर', 'नम्बर', 'नं.', 'نمبر', 'نمبر:'))})?\s*\d{{1,5}}"
                         rf"|(?:{word_alternation(('خیابان', 'کوچه', 'بلوار', 'شارع'))})[^\d\n]{{1,40}}?"
                         rf"(?:{word_alternation(('پلاک', 'رقم', 'منزل'))})\s*\d{{1,5}}")
#: A Japanese or Chinese address: a prefecture, city or ward and the block numbers ("大阪市北区梅田3-1-14",
#: "…区北沢3-21-7 コーポ松原203号室"), or a road and its number ("建国路88号"); a Korean one: a city or district,
#: a road ("월드컵로12길") and the building number ("34, 502호").
_CJK = r"\u3040-\u30ff\u4e00-\u9fff"
#: Hangul is matched as the view has it, decomposed into its letters (jamo).
_HANGUL = r"[\u1100-\u11ff]"
_KO = {w: fold(w) for w in ("시", "도", "구", "군", "로", "길", "동", "호", "년", "월", "일")}
_ADDRESS_EAST_ASIAN = re.compile(
    rf"(?:[\u4e00-\u9fff]{{1,4}}[都道府県省])?(?:[\u4e00-\u9fff]{{1,6}}[市区町村郡县])+[{_CJK}]{{0,8}}?"
    rf"\d{{1,4}}(?:丁目|[-−‐ー]\d{{1,4}}){{1,3}}(?:番地?|号)?(?:\s*[{_CJK}]{{1,12}}\d{{1,5}}号室?)?"
    rf"|(?:[\u4e00-\u9fff]{{1,6}}[省市区县])*[\u4e00-\u9fff]{{1,8}}[路街道巷弄]\d{{1,5}}号(?:[{_CJK}\d]{{0,10}}室)?"
    rf"|(?:{_HANGUL}+(?:{_KO['시']}|{_KO['도']}|{_KO['구']}|{_KO['군']})\s+)+{_HANGUL}[\d\u1100-\u11ff]*(?:{_KO['로']}|{_KO['길']})"
    rf"\s*\d+(?:-\d+)?(?:(?:,?\s*\d+{_KO['동']})?,?\s*\d+{_KO['호']}|(?![\d\u1100-\u11ff]))")
#: Postcodes: German, French, Spanish, Italian, Turkish, Greek, Ukrainian (5 digits), Dutch ("3811 AB"),
#: Polish ("80-826"), Swedish and Czech ("414 58"), Portuguese ("1100-148"), Austrian, Swiss,
#: Hungarian, Danish, Norwegian, Belgian (4 digits), Russian and Indian (6 digits).
_POSTCODE = r"(?:\d{4}\s?(?!SS|SA|SD)[A-Z]{2}|\d{2}-\d{3}|\d{3}\s\d{2}|\d{4}-\d{3}|\d{4,6})"
_CITY = rf"(?:{_CAP}[\w'’-]*(?:[ -]{_CAP}[\w'’-]*){{0,2}})"
#: What may follow a street address: a flat or floor, a postcode and city, a city.
#: Words for a flat, a floor or a door after a street address, in several languages.
_FLAT_WORDS = word_alternation((
    "apt", "apt.", "apartment", "flat", "unit", "suite", "daire", "d.", "kv.", "кв.", "квартира", "stan", "стан",
    "m.", "lok.", "lokal", "whg.", "wohnung", "piso", "andar", "kat", "этаж", "поверх", "emelet", "em.", "étage",
    "etage", "og", "appartement", "appartamento", "interno", "int.", "scala", "bus", "bte", "號", "号室",
))
#: What may follow a street address: a flat or floor, a postcode and city, a city.
_ADDRESS_TAIL = re.compile(
    rf"(?:\s*,?\s*(?i:{_FLAT_WORDS})\s*\w+"
    rf"|\s*,?\s+{_POSTCODE}\s+{_CITY}|\s*,\s*{_CITY}(?:\s+{_POSTCODE}(?!\w))?)")
#: A postcode and city just before a street address, the Hungarian order ("1136 Budapest, Pannónia utca 21").
_ADDRESS_HEAD = re.compile(rf"{_POSTCODE}\s+{_CITY},\s*$")
#: A postcode with its city where the postcode's shape is its own (Dutch "3811 AB Amersfoort",
#: Polish "80-826 Gdańsk", Swedish "414 58 Göteborg", Portuguese "1100-148 Lisboa").
_POSTCODE_CITY = re.compile(rf"(?<![\w-])(?:\d{{4}}\s?(?!SS|SA|SD|KB|MB|GB|TB|PB|AD|BC)[A-Z]{{2}}|\d{{2}}-\d{{3}}|"
                            rf"\d{{3}}\s\d{{2}}|\d{{4}}-\d{{3}})\s+{_CITY}")
#: Words for an address in many languages: what follows them (after "is" or a colon) is one.
_ADDRESS_WORDS = word_alternation((
    "address", "adresse", "anschrift", "wohnadresse", "adres", "adresi", "adresa", "adresu", "adress", "dirección",
    "indirizzo", "endereço", "morada", "osoite", "lakcím", "lakcímem", "címem", "adreso", "διεύθυνση", "адрес",
    "адреса", "адресу", "адресою", "पता", "پتہ", "آدرس", "عنوان", "כתובת", "alamat", "anwani", "địa chỉ",
    "woonadres", "hemadress",
))
_ADDRESS_CUE = re.compile(
    rf"(?i)(?<!\w)(?<!e-mail )(?<!email )(?<!ip )(?<!mac )(?<!web )(?<!wallet )(?<!bitcoin )(?<!receiving )(?:{_ADDRESS_WORDS})[^\W\d_]*"
    r"[^\d\n.:;!?]{0,40}?(?:\s(?:is|ist|es|est|è|é|är|er|jest|je|on|zijn|is now)\s|\s?[:=]\s?|\s[-–—]\s)")
_ADDRESS_SAID = re.compile(
    r"(?i)\b(?:my|our|his|her|their|the user'?s?|home|postal|mailing|shipping|billing|delivery|street)\s+address\s+"
    r"(?:is|was|is now|:|=|-)\s*(?P<value>[^.;!?\n]{6,100})"
    r"|\b(?:i|we|he|she|they|the user)\s+(?:live|lives|living|moved|stay|stays|reside|resides)\s+(?:now\s+)?(?:at|to)\s+"
    r"(?P<value2>\d[^.;!?\n]{4,100})")
#: A street named without a number ("Llanfair Road, Ruthin LL15 1BB", "we live on Elm Road"): an
#: address only before a town and postcode or after a word of living there; alone it is a place
#: ("the surgery on Elm Road", "the West Highland Way", "Deborah Lane").
_STREET_NAMED = re.compile(r"\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)?\s(?:Road|Street|Lane|Avenue|Close|Drive|Crescent|Terrace|"
                           r"Gardens|Grove|Mews|Way|Place|Square)\b")
_STREET_NAMED_AFTER = re.compile(r",\s*(?:[A-Z][a-z]+\s+)?(?:[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]? ?\d[ABD-HJLNP-UW-Z]{2}|[A-Z]{2}\s+\d{5})\b")
_STREET_NAMED_BEFORE = re.compile(r"(?i)\b(?:live|lives|living|lived|moved|moving|reside|resides|address|house|home)\b"
                                  r"[^.;!?\n]{0,12}$")
#: A person's name given as one: "my full name is Margaret Eleanor Whitfield-Osei".
_NAME_SAID = re.compile(r"(?i:\bname\s+is\s+|\bcalled\s+|\bnamed\s+)(?P<value>[A-Z][\w'-]+(?:\s[A-Z][\w'-]+){1,3})")
_UK_POSTCODE = re.compile(r"\b(?:[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]?) ?\d[ABD-HJLNP-UW-Z]{2}\b")
_US_CITY_ZIP = re.compile(r"\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)*,\s*[A-Z]{2}\s+\d{5}(?:-\d{4})?\b")

# ---------------------------------------------------------------------------------------------
# date of birth
# ---------------------------------------------------------------------------------------------

_MONTHS_EN = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
              r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
#: Month names, in the forms a date uses (Slavic, Baltic, Greek and Finnish genitives with their nominatives).
_MONTH_NAMES = (
    # German, Dutch, Nordic
    "januar", "jänner", "februar", "märz", "mai", "juni", "juli", "oktober", "dezember", "januari", "februari",
    "maart", "mei", "augustus", "maj", "augusti", "marts", "mars",
    # French, Spanish, Catalan, Portuguese, Italian, Romanian
    "janvier", "février", "avril", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre",
    "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "setiembre", "octubre",
    "noviembre", "diciembre", "gener", "febrer", "març", "maig", "juny", "juliol", "agost", "setembre", "desembre",
    "janeiro", "fevereiro", "março", "maio", "junho", "julho", "setembro", "outubro", "novembro", "dezembro",
    "gennaio", "febbraio", "aprile", "maggio", "giugno", "luglio", "settembre", "ottobre", "dicembre",
    "ianuarie", "februarie", "martie", "aprilie", "iunie", "iulie", "septembrie", "octombrie", "noiembrie",
    "decembrie",
    # Finnish, Estonian, Latvian, Lithuanian
    "tammikuuta", "helmikuuta", "maaliskuuta", "huhtikuuta", "toukokuuta", "kesäkuuta", "heinäkuuta", "elokuuta",
    "syyskuuta", "lokakuuta", "marraskuuta", "joulukuuta", "jaanuar", "veebruar", "märts", "aprill", "juuni",
    "juuli", "oktoober", "detsember", "janvāris", "februāris", "marts", "aprīlis", "maijs", "jūnijs", "jūlijs",
    "augusts", "septembris", "oktobris", "novembris", "decembris", "sausio", "vasario", "kovo", "balandžio",
    "gegužės", "birželio", "liepos", "rugpjūčio", "rugsėjo", "spalio", "lapkričio", "gruodžio",
    # Polish, Czech, Slovak, Croatian, Serbian/Bosnian/Slovenian (Latin), Hungarian
    "stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia", "września", "października",
    "listopada", "grudnia", "styczeń", "luty", "marzec", "kwiecień", "czerwiec", "lipiec", "sierpień", "wrzesień",
    "październik", "grudzień", "ledna", "února", "března", "dubna", "května", "června", "července", "srpna",
    "září", "října", "listopadu", "prosince", "januára", "februára", "apríla", "mája", "júna", "júla", "augusta",
    "septembra", "októbra", "novembra", "decembra", "siječnja", "veljače", "ožujka", "travnja", "svibnja", "lipnja",
    "srpnja", "kolovoza", "rujna", "studenoga", "studenog", "prosinca", "januar", "mart", "april", "jun", "jul",
    "avgust", "septembar", "oktobar", "novembar", "decembar", "junij", "julij", "január", "február", "március",
    "április", "május", "június", "július", "augusztus", "szeptember", "október",
    # Turkish, Indonesian/Malay, Swahili, Filipino
    "ocak", "şubat", "mart", "nisan", "mayıs", "haziran", "temmuz", "ağustos", "eylül", "ekim", "kasım", "aralık",
    "maret", "agustus", "desember", "mac", "ogos", "julai", "disember", "machi", "aprili", "agosti", "septemba",
    "oktoba", "novemba", "desemba", "pebrero", "marso", "hunyo", "hulyo", "setyembre", "oktubre", "nobyembre",
    "disyembre",
    # Greek (genitive and nominative)
    "ιανουαρίου", "φεβρουαρίου", "μαρτίου", "απριλίου", "μαΐου", "μαΐου", "ιουνίου", "ιουλίου", "αυγούστου",
    "σεπτεμβρίου", "οκτωβρίου", "νοεμβρίου", "δεκεμβρίου", "ιανουάριος", "φεβρουάριος", "μάρτιος", "απρίλιος",
    "μάιος", "ιούνιος", "ιούλιος", "αύγουστος", "σεπτέμβριος", "οκτώβριος", "νοέμβριος", "δεκέμβριος",
    # Russian, Ukrainian, Bulgarian, Serbian (Cyrillic)
    "января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября", "ноября",
    "декабря", "январь", "февраль", "март", "апрель", "май", "июнь", "июль", "август", "сентябрь", "октябрь",
    "ноябрь", "декабрь", "січня", "лютого", "березня", "квітня", "травня", "червня", "липня", "серпня", "вересня",
    "жовтня", "листопада", "грудня", "січень", "лютий", "березень", "квітень", "травень", "червень", "липень",
    "серпень", "вересень", "жовтень", "листопад", "грудень", "януари", "февруари", "юни", "юли", "септември",
    "октомври", "ноември", "декември", "јануар", "фебруар", "април", "мај", "јун", "јул", "септембар", "октобар",
    "новембар", "децембар",
    # Hindi, Bengali, Urdu, Arabic, Persian, Hebrew
    "जनवरी", "फ़रवरी", "फरवरी", "मार्च", "अप्रैल", "मई", "जून", "जुलाई", "अगस्त", "सितंबर", "सितम्बर", "अक्टूबर",
    "अक्तूबर", "नवंबर", "नवम्बर", "दिसंबर", "दिसम्बर", "জানুয়ারি", "ফেব্রুয়ারি", "মার্চ", "এপ্রিল", "মে", "জুন",
    "জুলাই", "আগস্ট", "সেপ্টেম্বর", "অক্টোবর", "নভেম্বর", "ডিসেম্বর", "جنوری", "فروری", "مارچ", "اپریل", "مئی",
    "جون", "جولائی", "اگست", "ستمبر", "اکتوبر", "نومبر", "دسمبر", "يناير", "فبراير", "مارس", "أبريل", "مايو",
    "يونيو", "يوليو", "أغسطس", "سبتمبر", "أكتوبر", "نوفمبر", "ديسمبر", "ژانویه", "فوریه", "آوریل", "ژوئن",
    "ژوئیه", "سپتامبر", "اکتبر", "نوامبر", "دسامبر", "ינואר", "פברואר", "מרץ", "מרס", "אפריל", "מאי", "יוני",
    "יולי", "אוגוסט", "ספטמבר", "אוקטובר", "נובמבר", "דצמבר",
)
#: Hebrew writes "in" onto the month: "ב־9 בנובמבר".
_MONTHS = rf"(?:(?:ב[־-]?)?(?:{word_alternation(_MONTH_NAMES)})|{_MONTHS_EN})(?![^\W\d_])"
_DAY = r"\d{1,2}(?:st|nd|rd|th|er|º|ª)?\.?"
_YEAR = r"(?:\d{4}|'\d{2})(?!\d)"
#: A full date: with its year.
_DATE_FULL = (rf"(?:\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}|\d{{1,2}}[-/.]\d{{1,2}}[-/.]\d{{2,4}}"
              # 8 August 1995, 11 de agosto de 1995, 23. Oktober 1987, 17 Οκτωβρίου 1986
              rf"|{_DAY}\s*(?:of\s+|de\s+|di\s+|d')?{_MONTHS}\.?,?\s*(?:(?:de|del|of)\s+)?{_YEAR}"
              # August 8, 1995
              rf"|{_MONTHS}\.?\s+{_DAY},?\s+{_YEAR}"
              # year first: Hungarian "1990. május 5.", Lithuanian "1988 m. liepos 15 d."
              rf"|\d{{4}}\.?\s*(?:m\.\s*)?{_MONTHS}\s+\d{{1,2}}\.?(?:\s*d\.)?"
              # Chinese, Japanese, Korean: 1988年9月21日, 1990년 3월 5일
              rf"|\d{{4}}\s*(?:年|{_KO['년']})\s*\d{{1,2}}\s*(?:月|{_KO['월']})\s*\d{{1,2}}\s*(?:日|{_KO['일']})?)")
#: A day and a month alone: "3 June", "June 3rd", "3 de junio".
_DATE_DAY_MONTH = rf"(?:{_DAY}\s*(?:of\s+|de\s+|di\s+)?{_MONTHS}|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?\b)"
#: Words that say a date is a birth date, in many languages, matched as stems ("urodziła", "doğumlu").
_BIRTH_WORDS = (
    "born", "date of birth", "birth date", "birthdate", "d.o.b", "dob",
    "geboren", "geburtsdatum", "geb.", "geboortedatum",
    "né le", "née le", "né en", "date de naissance", "nacido", "nacida", "nací", "nació",
    "fecha de nacimiento", "nasci", "nascido", "nascida", "nasceu", "data de nascimento",
    "nato", "nata", "data di nascita", "naixement", "vaig néixer",
    "född", "födelsedatum", "født", "fødselsdato", "syntynyt", "synnyin",
    "syntymäaika", "sündinud", "sünniaeg", "dzimis", "dzimšanas", "gimiau", "gimė", "gimimo data",
    "urodzony", "urodzona", "urodził", "urodzil", "urodzeni", "data urodzenia", "narozen", "narodil",
    "datum narození", "narodený", "narodená", "dátum narodenia", "rođen", "rođena", "datum rođenja", "rodjen",
    "rojen", "rojena", "datum rojstva", "születt", "születési", "născut", "născută", "data nașterii",
    "doğum tarih", "doğdu", "doğdum", "doğumlu", "lahir", "tarikh lahir", "nilizaliwa", "alizaliwa",
    "tarehe ya kuzaliwa", "ipinanganak", "kapanganakan", "sinh ngày", "ngày sinh",
    "γεννήθηκα", "γεννήθηκε", "ημερομηνία γέννησης", "родился", "родилась",
    "дата рождения", "года рождения", "народився", "народилася", "народилась", "дата народження",
    "рођен", "рођена", "датум рођења", "роден", "родена",
    "जन्म", "जन्मतिथि", "पैदा", "জন্ম", "জন্মতারিখ", "پیدائش", "پیدا",
    "تاريخ الميلاد", "ولدت", "تاریخ تولد", "متولد", "נולד", "נולדה", "נולדתי", "תאריך לידה",
)
#: Words for a birthday: a birth date when the year is given ("Mein Geburtstag ist am 23. Oktober
#: 1987"); a day and a month alone after them is a reminder ("el cumpleaños de la abuela, el 9 de
#: noviembre"), kept as it is.
_BIRTHDAY_WORDS = (
    "birthday", "geburtstag", "verjaardag", "jarig", "anniversaire", "cumpleaños", "cumple", "aniversário",
    "compleanno", "födelsedag", "fødselsdag", "syntymäpäivä", "sünnipäev", "gimtadien", "urodziny",
    "születésnap", "ziua de naștere", "doğum gün", "ulang tahun", "kaarawan", "γενέθλια", "день рождения",
    "день народження", "जन्मदिन", "জন্মদিন", "سالگرہ", "تولد", "יום הולדת",
)
#: The same in Chinese, Japanese and Korean, written with no space before them.
_BIRTH_WORDS_CJK = ("出生", "生年月日", "生まれ", "생년월일", "태어났")
_BIRTHDAY_WORDS_CJK = ("生日", "誕生日", "생일")
_STAR_SIGNS = r"(?:aries|taurus|gemini|leo|virgo|libra|scorpio|sagittarius|capricorn|aquarius|pisces)"
#: A birth word, or a star sign said of someone ("I'm a Leo — 8 August 1995").
_BIRTH = (rf"(?:(?<!\w)(?:{word_alternation(_BIRTH_WORDS)})[^\W\d_]*|(?:{word_alternation(_BIRTH_WORDS_CJK)})"
          rf"|\b(?:i'?m|i am|she'?s|he'?s|is) an?\s+{_STAR_SIGNS}\b)")
_BIRTHDAY = (rf"(?:(?<!\w)(?:{word_alternation(_BIRTHDAY_WORDS)})[^\W\d_]*"
             rf"|(?:{word_alternation(_BIRTHDAY_WORDS_CJK)}))")
#: A birthday's party or dinner is an event with a date of its own, not the birth date.
_EVENT = word_alternation(("party", "parties", "celebration", "dinner", "lunch", "cake", "feier", "fête",
                           "fiesta", "festa", "feest", "kutlama", "вечеринк", "праздник", "свято", "पार्टी"))
_DOB = re.compile(rf"(?i){_BIRTH}[^\d\n]{{0,40}}?(?P<value>{_DATE_FULL}|{_DATE_DAY_MONTH})"
                  rf"|{_BIRTHDAY}(?:(?!{_EVENT})[^\d\n]){{0,40}}?(?P<value2>{_DATE_FULL})")
#: The date before the word, as German, Dutch, Turkish, Japanese and Hindi put it
#: ("am 3. Mai 1990 geboren", "1979年11月2日生まれ", "12 Ağustos 1956 doğumlu").
_DOB_BEFORE = re.compile(rf"(?i)(?P<value>{_DATE_FULL})[^\d\n.;!?]{{0,12}}?(?:{_BIRTH}|{_BIRTHDAY})")

# ---------------------------------------------------------------------------------------------
# personal id numbers (government ids are secrets: `seams.secrets`)
# ---------------------------------------------------------------------------------------------

_ID_WORDS = (r"(?:employee|staff|customer|client|member|membership|patient|student|loyalty|frequent flyer|"
             r"nhs|medicare|medical record|insurance|policy holder|licen[cs]e plate|number plate|plate|"
             r"vehicle registration|car registration|registration plate|vin|vehicle identification)")
#: The value is one upper-case token or a few, with a digit in it: "12345678", "AB-1234", "943 476 5919".
_ID = re.compile(rf"(?i)\b{_ID_WORDS}\s*(?:id|number|no\.?|num|#|card)?\b[^\w\n]{{0,12}}(?:is\s+|:\s*)?"
                 rf"(?P<value>(?-i:(?=[A-Z0-9 -]{{0,20}}\d)[A-Z0-9][A-Z0-9-]*(?: [A-Z0-9][A-Z0-9-]*){{0,3}}))(?!\w)")


def _add(v: View, kind: str, start: int, end: int, out: list[FlaggedSpan], text: str = "") -> None:
    """A finding of `kind` over the view's `[start, end)`; a phone number never spans two lines (of
    `text`, the original: the view has made line breaks spaces), so one that does is two numbers."""
    if end > start:
        a, b = v.span(start, end)
        if kind == "phone" and "\n" in text[a:b]:
            return
        out.append(FlaggedSpan(kind, a, b))


def _trimmed(value: str) -> int:
    """The length of `value` without trailing spaces and punctuation."""
    return len(value.rstrip(" ,.;:!?)'\""))


def _street_name_ok(m: re.Match[str]) -> bool:
    """Whether a street shape's name starts with a capital (after its particles: "Camí de la Fila")."""
    name = m.groupdict().get("name")
    if not name:
        return True
    name = re.sub(rf"(?i)^(?:{_PARTICLE}\s+)+", "", name)
    return not name[:1].islower()


def _clause_end(t: str, start: int, limit: int = 100) -> int:
    """Where the clause that starts at `start` ends: at a line break, ";", "!", "?", a full stop that
    ends a sentence (not one after an abbreviation, "ul." "No." "вул.", nor one in a number), or a
    comma before a lower-case word that is not a flat or floor ("…, födelsedag 21 juni")."""
    j = start
    while j < len(t) and j - start < limit:
        c = t[j]
        if c in "\n;!?。":
            break
        if c == ".":
            word = re.split(r"\W", t[start:j])[-1]
            if not (t[j + 1:j + 2].isdigit() or (0 < len(word) <= 3 and not word.isdigit())):
                break
        if c == "," and re.match(r",\s*[^\W\d_]{4,}", t[j:]) and t[j + 1:].lstrip()[:1].islower() \
                and not _ADDRESS_TAIL.match(t, j):
            break
        j += 1
    return j


def _addresses(t: str) -> list[tuple[int, int]]:
    """Spans of `t` (the view) that are postal addresses."""
    found: list[tuple[int, int]] = []
    cores: list[tuple[int, int]] = []
    for pattern in (_ADDRESS, *_ADDRESS_FOREIGN):
        cores += [(m.start(), m.end()) for m in pattern.finditer(t) if _street_name_ok(m)]
    for pattern in (_HOUSE_SAID, _ADDRESS_EAST_ASIAN, _POSTCODE_CITY):
        cores += [(m.start(), m.end()) for m in pattern.finditer(t)]
    for start, end in cores:
        for _ in range(3):  # a flat, a postcode and city, a city
            tail = _ADDRESS_TAIL.match(t, end)
            if tail is None:
                break
            end = tail.end()
        head = _ADDRESS_HEAD.search(t[max(0, start - 40):start])
        found.append((start - len(head.group()) if head else start, end))
    for m in _STREET_NAMED.finditer(t):
        if _STREET_NAMED_AFTER.match(t, m.end()) or _STREET_NAMED_BEFORE.search(t[max(0, m.start() - 40):m.start()]):
            found.append((m.start(), m.end()))
    for pattern in (_UK_POSTCODE, _US_CITY_ZIP):
        found += [(m.start(), m.end()) for m in pattern.finditer(t)]
    for m in _ADDRESS_SAID.finditer(t):
        group = "value" if m.group("value") is not None else "value2"
        found.append((m.start(group), m.end(group)))
    for m in _ADDRESS_CUE.finditer(t):
        end = _clause_end(t, m.end())
        value = t[m.end():end]
        # a house number, a letter, two words: not an IP address, a wallet or "the same as before"
        if re.search(r"\d", value) and re.search(r"[^\W\d_]", value) and len(value.split()) >= 2 \
                and not re.search(r"\w{20}", value):  # a key or a hash is no address
            found.append((m.end(), end))
    return found


def find_personal(text: str) -> list[FlaggedSpan]:
    """Every email address, phone number, postal address, date of birth and personal id number
    in `text` that code can be sure of (see the module doc), as spans of `text`, one per span."""
    v = view(text)
    t = v.text
    out: list[FlaggedSpan] = []
    for pattern in (_EMAIL, _EMAIL_SPOKEN):
        for m in pattern.finditer(t):
            _add(v, "email", m.start(), m.end(), out)
    for m in _PHONE_INTL.finditer(t):
        # 8 to 15 digits after the "+" or "00" (E.164): no parcel's 20-digit number, no "0012 4471"
        if 8 <= len(re.sub(r"\D", "", m.group().removeprefix("00"))) <= 15 \
                and not (m.group().startswith("00") and _OTHER_NUMBER.search(t[max(0, m.start() - 60):m.start()])):
            _add(v, "phone", m.start(), m.start() + _trimmed(m.group()), out, text)
    for m in _PHONE_NANP.finditer(t):
        _add(v, "phone", m.start(), m.start() + _trimmed(m.group()), out, text)
    for m in _PHONE_TRUNK.finditer(t):
        before = t[max(0, m.start() - 60):m.start()]
        if 10 <= len(re.sub(r"\D", "", m.group())) <= 11 and not _OTHER_NUMBER.search(before) \
                and not _CONTINUES_CODE.search(before):
            _add(v, "phone", m.start(), m.start() + _trimmed(m.group()), out, text)
    for m in _PHONE_LOCAL.finditer(t):
        before = t[max(0, m.start() - 80):m.start()]
        if _CONTACT_NEAR.search(before) and not _OTHER_NUMBER.search(before[-30:]):
            _add(v, "phone", m.start(), m.end(), out, text)
    for m in _PHONE_NEAR.finditer(t):
        value = m.group("value")
        digits = re.sub(r"\D", "", value)
        if 7 <= len(digits) <= 15 and not re.fullmatch(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,3}(?:\.\d{1,3}){3}", value.strip()) \
                and not _OTHER_NUMBER.search(t[max(0, m.start() - 20):m.start()]) \
                and not _OTHER_NUMBER.search(t[max(0, m.start() - 20):m.start("value")]) \
                and not re.search(r"[\w-]$", t[:m.start("value")]):  # "KX-2019-00831": the end of a code
            _add(v, "phone", m.start("value"), m.start("value") + _trimmed(value), out, text)
    for m in _NAME_SAID.finditer(t):
        _add(v, "name", m.start("value"), m.start("value") + _trimmed(m.group("value")), out)
    for start, end in _addresses(t):
        _add(v, "address", start, start + _trimmed(t[start:end]), out)
    for pattern in (_DOB, _DOB_BEFORE):
        for m in pattern.finditer(t):
            group = "value" if m.group("value") is not None else "value2"
            _add(v, "date_of_birth", m.start(group), m.start(group) + _trimmed(m.group(group)), out)
    for m in _ID.finditer(t):
        if len(re.sub(r"\W", "", m.group("value"))) >= 5:  # "member no. 312" is no one's id
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
