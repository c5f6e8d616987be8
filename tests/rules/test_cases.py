"""Every case file under tests/rules/cases/ (see casefile.py for the format)."""

from __future__ import annotations

import pytest

from .casefile import CASES, case_files, check, invariants, load, play


@pytest.mark.parametrize("path", case_files(), ids=lambda p: str(p.relative_to(CASES)))
def test_case(path):
    case = load(path)
    assert case.get("cites"), f"{path.name} names no rule statement or clause"
    outcome = play(case)
    problems = check(case, outcome) + invariants(case, outcome)
    assert not problems, f"{case['title']} ({', '.join(case['cites'])}):\n  " + "\n  ".join(problems)
