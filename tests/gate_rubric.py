"""The small text rubric the integration tests share. On the tiny model (tests/tinymodel.py) a
"yes …" text agrees (p ≈ 0.99: act), a "no …" text does not (p ≈ 0.001: refuse) and a plain text
reads at about 0.27, in the band between the cut-points (review)."""

GATE = """\
name: {name}
state: text
questions:
  agreed:
    type: noul
    instructions: Does the text agree?
policy:
  outcomes: {{go: act, stop: refuse, review: review}}
  rules:
    - id: agreed
      question: agreed
      high: 0.8
      low: 0.2
      then: go
      else: stop
  default: stop
  on_error: review
"""


def gate_text(name: str) -> str:
    return GATE.format(name=name)
