"""Every implemented clause has a test, and docs/rules-coverage.md says which, and lists every clause the engine cites."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .coverage import (
    MISCITED,
    PROJECT,
    REQUIRED,
    RULEBOOK,
    RULING,
    SECTION,
    SEED,
    SEED_TEXT,
    UNIT_TESTS,
    cited_by,
    engine_cites,
    numbered_by,
    render,
)

DOC = Path(__file__).parents[2] / "docs" / "rules-coverage.md"


def listed_in_doc() -> dict[str, list[str]]:
    """The first cell of every row of the page's tables with a *numbered by* column -> the other cells, row by row."""
    rows: dict[str, list[str]] = {}
    header: list[str] = []
    for line in DOC.read_text().splitlines():
        if not line.startswith("|"):
            header = []
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not header:
            header = cells
        elif header[1:2] == ["numbered by"] and not re.fullmatch(r"-+", cells[0]):
            rows.setdefault(cells[0], []).append(" | ".join(cells[1:]))
    return rows


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


def test_the_scan_finds_what_the_engine_cites():
    """The scan of pbem/rules is not empty: it finds clauses known to be cited, each with its module."""
    cites = engine_cites()
    assert len(cites) > 150
    assert "phases/conflict/attacks.py" in cites["§24.52"]
    assert "phases/conflict/attacks.py" in cites["seed 001: [city-attack step 4]"]
    assert "phases/conflict/attacks.py" in cites["D-4"]
    assert "phases/movement/turns.py" in cites["R-2.2"]
    assert "phases/calamities/war/__init__.py" in cites["§30.41 Military"]  # a § clause naming a card's paragraph
    assert "turn.py" in cites["seed 003: [11]"]
    assert not any(c.startswith("§") for c in cites if not SECTION.fullmatch(c))


def test_the_page_lists_every_clause_the_engine_cites():
    """A § clause, ruling, seed label or document section the engine cites and the page does not list fails here."""
    listed = listed_in_doc()
    missing = sorted(c for c in engine_cites() if c not in listed)
    assert not missing, f"the engine cites what docs/rules-coverage.md does not list: {missing}"


def test_every_section_cited_has_its_row_with_the_engine_modules():
    listed = listed_in_doc()
    for clause, modules in engine_cites().items():
        if SECTION.fullmatch(clause):
            assert any(all(f"`{m}`" in row for m in modules) for row in listed[clause]), clause


def test_every_ruling_and_seed_label_the_engine_cites_is_a_phase_row():
    """Rulings and seed clauses the engine implements are in `REQUIRED`, so they must be checked by a test."""
    required = {c for clauses in REQUIRED.values() for c in clauses}
    missing = sorted(c for c in engine_cites() if (RULING.fullmatch(c) or SEED.fullmatch(c)) and c not in required)
    assert not missing, f"add these to REQUIRED in tests/rules/coverage.py, with a case file or unit test: {missing}"


def test_a_miscitation_noted_is_still_made():
    """Once the engine cites the right section, its note on the page goes."""
    assert all(clause in engine_cites() for clause in MISCITED), [c for c in MISCITED if c not in engine_cites()]


@pytest.mark.parametrize(
    "clause, by",
    [
        ("§31.54", RULEBOOK),
        ("§32 Engineering", RULEBOOK),
        ("seed 003: 1A", SEED_TEXT),
        ("seed 002: 4b", SEED_TEXT),
        ("seed 000: 11", SEED_TEXT),
        ("seed 003: [11]", PROJECT),
        ("seed 001: 6 [IMPORTANT]", PROJECT),
        ("seed 001: [city-attack step 4]", PROJECT),
        ("seed 004: 5d", PROJECT),
        ("D-4", PROJECT),
        ("Q-SC8", PROJECT),
        ("NT-12", PROJECT),
        ("R-3.2", PROJECT),
        ("fact sheet §2.12", PROJECT),
        ("RULINGS.md §4.2", PROJECT),
    ],
)
def test_who_numbered_a_clause(clause, by):
    assert numbered_by(clause) == by


@pytest.mark.parametrize("clause", ["seed 003: 11", "seed 004: 8", "seed 002: 4C", "E12", "last-turn"])
def test_a_label_nobody_printed_is_refused(clause):
    with pytest.raises(ValueError):
        numbered_by(clause)


def test_the_page_marks_who_numbered_each_row():
    for clause, rows in listed_in_doc().items():
        for row in rows:
            assert row.split(" | ")[0] == numbered_by(clause), clause
    assert PROJECT in listed_in_doc()["D-4"][0]
