"""Moments of a game as a moderator names them: "41", "before 41", "turn 3 movement".

A moderator at midnight does not know version numbers; he knows that the
trouble started in turn 3's movement, or with the move his player disputes.
`HISTORY turn 3 Egypt` finds the lines, `ROLLBACK TO turn 3 movement` and
`ROLLBACK BEFORE 41` name where to go back. This module reads those words;
which version they come to is decided against the log
(`pbem.rules.branches.rollback_target`), since only the log knows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.rules.turn import PHASE_TITLES

#: Words that name no phase on their own: the number and dot of a title.
_TITLE_NOISE = frozenset({"of", "the"})


def _title_words(title: str) -> frozenset[str]:
    words = [w.strip(".").lower() for w in title.split()]
    return frozenset(w for w in words if w and not w.isdigit() and w not in _TITLE_NOISE)


#: Each phase's title words ("trade", "cards", "acquisition"): a phase is named exactly when all are given.
TITLE_WORDS: dict[str, frozenset[str]] = {p: _title_words(t) for p, t in PHASE_TITLES.items() if p != "setup"}
#: Each phase's words, from its title and its id ("movement"; "trade", "card", "cards", "acquisition").
PHASE_WORDS: dict[str, frozenset[str]] = {p: words | frozenset(p.split("-")) for p, words in TITLE_WORDS.items()}
#: Every word that can name a phase (the mail reader lets these follow HISTORY without reading it as prose).
ALL_PHASE_WORDS = frozenset().union(*PHASE_WORDS.values()) | {"phase", "a.s.t.", "cities", "calamities", "money"}
#: Short names people use for a phase, beside its title's words.
_ALIASES = {"ast": "ast-alteration", "a.s.t": "ast-alteration", "cities": "city-construction",
            "calamities": "calamity-resolution", "tax": "tax-collection", "expansion": "population-expansion",
            "money": "trade-card-acquisition"}
#: The phases by their number in the turn (`PHASE 3`).
_NUMBERED = {str(n): p for n, p in enumerate((p for p in PHASE_TITLES if p != "setup"), 1)}


def phase_named(words: list[str]) -> tuple[str, int] | None:
    """The phase the first of ``words`` name and how many words that took, or None.

    The longest run of up to three words that fits exactly one phase wins:
    "trade" is phase 7 (its whole title), "trade cards" phase 6; "calamity"
    alone fits two and names none. "phase 3" names the third phase.
    """
    low = [w.strip(",;:.").lower() for w in words[:3]]
    if len(low) >= 2 and low[0] == "phase" and low[1].rstrip(".") in _NUMBERED:
        return _NUMBERED[low[1].rstrip(".")], 2
    for size in range(min(3, len(low)), 0, -1):
        given = set(low[:size])
        if size == 1 and low[0] in _ALIASES:
            return _ALIASES[low[0]], 1
        fits = [p for p, known in PHASE_WORDS.items() if given <= known]
        exact = [p for p in fits if TITLE_WORDS[p] <= given]
        if len(fits) == 1:
            return fits[0], size
        if len(exact) == 1:
            return exact[0], size
    return None


@dataclass(frozen=True)
class Moment:
    """A point of the game's log as named: a version, the moment before one, or the start of a turn (or phase)."""

    version: int | None = None
    before: bool = False
    turn: int | None = None
    phase: str | None = None

    def text(self) -> str:
        if self.version is not None:
            return f"{'BEFORE' if self.before else 'TO'} {self.version}"
        return f"TO turn {self.turn}" + (f" {PHASE_TITLES[self.phase]}" if self.phase else "")


def read_moment(words: list[str]) -> tuple[Moment, list[str]] | None:
    """A moment at the head of ``words`` and the words after it, or None when they name none.

    ``41``, ``TO 41``, ``BEFORE 41``, ``TO turn 3``, ``turn 3 movement``, ``TO turn 3 phase 3``.
    """
    rest = list(words)
    before = bool(rest) and rest[0].lower() == "before"
    if rest and rest[0].lower() in ("to", "before"):
        rest = rest[1:]
    if rest and rest[0].isdigit():
        return Moment(version=int(rest[0]), before=before), rest[1:]
    if before or len(rest) < 2 or rest[0].lower() != "turn" or not rest[1].rstrip(",").isdigit():
        return None
    turn, rest = int(rest[1].rstrip(",")), rest[2:]
    phase = phase_named(rest)
    if phase is None:
        return Moment(turn=turn), rest
    return Moment(turn=turn, phase=phase[0]), rest[phase[1]:]
