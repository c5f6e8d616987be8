"""docs/variants.md shows prompts as the engine writes them: each example is checked against its case file."""

from __future__ import annotations

import re
from pathlib import Path

from pbem.rules import engine as E
from pbem.rules.turn import phase_title
from pbem.service.asks import prompt_context

from .casefile import CASES, load, play

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "variants.md"


def _examples() -> list[tuple[str, str]]:
    """(case file, example text) for every example prompt of the page."""
    text = DOC.read_text()
    found = []
    for match in re.finditer(r"`tests/rules/cases/([^`]+\.toml)`\):\n\n```text\n(.*?)```", text, re.S):
        found.append((match.group(1), match.group(2)))
    return found


def test_the_page_has_example_prompts_of_both_variants():
    assert any("No-Trading variant" in example for _, example in _examples())
    assert any("Small Cities variant" in example for _, example in _examples())


def test_every_example_prompt_is_what_the_engine_asks_in_that_position():
    for case_file, example in _examples():
        case = load(CASES / case_file)
        case.pop("orders", None)
        (prompt,) = E.pending(play(case).state).values()
        lines = example.splitlines()
        state = play(case).state
        asked = prompt_context(state, prompt, phase_title(state, state.phase))
        assert lines[0].startswith(asked["headline"] + ". "), case_file
        shown = lines[lines.index("YOUR CHOICES") + 1:]
        assert [c.strip() for c in shown[: len(asked["choices"])]] == asked["choices"], case_file
        situation = lines[lines.index("YOUR POSITION") + 1: lines.index("YOUR CHOICES") - 1]
        assert [s.strip() for s in situation] == asked["situation"], case_file
        rules = " ".join(" ".join(lines[lines.index("HOW TO WRITE ORDERS") + 1:]).split())
        assert rules.startswith(" ".join(asked["rules"].split())), case_file
        assert f"If no orders arrive in time: {prompt.default}." in rules, case_file
