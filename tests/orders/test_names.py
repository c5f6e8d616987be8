"""Misspelt names: the shortcut past names far off must read every word as comparing with all names would."""

from __future__ import annotations

import difflib
import random
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.orders.names import (
    ACCEPT_RATIO,
    RUNNER_UP_BELOW,
    _likeness,
    _norm,
    understand_name,
)
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of

AREAS = list(ruleset_of(GameState(game_id="g")).areas)


def _compared_with_all(text: str, names: list[str]) -> tuple[str, str | None] | None:
    """The reading of a word no name matches exactly or by prefix, each name's likeness worked out in full."""
    typed = _norm(text)
    scored = sorted(((difflib.SequenceMatcher(None, typed, _norm(n)).ratio(), n) for n in names), reverse=True)
    if scored and scored[0][0] >= ACCEPT_RATIO and (len(scored) == 1 or scored[1][0] < RUNNER_UP_BELOW):
        return scored[0][1], f"read {text!r} as {scored[0][1]}"
    return None


def _read(text: str, names: list[str]) -> tuple[str, str | None] | None:
    try:
        return understand_name(text, names, "area")
    except LookupError:
        return None


@st.composite
def typos(draw) -> str:
    """An area's name with a few letters changed, dropped or added, or two names run together."""
    name = draw(st.sampled_from(AREAS))
    if draw(st.booleans()):
        return name + " " + draw(st.sampled_from(AREAS))
    letters = list(name)
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(letters)))
        what = draw(st.sampled_from(["drop", "add", "change"]))
        letter = draw(st.sampled_from("aeiourstnlx"))
        if what == "drop" and at < len(letters):
            del letters[at]
        elif what == "add":
            letters.insert(at, letter)
        elif at < len(letters):
            letters[at] = letter
    return "".join(letters)


@settings(max_examples=400, deadline=None)
@given(typos())
def test_a_misspelt_area_is_read_as_comparing_it_with_every_area_reads_it(text):
    found = _read(text, AREAS)
    if found is None or found[1] is not None:  # not matched exactly nor by a prefix: the likeness decided
        assert found == _compared_with_all(text, AREAS)


def test_likeness_bounds_are_difflibs_own():
    """`_likeness` works out difflib's two cheap bounds without building a matcher for every name: the same
    verdicts as asking difflib's matcher for them."""
    def difflibs(typed, name):
        matcher = difflib.SequenceMatcher(None, typed, name)
        if matcher.real_quick_ratio() < RUNNER_UP_BELOW or matcher.quick_ratio() < RUNNER_UP_BELOW:
            return None
        return matcher.ratio()

    rng = random.Random(17)
    words = ["upperegypt", "sinai", "thebes", "knossos", "phaestos", "drama", "astronomy", "", "a", "aa"]
    for _ in range(3000):
        name = rng.choice(words)
        typed = "".join(rng.choice(string.ascii_lowercase[:8] + "nosy") for _ in range(rng.randint(0, 12)))
        if rng.random() < 0.5 and name:
            typed = name[: rng.randint(0, len(name))] + typed[: rng.randint(0, 2)]
        assert _likeness(typed, name) == difflibs(typed, name), (typed, name)
