"""Build the labelled sets of the built-in seams from the public data in ../shared/data.

    python scripts/calibration/build_seam_sets.py [--data ../shared/data]

Writes, per seam, two JSONL files in the labelled-set format (`{"id", "state", "labels"}`):

* `calibration/<seam>/fit.jsonl` — what `seams calibrate` fits thresholds and calibrators on;
* `calibration/<seam>/heldout.jsonl` — never fitted on; `bench/seams_vs_baselines.py` and
  `seams eval` measure on it.

Every item comes from the *evaluation* side of the shipped model's training split (the same
stable hashes `training.mixture` uses), so nothing here was trained on; fit and held-out
are then split by a stable hash of the item id. States are built exactly as the typed seams build
them (memory first, then candidate; query, then passage). Labels are mapped from each source's
own labels as written below; every mapping is an approximation and is named in the item's `id`
prefix so a reviewer can trace it. Deterministic: the same data gives the same files.
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import hashlib
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from seams.secrets import find_secrets
from training import mixture as M  # the training split's readers and hashes

csv.field_size_limit(10**8)
MAX_BYTES = 2_000_000


def _hash(key: str) -> int:
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16)


def _heldout(item_id: str) -> bool:
    return _hash("seam-split:" + item_id) % 2 == 1


def _id(prefix: str, *parts: str) -> str:
    return f"{prefix}-{hashlib.sha256('|'.join(parts).encode('utf-8')).hexdigest()[:12]}"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _cap(items: list[dict[str, Any]], n: int, rng: random.Random) -> list[dict[str, Any]]:
    if len(items) <= n:
        return items
    return rng.sample(items, n)


# ------------------------------------------------------------------------------- memory


def memory_items(data: Path, rng: random.Random) -> list[dict[str, Any]]:
    """Pairs (memory, candidate) labelled for the memory-admission questions.

    * NLI-style pairs from the model's evaluation split: restates → restatement (and the memory
      implies the candidate: `poorer` true), corrects → correction, adds → enrichment; all related.
    * Unrelated pairs: a memory and a candidate drawn from two different pairs → related false.
    * Instructions aimed at the system (deepset prompt injections, short jailbreaks, BIPIA attack
      instructions of the held-out families) → `poison` true; statements from the NLI pairs →
      `poison` false.
    * Worth keeping: declarative sentences (SNLI/MNLI premises) true; CLINC150 requests and
      questions (validation split) false.
    """
    out: list[dict[str, Any]] = []
    rel = {"restates": "restatement", "corrects": "correction", "adds": "enrichment"}
    pairs = M.memory_pairs(data, "eval")
    by_source: dict[str, list[Any]] = {}
    for p in pairs:
        by_source.setdefault(p.source, []).append(p)
    chosen = []
    for src, ps in sorted(by_source.items()):
        chosen += rng.sample(ps, min(len(ps), 450))
    for p in chosen:
        labels: dict[str, Any] = {"related": True, "relation": rel[p.label], "poorer": p.label == "restates"}
        out.append({"id": _id(f"mem-{p.source}-{p.label}", p.a, p.b), "state": {"memory": p.a, "candidate": p.b},
                    "labels": labels})
    # unrelated pairs
    texts_a = [p.a for p in chosen]
    texts_b = [p.b for p in chosen]
    for i in range(500):
        a, b = rng.choice(texts_a), rng.choice(texts_b)
        if _overlap(a, b) > 0.2:
            continue
        out.append({"id": _id("mem-random-unrelated", a, b), "state": {"memory": a, "candidate": b},
                    "labels": {"related": False, "poorer": False}})
    # poisoning: instructions aimed at the system vs ordinary text
    # Only the attack side of deepset / jailbreak is used: their benign side is requests to the
    # assistant ("write a poem about ..."), which are instructions aimed at it too — not a memory,
    # but not the negative this question needs. Negatives are statements (below).
    inj = [x for x in M.injection_items(data, "eval")
           if x[3] in ("deepset", "jailbreak") and x[2] and len(x[0]) < 600]
    for text, _, _, src in inj:
        mem = rng.choice(texts_a)
        out.append({"id": _id(f"mem-poison-{src}", text), "state": {"memory": mem, "candidate": text},
                    "labels": {"poison": True}})
    # BIPIA attack instructions of the held-out families, as memories an attacker would plant;
    # declarative sentences from the same evaluation pairs as the ordinary side
    attacks = json.loads((data / "injection/bipia/text_attack_train.json").read_text())
    for cat in sorted(M.BIPIA_EVAL_TEXT):
        for text in attacks.get(cat, []):
            out.append({"id": _id("mem-poison-bipia-attack", text),
                        "state": {"memory": rng.choice(texts_a), "candidate": text}, "labels": {"poison": True}})
    for b in rng.sample(texts_b, 200):
        out.append({"id": _id("mem-poison-statement", b),
                    "state": {"memory": rng.choice(texts_a), "candidate": b}, "labels": {"poison": False}})
    # secrets: ordinary evaluation sentences with a credential spliced in (as BIPIA splices attacks
    # into contexts) vs the same kind of sentences without one. Code rejects every spliced one
    # before the model is asked (seams.secrets), so they are left out: fitted on them, the flags
    # rule put ordinary facts (P(secret) 0.07) into its review band for a case the model never
    # sees at run time. The plain sentences stay as the flag's negatives.
    plain = rng.sample(texts_b, 300)
    for i, b in enumerate(plain):
        if i % 2:
            text = f"{b.rstrip('.')}. {_credential(rng)}"
            if find_secrets(text):  # what code catches never reaches the model
                continue
            out.append({"id": _id("mem-secret-spliced", text), "state": {"memory": rng.choice(texts_a), "candidate": text},
                        "labels": {"secret": True}})
        else:
            out.append({"id": _id("mem-secret-none", b), "state": {"memory": rng.choice(texts_a), "candidate": b},
                        "labels": {"secret": False}})
    # worth keeping: statements vs requests
    snli = [json.loads(x) for x in (data / "nli/snli_dev.jsonl").read_text(encoding="utf-8").splitlines() if x]
    premises = sorted({r.get("premise") or r.get("sentence1") or "" for r in snli} - {""})
    premises = [s for s in premises if M.is_eval(s, 0.2)]
    clinc = json.loads((data / "intents/clinc150_train_val.json").read_text())
    requests = [t for t, _ in clinc["val"]]
    for s in rng.sample(premises, min(250, len(premises))):
        out.append({"id": _id("mem-worth-snli-statement", s),
                    "state": {"memory": "nothing stored", "candidate": s}, "labels": {"worth": True}})
    for s in rng.sample(requests, 250):
        out.append({"id": _id("mem-worth-clinc-request", s),
                    "state": {"memory": "nothing stored", "candidate": s}, "labels": {"worth": False}})
    return out


def _luhn_number(rng: random.Random) -> str:
    digits = [rng.choice("3456")] + [str(rng.randrange(10)) for _ in range(14)]
    for check in range(10):
        total = 0
        for i, ch in enumerate(reversed(digits + [str(check)])):
            d = int(ch) * (2 if i % 2 else 1)
            total += d - 9 if d > 9 else d
        if total % 10 == 0:
            digits.append(str(check))
            break
    n = "".join(digits)
    return " ".join(n[i:i + 4] for i in range(0, 16, 4))


def _credential(rng: random.Random) -> str:
    alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    token = "".join(rng.choice(alnum) for _ in range(28))
    word = rng.choice(["sunflower", "tiger", "marble", "rocket", "harbor", "violet"]) + str(rng.randrange(10, 9999))
    forms = [
        f"My password is {word}!",
        f"The API key for the account is sk-{token}.",
        f"Use the access token ghp_{token}{token[:8]} for the repository.",
        f"My card number is {_luhn_number(rng)}.",
        f"The login is admin and the password is {word}.",
        f"The AWS key is AKIA{token[:16].upper()}.",
    ]
    return rng.choice(forms)


def _overlap(a: str, b: str) -> float:
    x, y = set(re.findall(r"\w+", a.lower())), set(re.findall(r"\w+", b.lower()))
    return len(x & y) / max(1, len(x | y))


# ------------------------------------------------------------------------------- passages


def _scifact(data: Path) -> list[tuple[str, str, str]]:
    """(claim, evidence sentences, SUPPORT|CONTRADICT) from SciFact (an eval-only set)."""
    corpus: dict[str, list[str]] = {}
    with open(data / "relevance/scifact/corpus.csv", encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            corpus[r["doc_id"]] = re.findall(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"", r["abstract"])
    out = []
    with open(data / "relevance/scifact/claims_train.csv", encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            if r["evidence_label"] not in ("SUPPORT", "CONTRADICT"):
                continue
            sents = [a or b for a, b in corpus.get(r["evidence_doc_id"], [])]
            try:
                idx = ast.literal_eval(r["evidence_sentences"])
            except (ValueError, SyntaxError):
                continue
            ev = " ".join(sents[i] for i in idx if 0 <= i < len(sents))
            if ev:
                out.append((r["claim"], ev[:1200], r["evidence_label"]))
    return out


# the passage gate's `contradicts` Choice (entailment / neutral / contradiction) from each source's label
_STANCE = {"SUPPORT": "entailment", "SUPPORTS": "entailment", "CONTRADICT": "contradiction",
           "REFUTES": "contradiction", "NOINFO": "neutral", "NOT ENOUGH INFO": "neutral"}


def passage_items(data: Path, rng: random.Random) -> list[dict[str, Any]]:
    """(query, passage) pairs labelled for the passage-gate questions.

    * relevant: QNLI question/sentence pairs of the evaluation split (+ random passages as easy
      negatives, as in training);
    * evidence: WiCE claims and evidence (supported / not supported), evaluation split;
    * contradicts (and evidence): SciFact CONTRADICT / SUPPORT evidence, FEVER-symmetric test
      REFUTES / SUPPORTS;
    * injection: BIPIA contexts with an attack inserted (held-out attack families) vs the plain
      context, with the user's task as the query.
    """
    out: list[dict[str, Any]] = []
    for q, p, lab, src in _cap([r for r in M.relevance_pairs(data, "eval")], 700, rng):
        out.append({"id": _id(f"psg-{src}-relevant", q, p), "state": {"query": q, "passage": p},
                    "labels": {"relevant": lab}})
    for c, e, lab, src in _cap(M.evidence_pairs(data, "eval"), 400, rng):
        out.append({"id": _id(f"psg-{src}-evidence", c, e), "state": {"query": c, "passage": e},
                    "labels": {"evidence": lab}})
    sci = _scifact(data)
    for c, e, lab in sci:
        out.append({"id": _id(f"psg-scifact-{lab.lower()}", c, e), "state": {"query": c, "passage": e},
                    "labels": {"contradicts": _STANCE[lab], "evidence": lab == "SUPPORT"}})
    fever = _jsonl(data / "nli/fever_symmetric/fever_symmetric_test.jsonl")
    for r in _cap(fever, 400, rng):
        if r.get("label") not in ("SUPPORTS", "REFUTES"):
            continue
        c, e = M._clean_wiki(r["claim"]), M._clean_wiki(r["evidence"])
        out.append({"id": _id(f"psg-fever-{r['label'].lower()}", c, e), "state": {"query": c, "passage": e},
                    "labels": {"contradicts": _STANCE[r["label"]], "evidence": r["label"] == "SUPPORTS"}})
    # BIPIA contexts with and without an attack, and ordinary relevant passages as negatives too:
    # beside a question-form query a small model reads plain Wikipedia sentences as instructions
    # more often than BIPIA's plain contexts (15 % of held-out QNLI passages over 0.79 with 0.4),
    # and a fit that never saw them put its cut below them.
    bipia = [x for x in M.injection_items(data, "eval") if x[3].startswith("bipia") and x[1]]
    for text, task, is_inj, src in _cap(bipia, 400, rng):
        out.append({"id": _id(f"psg-{src}-injection", text, task or ""), "state": {"query": task, "passage": text},
                    "labels": {"injection": is_inj}})
    plain = sorted({(q, p) for q, p, lab, src in M.relevance_pairs(data, "eval") if lab and src == "qnli"})
    for q, p in _cap(plain, 200, rng):
        out.append({"id": _id("psg-qnli-plain-injection", q, p), "state": {"query": q, "passage": p},
                    "labels": {"injection": False}})
    return out


# ------------------------------------------------------------------------------- tools


def tool_items(data: Path, rng: random.Random) -> list[dict[str, Any]]:
    """Requests with a roster: BFCL multiple (gold function) and irrelevance (no call fits).

    Each line is what `ToolSelector` asks, in the state it asks it in. The gate asks each of the
    shortlist's top tools alone and reads the maximum, so the gate line's state is `{request,
    tools: [one line]}` with the tool that maximum comes from: the gold tool where one fits (label
    `applies` true), else the roster's tool sharing the most words with the request (false, the
    irrelevance tool most likely to open the gate; a proxy for the top of the shortlist, which
    depends on the model). Where a tool fits and the roster has two or more, a second line (`-choice`) has the state
    `{request}` alone — the Choices carry the roster as their options, as at run time — with its own
    `shortlist` and `tool` Choices (built by `ToolSelector` itself) and the gold name as `tool`.
    Both lines of a request land in the same split. `bench/seams_vs_baselines.py` finds each
    item's roster again from BFCL by its request.
    """
    from seams.builtin.tools import Tool, ToolSelector, _humanise, _words

    multiple, irrelevance = M.bfcl_eval(data)
    out = []
    for it in multiple + irrelevance:
        roster = [Tool(k, v or "") for k, v in it.tools.items()]
        sel = ToolSelector(roster)
        base = _id(f"tool-{it.source}", it.request, *sorted(it.tools))
        asked = it.gold or M._closest_tools(dataclasses.replace(it, pool=it.tools), list(it.tools), 1)[0]
        out.append({"id": base, "state": sel.gate_states(it.request, [asked])[0],
                    "labels": {"applies": it.gold is not None}})
        if len(roster) >= 2 and it.gold is not None:
            short = {t.name: t.short(sel.short_words) or _humanise(t.name) for t in roster}
            full = {t.name: _words(t.description, sel.full_words) or _humanise(t.name) for t in roster}
            out.append({"id": base + "-choice", "split": base, "state": {"request": it.request},
                        "questions": {"shortlist": sel._choice("shortlist", short).wire(),
                                      "tool": sel._choice("tool", full).wire()},
                        "labels": {"tool": it.gold}})
    return out


# ------------------------------------------------------------------------------- output check


def output_items(data: Path, rng: random.Random) -> list[dict[str, Any]]:
    """(request, sources, draft) triples labelled for the output-check flags.

    * contradicts_sources / unsupported: FEVER-symmetric test (the evidence is the source, the
      claim the draft; REFUTES contradicts, and is unsupported), WiCE not_supported (unsupported,
      not necessarily contradicting);
    * unanswered: QNLI (the question is the request, the sentence the draft; a sentence that does
      not answer it leaves the request unanswered).
    """
    out: list[dict[str, Any]] = []
    fever = _jsonl(data / "nli/fever_symmetric/fever_symmetric_test.jsonl")
    for r in _cap(fever, 400, rng):
        if r.get("label") not in ("SUPPORTS", "REFUTES"):
            continue
        c, e = M._clean_wiki(r["claim"]), M._clean_wiki(r["evidence"])
        refutes = r["label"] == "REFUTES"
        out.append({"id": _id(f"out-fever-{r['label'].lower()}", c, e),
                    "state": {"request": "Is it true that " + c.rstrip(".") + "?", "sources": e, "draft": c},
                    "labels": {"contradicts_sources": refutes, "unsupported": refutes}})
    for c, e, lab, src in _cap(M.evidence_pairs(data, "eval"), 300, rng):
        out.append({"id": _id(f"out-{src}", c, e),
                    "state": {"request": "Check this claim: " + c, "sources": e, "draft": c},
                    "labels": {"unsupported": not lab}})
    for q, p, lab, src in _cap(M.relevance_pairs(data, "eval"), 400, rng):
        out.append({"id": _id(f"out-{src}-answer", q, p), "state": {"request": q, "sources": "none", "draft": p},
                    "labels": {"unanswered": not lab}})
    return out


# ------------------------------------------------------------------------------- escalation

#: CLINC150's ten domains (the dataset's own grouping of its 150 intents, `domains.json` upstream).
CLINC_DOMAINS = {
    "banking": ["transfer", "transactions", "balance", "freeze_account", "pay_bill", "bill_balance", "bill_due",
                "interest_rate", "routing", "min_payment", "order_checks", "pin_change", "report_fraud",
                "account_blocked", "spending_history"],
    "credit_cards": ["credit_score", "report_lost_card", "credit_limit", "rewards_balance", "new_card",
                     "application_status", "card_declined", "international_fees", "apr", "redeem_rewards",
                     "credit_limit_change", "damaged_card", "replacement_card_duration", "improve_credit_score",
                     "expiration_date"],
    "kitchen_dining": ["recipe", "restaurant_reviews", "calories", "nutrition_info", "restaurant_suggestion",
                       "ingredients_list", "ingredient_substitution", "cook_time", "food_last", "meal_suggestion",
                       "restaurant_reservation", "confirm_reservation", "how_busy", "cancel_reservation",
                       "accept_reservations"],
    "home": ["shopping_list", "shopping_list_update", "next_song", "play_music", "update_playlist", "todo_list",
             "todo_list_update", "calendar", "calendar_update", "what_song", "order", "order_status", "reminder",
             "reminder_update", "smart_home"],
    "auto_commute": ["traffic", "directions", "gas", "gas_type", "distance", "current_location", "mpg",
                     "oil_change_when", "oil_change_how", "jump_start", "uber", "schedule_maintenance",
                     "last_maintenance", "tire_pressure", "tire_change"],
    "travel": ["book_flight", "book_hotel", "car_rental", "travel_suggestion", "travel_alert", "travel_notification",
               "carry_on", "timezone", "vaccines", "translate", "flight_status", "international_visa", "lost_luggage",
               "plug_type", "exchange_rate"],
    "utility": ["time", "alarm", "share_location", "find_phone", "weather", "text", "spelling", "make_call", "timer",
                "date", "calculator", "measurement_conversion", "flip_coin", "roll_dice", "definition"],
    "work": ["direct_deposit", "pto_request", "taxes", "payday", "w2", "pto_balance", "pto_request_status",
             "next_holiday", "insurance", "insurance_change", "schedule_meeting", "pto_used", "meeting_schedule",
             "rollover_401k", "income"],
    "small_talk": ["greeting", "goodbye", "tell_joke", "where_are_you_from", "how_old_are_you", "what_is_your_name",
                   "who_made_you", "thank_you", "what_can_i_ask_you", "what_are_your_hobbies", "do_you_have_pets",
                   "are_you_a_bot", "meaning_of_life", "who_do_you_work_for", "fun_fact"],
    "meta": ["change_ai_name", "change_user_name", "cancel", "user_name", "reset_settings", "whisper_mode", "repeat",
             "no", "yes", "maybe", "change_language", "change_accent", "change_volume", "change_speed",
             "sync_device"],
}
CLINC_DOMAIN_OF = {i: d for d, ints in CLINC_DOMAINS.items() for i in ints}

#: What the assistant is for (the `context` field): all ten domains, then one per task domain.
CLINC_ALL_CONTEXT = (
    "A voice assistant for banking, credit cards, kitchen and dining, the home (lists, calendar, reminders, music, "
    "orders, smart devices), car and commute, travel, everyday utilities (time, alarms, weather, calls and texts, "
    "calculations), work (pay, time off, benefits, meetings), small talk about itself, and its own settings.")
DOMAIN_CONTEXT = {
    "banking": "A banking assistant: balances, transfers, transactions, bills, interest rates, routing numbers, "
               "PIN changes, frozen or blocked accounts and fraud reports.",
    "credit_cards": "A credit card assistant: credit score and limit, rewards, APR, card applications, new, lost or "
                    "damaged cards, declined cards and international fees.",
    "kitchen_dining": "A kitchen and dining assistant: recipes, ingredients and substitutions, cooking times, "
                      "calories and nutrition, meal ideas, restaurant suggestions, reviews and reservations.",
    "home": "A home assistant: shopping and to-do lists, calendar, reminders, music and playlists, online orders "
            "and smart-home devices.",
    "auto_commute": "A car and commute assistant: traffic, directions, distances, gas, mileage, car maintenance, "
                    "tyres, jump starts and ride booking.",
    "travel": "A travel assistant: flights, hotels, car rental, travel suggestions and alerts, luggage, visas, "
              "vaccines, time zones, plug types, exchange rates and translation.",
    "utility": "A utility assistant: time and date, alarms and timers, weather, calls and texts, finding the phone, "
               "sharing location, spelling, definitions, calculations and unit conversion.",
    "work": "A workplace assistant: pay and direct deposit, W-2s and taxes, income, time off, holidays, insurance, "
            "401k rollovers and meetings.",
}
BANK_APP_CONTEXT = ("A customer-support assistant for a mobile banking app: cards, top-ups, transfers, card payments, "
                    "cash withdrawals, exchange rates, fees, refunds and identity verification.")
#: Domains whose requests overlap: a request from a neighbour is not counted as out of scope.
NEIGHBOURS = [{"banking", "credit_cards", "work"}, {"travel", "auto_commute", "utility"}, {"kitchen_dining", "home"}]
#: Intents a single-domain assistant could well answer whatever their CLINC domain: never used as out of scope.
GENERIC_INTENTS = {"exchange_rate", "international_fees", "time", "date", "weather", "calculator",
                   "measurement_conversion", "definition", "spelling", "translate", "timezone", "distance",
                   "directions", "current_location", "share_location", "order", "order_status", "schedule_meeting",
                   "meeting_schedule", "calendar", "calendar_update", "reminder", "reminder_update", "text",
                   "make_call"}
#: Banking77 categories read as money at risk now (unauthorised use, money lost or taken, a card or phone
#: out of the customer's control) → harm true; routine information requests → harm false. The rest
#: (declines, pending or failed payments, fees, refunds, verification, card_swallowed,
#: transfer_not_received_by_recipient, extra_charge_on_statement, ...) are left unlabelled.
B77_HARM = {"compromised_card", "lost_or_stolen_card", "lost_or_stolen_phone", "card_payment_not_recognised",
            "cash_withdrawal_not_recognised", "direct_debit_payment_not_recognised", "transaction_charged_twice",
            "wrong_amount_of_cash_received"}
B77_ROUTINE = {"age_limit", "exchange_rate", "top_up_limits", "card_delivery_estimate",
               "supported_cards_and_currencies", "country_support", "visa_or_mastercard", "fiat_currency_support",
               "apple_pay_or_google_pay", "getting_virtual_card", "get_physical_card", "order_physical_card",
               "getting_spare_card", "get_disposable_virtual_card", "disposable_card_limits", "automatic_top_up",
               "exchange_via_app", "edit_personal_details", "card_acceptance", "atm_support", "receiving_money",
               "why_verify_identity"}
#: The same split over CLINC150's banking and credit-card intents.
CLINC_HARM = {"report_fraud", "report_lost_card"}
CLINC_ROUTINE = {"routing", "interest_rate", "apr", "rewards_balance", "credit_limit", "international_fees",
                 "expiration_date", "replacement_card_duration", "bill_due", "min_payment", "exchange_rate"}


def _neighbours(a: str, b: str) -> bool:
    return a == b or any(a in g and b in g for g in NEIGHBOURS)


def escalation_items(data: Path, rng: random.Random) -> list[dict[str, Any]]:
    """(message, context) pairs labelled for two of the escalation questions.

    * out_of_scope — CLINC150 validation split (the evaluation side; its train split trained the
      model): with a context listing all ten CLINC domains, `oos` utterances true and in-scope ones
      false (CLINC's own label); with a one-domain context, an utterance of that domain false and
      one of an unrelated domain true (domain membership as a proxy: neighbouring domains and
      generic intents are left out, small talk and meta never used); with a banking-app context,
      Banking77 utterances (evaluation side) false and CLINC utterances of non-money domains true.
    * harm — a category proxy: Banking77 categories that mean money at risk now (`B77_HARM`) true,
      routine information categories (`B77_ROUTINE`) false, the rest unlabelled; the same over
      CLINC150's banking and credit-card intents. Only money is covered, not health, safety or
      legal position, and a category says what a message is about, not how serious it is ("I found
      my card again" is filed under lost_or_stolen_card).
    * asks_human, upset — no source here labels them (no CLINC150 intent or Banking77 category asks
      for a person or marks anger; `are_you_a_bot` asks what the assistant is, not for a human):
      left unlabelled, so `seams calibrate` keeps their rule's thresholds as written.
    """
    out: list[dict[str, Any]] = []
    clinc = json.loads((data / "intents/clinc150_train_val.json").read_text())
    if sorted(CLINC_DOMAIN_OF) != sorted({lab for _, lab in clinc["train"]}):
        raise SystemExit("CLINC_DOMAINS does not list CLINC150's intents exactly")
    val = [(t, lab) for t, lab in clinc["val"]]
    oos = [t for t, _ in clinc["oos_val"]]

    def add(prefix: str, message: str, context: str, labels: dict[str, Any]) -> None:
        out.append({"id": _id(prefix, message, context), "state": {"message": message, "context": context},
                    "labels": labels})

    # out of scope: CLINC's own oos label, one context for all ten domains
    for t in oos:
        add("esc-clinc-oos", t, CLINC_ALL_CONTEXT, {"out_of_scope": True})
    for t, _ in rng.sample(val, 100):
        add("esc-clinc-inscope", t, CLINC_ALL_CONTEXT, {"out_of_scope": False})
    # out of scope: domain membership under a one-domain context
    task_domains = sorted(DOMAIN_CONTEXT)
    usable = [(t, lab) for t, lab in val if CLINC_DOMAIN_OF[lab] in DOMAIN_CONTEXT and lab not in GENERIC_INTENTS]
    for t, lab in rng.sample(usable, 150):
        add("esc-clinc-domain-same", t, DOMAIN_CONTEXT[CLINC_DOMAIN_OF[lab]], {"out_of_scope": False})
    for t, lab in rng.sample(usable, 150):
        other = [d for d in task_domains if not _neighbours(d, CLINC_DOMAIN_OF[lab])]
        add("esc-clinc-domain-other", t, DOMAIN_CONTEXT[rng.choice(other)], {"out_of_scope": True})
    # out of scope: a banking app's support assistant
    with open(data / "intents/banking77_train.csv", encoding="utf-8", newline="") as f:
        b77 = [(r["text"], r["category"]) for r in csv.DictReader(f) if M.is_eval(r["text"], 0.15)]
    plain = [x for x in b77 if x[1] not in B77_HARM | B77_ROUTINE]
    for t, _ in rng.sample(plain, 100):
        add("esc-banking77-inscope", t, BANK_APP_CONTEXT, {"out_of_scope": False})
    far = [(t, lab) for t, lab in val if not _neighbours(CLINC_DOMAIN_OF[lab], "banking")
           and CLINC_DOMAIN_OF[lab] in DOMAIN_CONTEXT and lab not in GENERIC_INTENTS]
    for t, _ in rng.sample(far, 100):
        add("esc-clinc-offdomain-bankapp", t, BANK_APP_CONTEXT, {"out_of_scope": True})
    # harm: a category proxy (money at risk vs routine questions)
    pos = [x for x in b77 if x[1] in B77_HARM]
    neg = [x for x in b77 if x[1] in B77_ROUTINE]
    for t, _ in _cap(pos, 250, rng):
        add("esc-banking77-harmcat-risk", t, BANK_APP_CONTEXT, {"harm": True})
    for t, _ in _cap(neg, 200, rng):
        add("esc-banking77-harmcat-routine", t, BANK_APP_CONTEXT, {"harm": False})
    for t, lab in val:
        if lab in CLINC_HARM:
            add("esc-clinc-harmcat-risk", t, DOMAIN_CONTEXT[CLINC_DOMAIN_OF[lab]], {"harm": True})
    for t, lab in _cap([x for x in val if x[1] in CLINC_ROUTINE], 60, rng):
        add("esc-clinc-harmcat-routine", t, DOMAIN_CONTEXT[CLINC_DOMAIN_OF[lab]], {"harm": False})
    return out


# ------------------------------------------------------------------------------- confirm before act

#: The name rule for `irreversible`: the first word of a tool's name (after its last ".", camelCase
#: split) decides. Verbs that delete, send, pay, book or buy → true; verbs that read, compute or
#: change an easily reverted setting → false; any other name is left unlabelled.
IRREVERSIBLE_VERBS = {"delete", "remove", "cancel", "send", "transfer", "pay", "book", "purchase", "buy", "order",
                      "submit", "reserve", "publish", "post", "withdraw"}
REVERSIBLE_VERBS = {"get", "list", "search", "calculate", "calc", "find", "convert", "check", "fetch", "retrieve",
                    "locate", "lookup", "show", "view", "read", "compute", "estimate", "predict", "analyze", "analyse",
                    "identify", "determine", "evaluate", "recommend", "translate", "solve", "change", "play"}
#: Names the rule would misread, with the reading used instead (None: unlabelled).
IRREVERSIBLE_EXCEPTIONS: dict[str, bool | None] = {
    "order_status": False,  # reads an order's status
    "cancel": None,  # CLINC meta: "cancel that" stops the assistant's current request
}
#: CLINC150 intents used as actions (validation utterances as requests).
CLINC_ACTIONS = ["transfer", "pay_bill", "book_flight", "book_hotel", "cancel_reservation", "order", "order_checks",
                 "find_phone", "translate", "play_music", "change_accent", "change_ai_name", "change_language",
                 "change_speed", "change_user_name", "change_volume"]


def irreversible_by_name(name: str) -> bool | None:
    if name in IRREVERSIBLE_EXCEPTIONS:
        return IRREVERSIBLE_EXCEPTIONS[name]
    last = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name.split(".")[-1]).lower()
    verb = last.split("_")[0]
    if verb in IRREVERSIBLE_VERBS:
        return True
    if verb in REVERSIBLE_VERBS:
        return False
    return None


def _action(name: str, description: str | None) -> str:
    """An action as the state shows it: the tool's name and what it does (`name: description`)."""
    return f"{name}: {M._short(description)}" if description else name


def confirm_items(data: Path, rng: random.Random) -> list[dict[str, Any]]:
    """(request, action) pairs labelled for the confirm-before-act questions.

    * matches — the gold tool as the action true, another tool false: BFCL `multiple` (gold from
      `possible_answer/`, the other tool from the same roster: a near miss); MetaTool queries of the
      evaluation side (gold tool vs a random tool whose description shares little with the gold's;
      MetaTool has near-duplicate tools); CLINC150 validation utterances (the gold intent vs another
      action intent, of the same domain where there is one). An action is `name: description`
      without arguments: only the gold call has arguments, and giving them to one side only would
      let the form give the label away.
    * irreversible — a name-based proxy (`irreversible_by_name`: the tool name's verb) on the BFCL
      and CLINC150 items whose action the rule labels (a third of BFCL's false ones, which would
      otherwise outnumber the true ones five to one); not on MetaTool, whose tools have product
      names ("BookTool" is no booking). It reads the verb, not what the tool really does (a "book"
      that can be cancelled for free counts as irreversible).
    """
    out: list[dict[str, Any]] = []

    def add(prefix: str, request: str, name: str, desc: str | None, match: bool, *, by_name: bool = True) -> None:
        action = _action(name, desc)
        labels: dict[str, Any] = {"matches": match}
        irr = irreversible_by_name(name) if by_name else None
        if irr is False and prefix.startswith("cba-bfcl") and rng.random() >= 0.35:
            irr = None  # BFCL is mostly get/calculate/find: keep a third of its false labels, near balance
        if irr is not None:
            labels["irreversible"] = irr
        tag = "" if irr is None else "-irrname"
        out.append({"id": _id(f"{prefix}{tag}", request, action), "state": {"request": request, "action": action},
                    "labels": labels})

    multiple, _ = M.bfcl_eval(data)
    for it in multiple:
        others = sorted(n for n in it.tools if n != it.gold)
        if it.gold not in it.tools or not others:
            continue
        add("cba-bfcl_multiple-gold", it.request, it.gold, it.tools[it.gold], True)
        o = rng.choice(others)
        add("cba-bfcl_multiple-other", it.request, o, it.tools[o], False)
    des = json.loads((data / "tools/metatool/plugin_des.json").read_text())
    with open(data / "tools/metatool/all_clean_data.csv", encoding="utf-8", newline="") as f:
        meta = [(r["Query"], r["Tool"]) for r in csv.DictReader(f) if r["Tool"] in des and M.is_eval(r["Query"], 0.15)]
    names = sorted(des)
    for q, tool in rng.sample(meta, 120):
        add("cba-metatool-gold", q, tool, des[tool], True, by_name=False)
    for q, tool in rng.sample(meta, 120):
        other = rng.choice([n for n in names if n != tool and _overlap(des[n], des[tool]) < 0.1])
        add("cba-metatool-random", q, other, des[other], False, by_name=False)
    clinc = json.loads((data / "intents/clinc150_train_val.json").read_text())
    for t, lab in clinc["val"]:
        if lab not in CLINC_ACTIONS:
            continue
        if rng.random() < 0.5:
            add("cba-clinc-gold", t, lab, None, True)
        else:
            same = [a for a in CLINC_ACTIONS if a != lab and CLINC_DOMAIN_OF[a] == CLINC_DOMAIN_OF[lab]]
            other = rng.choice(same or [a for a in CLINC_ACTIONS if a != lab])
            add("cba-clinc-other", t, other, None, False)
    return out


# ------------------------------------------------------------------------------- model routing

#: How many of the 100 BERT fine-tuning runs (McCoy et al.'s MNLI dev-matched counts) got an item
#: right: at most HARD_MAX → hard (the strong model), at least EASY_MIN → easy (the small one).
HARD_MAX, EASY_MIN = 60, 98


def _nli_task(premise: str, hypothesis: str) -> str:
    """An NLI item written as a user would ask it."""
    return (f'First sentence: "{premise.strip()}" Second sentence: "{hypothesis.strip()}" '
            "Does the first sentence imply the second, contradict it, or neither?")


def routing_items(data: Path, rng: random.Random) -> list[dict[str, Any]]:
    """Tasks labelled with a level of the model-routing `difficulty` Score (2 hard, 0 easy).

    A measured difficulty proxy: MNLI dev-matched items with how many of 100 BERT fine-tuning runs
    got each right (`nli/mnli_dev_matched.tsv`, last column), asked as a user would ask an NLI
    task (the premise, the hypothesis, and whether the first implies the second, contradicts it,
    or neither). At most 60 of 100 right → `difficulty` level 2, "several steps of reasoning"
    (hard: the rule's cut-points send it to the strong model); at least 98 right → level 0 (easy:
    the small model); the items in between (61–97) are dropped, not labelled. Only the evaluation side of the training split (by premise, as
    `training.mixture.nli_pairs` splits it), since the training mixture reads this file.
    Every hard item is kept; as many easy ones are drawn, gold label by gold label in the hard
    items' proportions, so neither the class balance nor the NLI label gives the difficulty away.
    It measures difficulty for a fine-tuned BERT on one kind of task, not for an LLM on tasks
    in general. `scripts/calibration/model_routing_signal.py` measures the score's signal on it.
    """
    hard: dict[str, list[tuple[str, str]]] = {}
    easy: dict[str, list[tuple[str, str]]] = {}
    for row in M.read_tsv(data / "nli/mnli_dev_matched.tsv"):
        if len(row) < 5 or row[3] not in ("entailment", "neutral", "contradiction"):
            continue
        _, p, h, lab, right = row[:5]
        if not M.is_eval(p, 0.15):
            continue
        n = int(right)
        if n <= HARD_MAX:
            hard.setdefault(lab, []).append((p, h))
        elif n >= EASY_MIN:
            easy.setdefault(lab, []).append((p, h))
    out: list[dict[str, Any]] = []
    for lab in sorted(hard):
        chosen = [(x, True) for x in hard[lab]] + [(x, False) for x in _cap(easy.get(lab, []), len(hard[lab]), rng)]
        for (p, h), is_hard in chosen:
            out.append({"id": _id(f"route-mnli-bertruns-{'hard' if is_hard else 'easy'}", p, h),
                        "state": {"task": _nli_task(p, h)}, "labels": {"difficulty": 2 if is_hard else 0}})
    return out


BUILDERS = {
    "memory-admission": memory_items,
    "passage-gate": passage_items,
    "tool-selection": tool_items,
    "output-check": output_items,
    "escalation": escalation_items,
    "confirm-before-act": confirm_items,
    "model-routing": routing_items,
}


def write(seam: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    folder = ROOT / seam
    folder.mkdir(parents=True, exist_ok=True)
    seen, unique = set(), []
    for it in sorted(items, key=lambda x: x["id"]):
        if it["id"] not in seen:
            seen.add(it["id"])
            unique.append(it)
    summary: dict[str, Any] = {}
    # an item may name the id whose split it shares (two questions about one source item)
    held = {i["id"]: _heldout(i.pop("split", i["id"])) for i in unique}
    for name, part in (("fit", [i for i in unique if not held[i["id"]]]),
                       ("heldout", [i for i in unique if held[i["id"]]])):
        path = folder / f"{name}.jsonl"
        text = "".join(json.dumps(i, ensure_ascii=False, separators=(",", ":")) + "\n" for i in part)
        size = len(text.encode("utf-8"))
        if size > MAX_BYTES:
            raise SystemExit(f"{path}: {size} bytes, over the {MAX_BYTES} limit for a committed set; lower the caps")
        path.write_text(text, encoding="utf-8")
        counts = Counter(f"{q}={v}" for i in part for q, v in i["labels"].items()
                         if isinstance(v, bool) or q in ("relation",))
        summary[name] = {"items": len(part), "bytes": size, "labels": dict(sorted(counts.items()))}
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=M.DEFAULT_DATA)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--only", nargs="*", default=None, help="seams to build (default: all)")
    args = ap.parse_args(argv)
    path = ROOT / "seam_sets.json"
    # --only rebuilds some seams: keep the others' entries
    report = json.loads(path.read_text(encoding="utf-8")) if args.only and path.exists() else {}
    for seam, build in BUILDERS.items():
        if args.only and seam not in args.only:
            continue
        rng = random.Random(f"{args.seed}:{seam}")
        report[seam] = write(seam, build(args.data, rng))
        print(seam, json.dumps(report[seam]))
    report = {seam: report[seam] for seam in BUILDERS if seam in report}  # one order, whatever was rebuilt
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
