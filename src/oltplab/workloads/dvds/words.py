"""The word lists of the DVD-Store-derived shop: made up here, from syllables, by a fixed rule.

One source for the build (population.py) and the users (the C terminal receives these tuples
from Python): product titles are two TITLE_WORDS, actors ACTOR_FIRST + ' ' + ACTOR_LAST, so
every title word and actor name a user searches for is in the catalogue. Every word is
uppercase ASCII letters only, which PostgreSQL's 'simple' text-search configuration keeps as one
token (lowercased), and no word is in two lists.

The words come from a generator seeded with a constant string (``random.Random`` with a str
seed is stable across Python versions), so they are the same on every machine.
"""

from __future__ import annotations

import random as _random

_ONSETS = ("B", "C", "D", "F", "G", "H", "J", "K", "L", "M", "N", "P", "R", "S", "T", "V",
           "W", "Z", "BL", "BR", "CH", "CL", "CR", "DR", "FL", "FR", "GL", "GR", "PL", "PR",
           "SH", "SK", "SL", "SN", "SP", "ST", "TH", "TR", "VR", "WH")
_VOWELS = ("A", "E", "I", "O", "U", "AI", "EA", "EE", "OA", "OO", "OU", "Y")
_CODAS = ("", "", "", "N", "R", "S", "L", "M", "T", "X", "ND", "RK", "ST", "NG")
_NAME_ENDS = ("A", "O", "IE", "EN", "IO", "AS", "EL", "INE", "ON", "US", "ETTE", "ARD",
              "ICK", "ELL", "ANO", "IS")
_FAMILY_ENDS = ("SON", "MAN", "TON", "LEY", "WOOD", "BURG", "FORD", "STEIN", "ELLI", "OVA",
                "SKI", "BERG", "WELL", "HART", "DALE", "MORE")


def _syllable(rng) -> str:
    return rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)


def _make(tag: str, count: int, shape, taken: set[str]) -> tuple[str, ...]:
    """``count`` new distinct words of ``shape(rng)``, 3 to 12 letters, none in ``taken``."""
    rng = _random.Random(f"oltplab-dvds-words:{tag}")
    out: list[str] = []
    while len(out) < count:
        word = shape(rng)
        if 3 <= len(word) <= 12 and word not in taken:
            taken.add(word)
            out.append(word)
    return tuple(out)


_taken: set[str] = set()

#: 1,000 words; a title is two of them.
TITLE_WORDS = _make("title", 1000, lambda r: _syllable(r) + _syllable(r), _taken)
#: 200 first names and 200 last names; an actor is one of each.
ACTOR_FIRST = _make("first", 200, lambda r: _syllable(r) + r.choice(_NAME_ENDS), _taken)
ACTOR_LAST = _make("last", 200, lambda r: _syllable(r) + r.choice(_FAMILY_ENDS), _taken)
del _taken

#: The 16 categories, ids 1..16 in this order.
CATEGORIES = ("Adventure", "Animation", "Biography", "Comedy", "Crime", "Documentary",
              "Drama", "Family", "Fantasy", "History", "Horror", "Musical", "Mystery",
              "Romance", "Science Fiction", "Western")
#: Where the customers outside the US live (region 2).
COUNTRIES = ("Argentina", "Australia", "Canada", "Egypt", "Finland", "Italy", "Japan",
             "Mexico", "Norway", "Singapore")
#: Where the customers in the US live (region 1): the 50 states' postal codes.
STATES = ("AK", "AL", "AR", "AZ", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "IA", "ID", "IL",
          "IN", "KS", "KY", "LA", "MA", "MD", "ME", "MI", "MN", "MO", "MS", "MT", "NC", "ND",
          "NE", "NH", "NJ", "NM", "NV", "NY", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN",
          "TX", "UT", "VA", "VT", "WA", "WI", "WV", "WY")
#: Credit card types are numbered 1..CREDIT_CARD_TYPES.
CREDIT_CARD_TYPES = 5
