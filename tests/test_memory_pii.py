"""Personal data is a choice (issue 30): `MemoryGate(pii="admit" | "redact" | "hold")`, on a real
SQLite store file read back byte for byte.

The decisions here are the code's and the setting's, so the judge is a fixed one that admits
everything it is asked about: what is tested is what each setting writes, not the model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from seams.builtin.memory import MemoryGate, MemoryStore
from seams.errors import InputError
from seams.personal import find_personal

from .fixed_judge import FixedJudge

pytestmark = pytest.mark.filterwarnings("ignore::seams.errors.CalibrationWarning")

ADMITTING = {"poison": 0.01, "secret": 0.01, "poorer": 0.01, "related": 0.01, "worth": 0.9,
             "relation": {"restatement": 0.1, "correction": 0.1, "enrichment": 0.8}}

#: (text, the parts that are personal data, their kinds)
PERSONAL = [
    ("My mobile is +44 7700 900123, text me there", ["+44 7700 900123"], {"phone"}),
    ("call the dentist on (415) 555-0132 to move the appointment", ["(415) 555-0132"], {"phone"}),
    ("my work email is jane.doe@example.com", ["jane.doe@example.com"], {"email"}),
    ("write to me at priya dot shah at gmail dot com", ["priya dot shah at gmail dot com"], {"email"}),
    ("I live at 221B Baker Street, London NW1 6XE", ["221B Baker Street", "NW1 6XE"], {"address"}),
    ("Our new flat is at 12 rue de Rivoli in Paris", ["12 rue de Rivoli"], {"address"}),
    ("I was born on 4 May 1990 in Leeds", ["4 May 1990"], {"date_of_birth"}),
    ("My date of birth is 1985-03-12", ["1985-03-12"], {"date_of_birth"}),
    ("my NHS number is 943 476 5919", ["943 476 5919"], {"id"}),
]


def _on_disk(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.iterdir() if p.is_file())


def _gate(tmp_path: Path, pii: str | None) -> MemoryGate:
    store = MemoryStore(tmp_path / "memories.db")
    kw = {} if pii is None else {"pii": pii}
    return MemoryGate(store, judge=FixedJudge(ADMITTING), **kw)


@pytest.mark.parametrize(("text", "parts", "kinds"), PERSONAL, ids=[p[0][:24] for p in PERSONAL])
def test_code_finds_the_personal_data(text, parts, kinds):
    found = find_personal(text)
    assert {f.kind for f in found} == kinds
    spans = [text[f.start:f.end] for f in found]
    for part in parts:
        assert any(part in s for s in spans), (part, spans)


@pytest.mark.parametrize("text", [
    "My flight to Lisbon is TP 1357 on the 9th.", "I usually take bus 38 to work.",
    "The kids' school starts at 08:45 and finishes at 15:15.", "I'm saving towards £2,000 for a new bike.",
    "The model number of my washing machine is WAN28281GB", "we run python 3.12.4", "order #5512 is late",
    "My shoe size is 9 UK, 43 EU.", "Remind me to call mum on Sundays.", "look at this dot product",
    "I live in Leeds", "My birthday is in May", "the meeting is at 3 pm in room 4111",
])
def test_look_alikes_are_no_personal_data(text):
    assert find_personal(text) == []


@pytest.mark.parametrize(("text", "parts", "kinds"), PERSONAL[:3], ids=["phone", "nanp", "email"])
def test_admit_stores_the_text_as_given(tmp_path, text, parts, kinds):
    gate = _gate(tmp_path, "admit")
    r = gate.remember(text)
    assert r.outcome == "admit" and r.stored.current and r.stored.text == text
    assert all(p.encode() in _on_disk(tmp_path) for p in parts)


@pytest.mark.parametrize(("text", "parts", "kinds"), PERSONAL, ids=[p[0][:24] for p in PERSONAL])
def test_redact_stores_the_memory_with_the_parts_replaced(tmp_path, text, parts, kinds):
    gate = _gate(tmp_path, "redact")
    r = gate.remember(text)
    assert r.outcome == "admit" and r.admitted and r.stored.current, r.reason
    stored = gate.store.get(r.stored.id).text
    assert stored == r.redacted != text
    assert all(f"[{k}]" in stored for k in kinds), stored
    assert r.candidate == text and "personal data" in r.reason
    gate.store.close()
    disk = _on_disk(tmp_path)
    for part in parts:
        assert part not in stored and part.encode() not in disk


@pytest.mark.parametrize(("text", "parts", "kinds"), PERSONAL, ids=[p[0][:24] for p in PERSONAL])
def test_hold_sends_it_to_review_with_the_redacted_text(tmp_path, text, parts, kinds):
    gate = _gate(tmp_path, "hold")
    r = gate.remember(text)
    assert r.outcome == "hold" and not r.admitted and r.decision is None  # code decided, no model asked
    held = gate.store.get(r.stored.id)
    assert held.status == "held" and not held.current and gate.store.current() == []
    assert held.text == r.redacted and all(f"[{k}]" in held.text for k in kinds)
    assert "personal data" in held.meta["reason"]
    gate.store.close()
    disk = _on_disk(tmp_path)
    for part in parts:
        assert part not in held.text and part.encode() not in disk


def test_the_default_is_redact(tmp_path):
    gate = _gate(tmp_path, None)
    assert gate.pii == "redact"
    r = gate.remember("my work email is jane.doe@example.com")
    assert r.stored.current and r.stored.text == "my work email is [email]"


def test_the_judge_sees_only_the_redacted_text(tmp_path):
    seen = []

    class Recording(FixedJudge):
        def ask(self, state, questions):
            seen.append(state)
            return super().ask(state, questions)

    gate = MemoryGate(MemoryStore(tmp_path / "m.db"), judge=Recording(ADMITTING))
    gate.remember("call me on +1 415 555 0132 after six")
    assert seen and all("555" not in str(s) for s in seen)


def test_a_secret_is_rejected_whatever_the_setting(tmp_path):
    for pii in ("admit", "redact", "hold"):
        gate = MemoryGate(MemoryStore(tmp_path / f"{pii}.db"), judge=FixedJudge(ADMITTING), pii=pii)
        r = gate.remember("my SSN is 123-45-6789 and my phone is +44 7700 900123")
        assert r.outcome == "reject" and r.stored is None and len(gate.store) == 0


def test_a_memory_without_personal_data_is_untouched(tmp_path):
    for pii in ("redact", "hold"):
        gate = MemoryGate(MemoryStore(tmp_path / f"{pii}.db"), judge=FixedJudge(ADMITTING), pii=pii)
        r = gate.remember("I prefer window seats on planes")
        assert r.outcome == "admit" and r.stored.text == "I prefer window seats on planes" and r.redacted is None


@pytest.mark.parametrize("pii", ["Redact", "keep", "", None, 1, True])
def test_an_unknown_setting_is_an_input_error(pii):
    with pytest.raises(InputError, match="pii must be one of 'admit', 'redact', 'hold'"):
        MemoryGate(MemoryStore(":memory:"), judge=FixedJudge(ADMITTING), pii=pii)
