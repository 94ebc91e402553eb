"""Pieces of the training mixture that need no data set (the full build reads ../shared/data)."""

from seams.training.mixture import ToolItem, _closest_tools


def test_hard_tool_negatives_are_the_tools_sharing_most_words_with_the_request():
    pool = {
        "book_flight": "Book a flight between two airports on a date.",
        "flight_status": "Say whether a flight is delayed.",
        "weather": "Today's weather for a city.",
        "translate": "Translate a sentence.",
        "convert_currency": None,
    }
    it = ToolItem("is my flight to Paris delayed today?", "flight_status", {}, "synthetic", pool)
    others = [n for n in pool if n != it.gold]
    assert _closest_tools(it, others, 2) == ["book_flight", "weather"]
    assert _closest_tools(it, others, 10) == ["book_flight", "weather", "convert_currency", "translate"]
