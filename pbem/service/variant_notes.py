"""What a player must know of each variant in force before the first turn: a paragraph of the start letter."""

from __future__ import annotations

#: One paragraph per variant for the start letter: what a player must know before the first turn.
VARIANT_NOTES = {
    "No-Trading": (
        "No-Trading (seed 004): there is no trade phase. Each city draws a money card of Outpost "
        "(Ore, Water, Titanium, ...; piles 1-9), and you may buy more of your highest type at 18 treasury. "
        "Money cards pay for civilization cards at face value; you keep at most 8. Calamities come from dice: "
        "a roll by the most advanced epoch says how many strike; for each, the players roll 2d6, the lowest "
        "is the victim and the highest plays the trader. With too few cities to advance on the A.S.T. you "
        "need not roll; send VOLUNTEER to roll anyway."
    ),
    "Small Cities": (
        "Small Cities (seed 000): in phase 5 you may turn tokens into towns (TOWN Memphis 2, then DONE): one "
        "token a town on a city site, two elsewhere. Six of your towns in an area become a city; an area holds "
        "five at most, never beside a city. Towns pay tax (1 per 3 towns at rate 2), draw a card per six, "
        "fight and pay calamity losses like tokens, but never move, grow nor count in the census. Towns above "
        "an area's limit need a token per two. An attack on your city breaks it into 6 towns, and it stands "
        "again if six survive."
    ),
}
