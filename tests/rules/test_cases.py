"""Every case file under tests/rules/cases/ (see casefile.py for the format)."""

from __future__ import annotations

import pytest

from .casefile import CASES, case_files, check, invariants, load, play
from .coverage import OPTION_CITES, engine_cites


@pytest.mark.parametrize("path", case_files(), ids=lambda p: str(p.relative_to(CASES)))
def test_case(path):
    case = load(path)
    assert case.get("cites"), f"{path.name} names no rule statement or clause"
    outcome = play(case)
    problems = check(case, outcome) + invariants(case, outcome)
    # docs/rules-coverage.md lists what a scan of pbem/rules finds: an event citing anything else escapes it
    unscanned = sorted({c for e in outcome.events for c in e.cites} - set(engine_cites()) - OPTION_CITES)
    problems += [f"an event cites {c!r}, which the scan of pbem/rules (tests/rules/coverage.py) does not find"
                 for c in unscanned]
    assert not problems, f"{case['title']} ({', '.join(case['cites'])}):\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", case_files(), ids=lambda p: str(p.relative_to(CASES)))
def test_every_choice_a_prompt_offers_is_accepted(path):
    """A prompt's choices are ready-made orders: each must be read and accepted as it stands."""
    from pbem.orders.language import Actor, parse_orders
    from pbem.rules import engine as E
    from pbem.rules.core.draws import Draws
    from pbem.rules.core.rejection import Rejection

    case = load(path)
    state = play({**case, "orders": []}).state
    if state.phase != case["phase"] or state.step == "ended":
        return
    for who, prompt in E.pending(state).items():
        for choice in prompt.choices:
            parsed = parse_orders(choice, state, Actor(player_id=prompt.player_id))
            after = state
            for line in parsed.lines:
                assert not line.error, f"{who}: {choice!r} line {line.text!r} is not read: {line.error}"
                if line.command is None:
                    continue
                try:
                    after = E.fold(after, E.decide(after, line.command, Draws("choices")))
                except Rejection as exc:
                    raise AssertionError(f"{who} ({prompt.step}): the offered choice {choice!r} is refused: {exc}")
