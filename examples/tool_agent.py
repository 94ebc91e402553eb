"""A tool-selecting agent over a real roster, on the shipped model (no key, no network).

    python examples/tool_agent.py

The roster is 24 functions from the Berkeley Function-Calling Leaderboard (BFCL v4, Apache-2.0;
names and descriptions as published). For each request the selector shortlists over the whole
roster, asks of each of the top three whether it can handle the request (a gate, read as the max:
a Choice always names a winner, even when nothing fits), takes a second look at the top three
with their full descriptions, and suggests a tool only when the gate is open and the winner is
above the rubric's threshold. Requests that no tool serves get no tool.
"""

from __future__ import annotations

from seams import Tool, ToolSelector

# From bfcl_eval/data (BFCL_v4_multiple.json, BFCL_v4_simple_python.json), Apache-2.0.
ROSTER = [
    Tool("geodistance.find", "Find the distance between two cities on the globe."),
    Tool("triangle.area", "Calculate the area of a triangle with given base and height"),
    Tool("correlation.calculate", "Calculate the correlation coefficient between two arrays of numbers."),
    Tool("restaurant.find", "Locate restaurants based on specific criteria such as cuisine and price range"),
    Tool("calculate_emission_savings", "Calculate potential greenhouse gas emissions saved by switching to renewable energy sources."),
    Tool("art_auction.fetch_artwork_price", "Fetch the price of a specific artwork on the auction platform."),
    Tool("get_crime_rate", "Retrieve the official crime rate of a city."),
    Tool("us_history.get_president", "Retrieve the U.S. president during a specific event in American history."),
    Tool("generate_law_contract", "Generates a customized law contract given involved parties, contract type and location."),
    Tool("traffic_estimate", "Estimate traffic from one location to another for a specific time period."),
    Tool("us_economy.gdp_by_state_year", "Retrieve historical GDP data for a specific U.S. state and year."),
    Tool("monarch.getMonarchOfYear", "Retrieve the monarch of a specific location during a specified year."),
    Tool("db_fetch_records", "Fetch records from a specified database table based on certain conditions."),
    Tool("generate_DNA_sequence", "Generate a random DNA sequence with a specific length and nucleotide preference."),
    Tool("deck_of_cards.odds", "Compute the probability of drawing a specific suit from a given deck of cards."),
    Tool("sports_team.get_schedule", "Fetches the schedule of the specified sports team for the specified number of games in the given league."),
    Tool("audio.generate", "Generate an audio signal given a frequency, amplitude, and duration."),
    Tool("calculate_electric_field_strength", "Calculate the electric field strength at a certain distance from a point charge."),
    Tool("book_room", "Book a room in a specified hotel."),
    Tool("get_exchange_rate_with_fee", "Retrieve the exchange rate between two currencies including transaction fee."),
    Tool("math.roots.cubic", "Calculate the roots of a cubic equation."),
    Tool("library.reserve_book", "Reserves a book in the library if available."),
    Tool("calculus.derivative", "Compute the derivative of a function at a specific value."),
    Tool("create_histogram", "Create a histogram based on provided data."),
]

REQUESTS = [
    "How far is Paris from Berlin?",
    "Book me a double room at the Hilton in Chicago for next Friday.",
    "What's the derivative of x^3 + 2x at x = 4?",
    "Who was president of the United States during the Louisiana Purchase?",
    "How many euros do I get for 500 dollars, fees included?",
    "Write a haiku about autumn leaves.",          # no tool fits
    "What is the boiling point of water on Mars?",  # no tool fits
]


def main() -> None:
    selector = ToolSelector(ROSTER)
    for request in REQUESTS:
        s = selector.select(request)
        top = ", ".join(f"{n} {p:.2f}" for n, p in s.second_look)
        chosen = s.tool or f"(no tool: {s.outcome})"
        print(f"{request}\n  -> {chosen}   [applies {s.applies:.2f}; second look: {top}]\n")


if __name__ == "__main__":
    main()
