"""Which test checks each rule statement and seed clause (docs/rules-coverage.md).

`REQUIRED` lists, per phase, every seed clause and RULINGS statement the
engine implements. Each must be cited by a case file, or be listed in
`UNIT_TESTS` with the test function that checks it. The page also lists every
section of the 1991 rulebook (§) that the engine or a case file cites, and
every other reference the engine cites, with the tests that check them; and it
says who numbered each clause (`numbered_by`). Regenerate the document after
adding cases or citations:

    .venv/bin/python -m tests.rules.coverage > docs/rules-coverage.md
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections import defaultdict
from functools import cache
from pathlib import Path

ROOT = Path(__file__).parents[2]
CASES = Path(__file__).parent / "cases"
ENGINE = ROOT / "pbem" / "rules"

REQUIRED: dict[str, list[str]] = {
    "Setup: nations and start areas (before turn 1)": ["§15.4", "§16"],
    "Turn order and rankings": [
        "seed 003: [A.S.T.-ranking order]", "seed 003: [The Beneficiary]", "D-1", "R-2.5", "R-2.6",
    ],
    "1. Tax collection": ["seed 003: 1", "seed 003: 1A", "seed 003: 1B", "D-2", "D-23", "Q-S5"],
    "2. Population expansion and census": ["seed 003: 2", "R-2.1", "D-12"],
    "3. Ships and movement": [
        "seed 003: 3", "R-2.2", "D-13", "Q-S1", "Q-S4", "seed 002: [Attacking a city]", "seed 002: [Defending a city]",
    ],
    "4. Conflict": [
        "seed 003: 4", "seed 002: 4",
        "seed 002: 4a", "seed 002: 4b", "seed 002: 4A", "seed 002: 4B", "seed 002: [The barbarians]",
        "seed 001: [city-attack step 1]", "seed 001: [city-attack step 2]", "seed 001: [city-attack step 3]",
        "seed 001: [city-attack step 4]", "seed 001: [Attacking a pirate city]",
        "D-3", "D-4", "D-5", "D-16", "D-17", "D-18", "D-19", "R-3.1", "R-3.2",
        "Q-S2", "Q-S9", "Q-S10", "Q-S11", "Q-S12", "Q-S13", "Q-S15", "Q-S16", "Q-S17",
    ],
    "5. City construction, surplus, support": [
        "seed 003: 5", "seed 001: 5", "seed 001: 5A", "seed 001: 5B", "seed 001: 5C",
        "D-6", "D-7", "D-20", "D-21", "Q-S14", "Q-S19",
    ],
    "6. Trade-card acquisition (and the steps that moved: 6b, 12b, 13b restacking)": [
        "seed 003: 6", "seed 001: 6", "seed 001: 6 [IMPORTANT]", "seed 001: 6A", "Q-S3", "D-8", "NT-1", "R-2.4", "D-22",
    ],
    "7. Trade": ["seed 003: 7", "NT-6"],
    "8. Calamity selection": ["seed 003: 8", "R-3.3", "D-14"],
    "9. Calamity resolution": ["seed 003: 9", "Q-S6", "D-10", "D-19", "seed 002: [The barbarians]"],
    "10. Special abilities (Monotheism)": ["seed 003: 10", "R-3.4", "D-15"],
    "11. Surplus and city support after the calamities": ["seed 003: [11]", "D-9"],
    "12. Civilization advances": ["seed 003: 12"],
    "13. A.S.T. alteration and the end of the game": ["seed 003: 13", "D-11"],
    "Small Cities variant (seed 000, RULINGS.md §4.1)": [
        "seed 000: 1", *(f"SC-{n}" for n in range(1, 20)), *(f"Q-SC{n}" for n in range(1, 15)),
    ],
    "No-Trading variant (seed 004, RULINGS.md §4.2)": [
        "seed 004: 5", "seed 004: 5a", "seed 004: 5b", "seed 004: 5d",
        *(f"NT-{n}" for n in range(1, 18)), *(f"Q-NT{n}" for n in range(1, 14)),
    ],
}

#: Statements checked by unit tests rather than case files (they need a house map, a game from its
#: creation, or compare values).
TURN_TEST = "tests/rules/test_turn.py::test_the_turn_plays_the_phase_list_of_seed_003_in_order"
UNIT_TESTS: dict[str, list[str]] = {
    "§15.4": ["tests/rules/test_setup.py::test_place_cards_come_from_the_seed_and_are_recorded",
              "tests/rules/test_setup.py::test_only_the_place_card_holder_is_asked",
              "tests/rules/test_setup.py::test_start_token_must_go_to_an_own_start_area"],
    "§16": ["tests/rules/test_setup.py::test_three_players_may_not_choose_egypt",
            "tests/rules/test_setup.py::test_unplayable_sizes_are_refused"],
    **{f"seed 003: {n}": [TURN_TEST] for n in (1, 3, 4, 5, 6, 8, 9, 10)},
    "Q-NT10": ["tests/rules/test_ruleset_data.py::test_the_numbers_of_the_no_trading_variant",
               "tests/rules/test_ruleset_data.py::test_a_house_map_without_no_trading_data_has_no_money_piles"],
    "D-1": ["tests/rules/test_ranking.py::test_d1a_seed_ranks_cities_in_stock_first_1991_ranks_unit_points",
            "tests/rules/test_ranking.py::test_d1b_a_tie_goes_to_the_earlier_nation_in_ast_order"],
    "D-6": ["tests/rules/test_cities.py::test_d6_reduction_order_as_stated"],
    "D-7": ["tests/rules/test_cities.py::test_d7_zero_limit_area"],
    "D-18": ["tests/rules/test_conflict.py (order of CityAttacksFound)"],
    "Q-S12": ["tests/rules/test_conflict.py (order of CityAttacksFound)"],
    "D-8": ["tests/rules/test_trade_cards.py::test_d8_seed_every_view_shows_the_card_count",
            "tests/rules/test_trade_cards.py::test_d8_1991_others_see_only_the_count_kept_after_12b"],
    "SC-18": ["tests/rules/test_small_cities.py::test_sc18_towns_score_nothing_at_the_end",
              "tests/rules/test_small_cities.py::test_sc18_no_trading_exemption_counts_cities_only"],
    "D-22": ["tests/rules/test_trade_cards.py::test_restack_puts_returned_cards_under_with_the_non_tradable_calamity_at_the_very_bottom"],
}

# -- the forms a citation takes ------------------------------------------------------------------

SECTION = re.compile(r"§(\d+)(?:\.\d+)*(?: [A-Z][A-Za-z &]*)?")  # §31.54; "§32 Engineering" (a card's paragraph)
SEED = re.compile(r"(seed 00\d): (.+)")  # seed 003: 1A, seed 002: [The barbarians]
RULING = re.compile(r"(?:R|D|SC|NT)-\d+(?:\.\d+)?|Q-(?:S|SC|NT)\d+")  # RULINGS.md statement identifiers
DOCUMENT = re.compile(r"(?:RULINGS(?:\.md)? §?|fact sheet §)\d+(?:\.\d+)*")  # sections of RULINGS.md, of advciv-facts.md
CLAUSE = re.compile(f"{SECTION.pattern}|{SEED.pattern}|{RULING.pattern}|{DOCUMENT.pattern}")

#: Strings the engine puts among an event's cites that name a game option, not a clause.
OPTION_CITES = frozenset({"last-turn"})

#: The labels each seed text prints (RULINGS.md §0): seed 003 numbers its phase list 1-10, 12, 13 and heads
#: 1a / 1B; seed 000 numbers its paragraphs 1-11; seed 004 its paragraphs 1-7.
PRINTED_SEED_LABELS = {
    "seed 000": {str(n) for n in range(1, 12)},
    "seed 001": {"5", "5A", "5B", "5C", "6", "6A"},
    "seed 002": {"4", "4a", "4b", "4A", "4B"},
    "seed 003": {*(str(n) for n in (*range(1, 11), 12, 13)), "1A", "1B"},
    "seed 004": {str(n) for n in range(1, 8)},
}
#: Labels this project gave to passages a seed prints without that label.
PROJECT_SEED_LABELS = {
    # Seed 004 numbers the steps of its paragraph 5 "1." to "5." (and calls the first "step a"): the
    # letters are this project's.
    **{f"seed 004: 5{letter}": f"step {n} of paragraph 5" for n, letter in enumerate("abcde", 1)},
}

#: § clauses the engine cites for something the printed section does not say (checked against the OCR text).
#: Citations are part of the recorded events that `pbem verify` re-derives (tests/audit/test_recorded_games.py),
#: so they are noted here rather than corrected; the case files of phase 3a follow the engine's numbering.
MISCITED: dict[str, str] = {
    "§22.2": "ship upkeep and scrapping (ShipKept, ShipScrapped, the refusals of KEEP and SCRAP); the printed "
             "§22.2 is where a new ship is placed, upkeep is §22.3",
    "§22.3": "where a new ship may be built (ShipBuilt, the refusals of SHIP); the printed §22.3 is upkeep, "
             "placement is §22.2",
    "§32.231": "Water set aside against a Famine under No-Trading (WaterSetAside, NT-12); the printed §32.231 is "
               "Metalworking, Pottery against Famine is §30.312 (and §32.211)",
}

RULEBOOK, SEED_TEXT, PROJECT = "1991 rulebook", "seed text", "**this project**"


def numbered_by(clause: str) -> str:
    """Who gave the clause its number: the 1991 rulebook, a seed text, or this project (a ValueError if unknown)."""
    if SECTION.fullmatch(clause):
        return RULEBOOK  # every § number cited is printed in the 1991 Rules of Play (checked against the OCR text)
    if RULING.fullmatch(clause) or DOCUMENT.fullmatch(clause):
        return PROJECT
    seed = SEED.fullmatch(clause)
    if seed:
        if "[" in seed[2] or clause in PROJECT_SEED_LABELS:
            return PROJECT
        if seed[2] in PRINTED_SEED_LABELS.get(seed[1], ()):
            return SEED_TEXT
    raise ValueError(f"{clause!r}: not a form of citation this page knows; add it to tests/rules/coverage.py")


# -- who cites what --------------------------------------------------------------------------------


def cited_by() -> dict[str, list[str]]:
    """Each cite -> the case files that cite it."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(CASES.rglob("*.toml")):
        with path.open("rb") as fh:
            case = tomllib.load(fh)
        for cite in case.get("cites", []):
            found[cite].append(str(path.relative_to(ROOT)))
    return found


