"""Why a city was reduced for want of support (phase 5c, and again after the calamities, phase 11).

"Why did I lose that city?" is the question players ask most. The answer is
arithmetic on public numbers: the tokens the nation's cities need on the
board (2 a city, §26.3), the tokens it has there (less any a Slave Revolt
holds, D-10), which of its cities may go first (D-6), and how many tokens the
reduced city becomes (the area's limit, §26.41, as many as the stock gives).
"""

from __future__ import annotations

from pbem.audit.explain.common import Case, Explainer, Told, plural
from pbem.rules.board.support import (
    cities_of,
    disabled_tokens,
    reduction_candidates,
    reduction_tokens,
    support_needed,
)
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import ruleset_of


def reduced(case: Case) -> Told:
    """A city reduced for want of support: the support it needed, what it had, which city went and why that one."""
    data = case.event.data
    nation, area, state = data["nation"], data["area"], case.before
    cities = cities_of(state, nation)
    per_city = ruleset_of(state).numbers["city_support_tokens"]
    needed = support_needed(state, nation)
    on_board = state.tokens_on_board(nation)
    held = disabled_tokens(state, nation)
    usable = on_board - held
    how = [
        f"{nation} has {plural(len(cities), 'city', 'cities')} on the board ({', '.join(cities)}): "
        f"each needs {per_city} of its population tokens on the board (§26.3), {needed} in all.",
        f"It has {plural(on_board, 'token')} on the board"
        + (f", {held} of them held by a Slave Revolt (D-10), so {usable} count" if held else "")
        + f": {usable} < {needed}, short by {needed - usable}." if usable < needed else
        f"It has {usable} usable tokens on the board against {needed} needed.",
    ]
    candidates = reduction_candidates(state, nation)
    rule = options_of(state).support_reduction_order
    if candidates != cities:
        how.append(f"Cities that must go first (D-6, support-reduction-order={rule}): {', '.join(candidates)}; "
                   f"the others ({', '.join(c for c in cities if c not in candidates)}) wait.")
    else:
        how.append(f"Any of its cities may go (D-6, support-reduction-order={rule}): {', '.join(candidates)}.")
    built = [c for c in cities if c in state.built_this_turn]
    if built:
        how.append(f"Built this turn: {', '.join(built)}; a city needs its support from the turn it is built (§26.3).")
    if case.event.type.endswith("Chosen"):
        chooser = "played by default when the deadline passed" if data.get("by_default") else f"{nation} chose it (REDUCE {area})"
    else:
        chooser = "the only one that could, so nobody was asked" if len(candidates) == 1 else "the first in that order"
    how.append(f"{area} went: {chooser}.")
    due = reduction_tokens(state, nation, area)
    limit = ruleset_of(state).areas[area].population_limit
    bonus = f" + {due - limit} (Agriculture, §32.241)" if due != limit else ""
    stock = state.nations[nation].stock
    how.append(f"The city becomes {area}'s limit of {limit}{bonus} = {due} tokens from stock (§26.41): "
               f"min({due}, stock {stock}) = {data['tokens']}.")
    after_board = on_board + data["tokens"]
    after_needed = support_needed(case.after, nation)
    how.append(f"After it: {plural(after_board, 'token')} on the board, {after_needed} needed"
               + (" (supported)." if after_board - held >= after_needed else "; the next city goes too."))
    return Told((), tuple(how))


EXPLAINERS: dict[str, Explainer] = {
    "CityReduced": reduced,
    "CityReductionChosen": reduced,
    "CitySupportReduced": reduced,
    "CitySupportReductionChosen": reduced,
}
