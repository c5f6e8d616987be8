"""Every implemented clause has a test, and docs/rules-coverage.md says which."""

from __future__ import annotations

from pathlib import Path

from .coverage import REQUIRED, UNIT_TESTS, cited_by, render

DOC = Path(__file__).parents[2] / "docs" / "rules-coverage.md"


def test_every_required_clause_is_checked():
    found = cited_by()
    missing = [c for clauses in REQUIRED.values() for c in clauses if c not in found and c not in UNIT_TESTS]
    assert not missing, f"clauses with no case file and no unit test: {missing}"


def test_the_coverage_page_is_up_to_date():
    assert DOC.read_text() == render() + "\n", "regenerate: .venv/bin/python -m tests.rules.coverage > docs/rules-coverage.md"


def test_the_unit_tests_named_exist():
    root = Path(__file__).parents[2]
    for tests in UNIT_TESTS.values():
        for test in tests:
            path = test.split("::")[0].split(" ")[0]
            source = (root / path).read_text()
            if "::" in test:
                assert f"def {test.split('::')[1]}(" in source, test