@cache
def engine_cites() -> dict[str, tuple[str, ...]]:
    """Each clause the engine cites (a string constant in pbem/rules in a form of `CLAUSE`) -> its modules."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted(ENGINE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CLAUSE.fullmatch(node.value):
                found[node.value].add(str(path.relative_to(ENGINE)))
    return {clause: tuple(sorted(modules)) for clause, modules in found.items()}


def section_key(clause: str) -> tuple:
    number = clause[1:].split(" ", 1)
    return tuple(int(part) for part in number[0].split(".")), number[1:]


def _checked(clause: str, found: dict[str, list[str]]) -> str:
    tests = [f"`{t}`" for t in found.get(clause, []) + UNIT_TESTS.get(clause, [])]
    return "<br>".join(tests) if tests else "**no case file or unit test cites it**"


def _modules(clause: str) -> str:
    modules = engine_cites().get(clause)
    if not modules:
        return "— (cited by case files only)"
    return "<br>".join(f"`{m}`" for m in modules) + (" (**miscited**, see below)" if clause in MISCITED else "")


def render() -> str:
    found = cited_by()
    required = {clause for clauses in REQUIRED.values() for clause in clauses}
    lines = [
        "# Rules coverage",
        "",
        "Every seed clause and RULINGS statement of the phases the engine plays, with the",
        "tests that check it; then every section of the 1991 rulebook (§) that the engine or",
        "a case file cites, and the other references the engine cites. Generated by",
        "`tests/rules/coverage.py` (a test fails when this page is out of date, or when the",
        "engine cites a clause it does not list); case files are in `tests/rules/cases/`, one",
        "per clause or printed example, in the format of `tests/rules/casefile.py`.",
        "",
        "## Who numbered each clause",
        "",
        "The column *numbered by* says where a clause's number or label comes from:",
        "",
        f"* {RULEBOOK}: the section number printed in the 1991 *Rules of Play* (§1–§35). When this",
        "  column was added, every § number the engine and the case files cite was found printed in",
        "  the OCR text of the rulebook (RULINGS.md §0; it misreads 23.5, 24.53, 26.5 and 29.5 as",
        "  23.S, 24.S3, 26.S and 29.S): the project numbered no § clause itself.",
        f"* {SEED_TEXT}: a label printed in the seed text (e.g. seed 003: 1A, seed 002: 4b, seed 000: 1).",
        f"* {PROJECT}: numbered by this project, printed in no rulebook or seed:",
        "  * the identifiers of RULINGS.md statements: R-, D-, Q-S, Q-SC, Q-NT, SC- and NT-",
        "    (SC- and NT- number statements about seeds 000 and 004, not those seeds' own paragraphs);",
        "  * a label in brackets for a seed passage printed without one (RULINGS.md §0), e.g.",
        "    seed 002: [The barbarians], seed 001: 6 [IMPORTANT]; seed 003: [11] is the unnumbered",
        "    entry between 10 and 12 of the phase list (RULINGS.md §2);",
        "  * the letters of seed 004: 5a–5e, the steps its paragraph 5 numbers 1 to 5;",
        "  * section numbers of RULINGS.md and of the fact sheet `advciv-facts.md`.",
        "",
    ]
    for phase, clauses in REQUIRED.items():
        lines += [f"## {phase}", "", "| clause | numbered by | checked by |", "|---|---|---|"]
        for clause in clauses:
            lines.append(f"| {clause} | {numbered_by(clause)} | {_checked(clause, found)} |")
        lines.append("")
    sections = sorted({c for c in [*engine_cites(), *found] if SECTION.fullmatch(c)}, key=section_key)
    lines += [
        "## Sections of the 1991 rulebook cited",
        "",
        "Every § clause the engine cites (in an event, a prompt or a refusal) or a case file cites,",
        "the engine modules that cite it, and the case files and unit tests that cite it.",
        "",
        "| clause | numbered by | cited by the engine in | checked by |",
        "|---|---|---|---|",
    ]
    for clause in sections:
        lines.append(f"| {clause} | {numbered_by(clause)} | {_modules(clause)} | {_checked(clause, found)} |")
    lines += [
        "",
        "### Sections the engine cites for what they do not say",
        "",
        "Checked against the OCR text of the rulebook. Citations are part of the recorded events that",
        "`pbem verify` re-derives, so these are noted here, not corrected; the case files of step 3a",
        "follow the engine's numbering.",
        "",
        "| clause | the engine cites it for |",
        "|---|---|",
        *(f"| {clause} | {what} |" for clause, what in MISCITED.items()),
    ]
    others = sorted(c for c in engine_cites() if not SECTION.fullmatch(c) and c not in required)
    lines += [
        "",
        "## Other references the engine cites",
        "",
        "References to the project's own documents that the engine cites besides the clauses above.",
        "",
        "| reference | numbered by | cited by the engine in | checked by |",
        "|---|---|---|---|",
    ]
    for clause in others:
        lines.append(f"| {clause} | {numbered_by(clause)} | {_modules(clause)} | {_checked(clause, found)} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render())
