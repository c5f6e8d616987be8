"""The planner's standing order on calamities under No-Trading: roll even when exempt, or not (NT-8).

Under No-Trading only the players with the cities of their next epoch must
roll for each calamity; Low is its victim and High takes the part of the
player who would have traded it (NT-9): he gains Treachery's city, is Civil
War's beneficiary, chooses which cities Piracy takes. A nation with one city
or none has next to nothing a calamity could take, and everything to gain
as High, so it volunteers (``VOLUNTEER``) until it holds two cities again
(``VOLUNTEER OFF``).

This also keeps three- and five-player games moving. Without volunteers
the leader is often the only player who rolls, so it is Low for every
calamity until it falls below its epoch's cities, and it never passes the
Late Iron Age's five-city check. Measured on the seeds of ``docs/bots.md``,
under No-Trading alone: three players 3 → 6 of 10 games ending by
themselves, five players 6 → 8. Volunteering with two cities did worse
(5 and 8), and with none only, worse still (4 and 6).
"""

from __future__ import annotations

from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import parts_of

VOLUNTEER_UP_TO = 1  # cities: with this many or fewer the nation rolls even when exempt


def volunteering(state: GameState, nation: str) -> list[str]:
    """The VOLUNTEER line that brings the nation's standing order in line with its cities (none if it is)."""
    if not parts_of(state).calamities.volunteers:  # NT-8
        return []
    wanted = state.cities_on_board(nation) <= VOLUNTEER_UP_TO
    if wanted == state.nations[nation].volunteers:
        return []
    return ["VOLUNTEER" if wanted else "VOLUNTEER OFF"]
