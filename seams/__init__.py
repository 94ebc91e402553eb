"""seams: typed decisions at the seams of AI agents."""

from .answers import Answers, ChoiceAnswer, NoulAnswer, ScoreAnswer, normalize_score, rank_options
from .questions import Choice, Noul, Score

__version__ = "0.1.0"

__all__ = [
    "Answers",
    "Choice",
    "ChoiceAnswer",
    "Noul",
    "NoulAnswer",
    "Score",
    "ScoreAnswer",
    "__version__",
    "normalize_score",
    "rank_options",
]
