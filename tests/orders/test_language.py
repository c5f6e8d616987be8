"""The order language: short verbs, forgiving names, one order per line."""

from __future__ import annotations

import pytest

from pbem.orders.language import VERBS, WHOLE_VERBS, Actor, _slip_of, parse_orders
from pbem.orders.sign_offs import first_names, one_edit_away
from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline, RevealSeed, RollBack, SetMailPreference
from pbem.rules.core.draws import Draws, commitment
from pbem.rules.phases.movement.turns import MoveTokens
from pbem.rules.phases.setup import ChooseNation, PlaceStartToken


def game():
    events = E.create("g", [(1, "Ann", None), (2, "Ben", None), (3, "Cy", None)], {}, commitment("s"), Draws("s"))
    return E.fold(E.new_game("g"), events)


def test_verbs_and_names_ignore_case_and_accept_abbreviations():
    orders = parse_orders("nation crete\nplace KNOSSOS\nplac phaest", game(), Actor(player_id=1))
    assert [line.command for line in orders.lines] == [
        ChooseNation(1, "Crete"),
        PlaceStartToken(1, "Knossos"),
        PlaceStartToken(1, "Phaestos"),
    ]
    assert [line.canonical for line in orders.lines] == ["NATION Crete", "PLACE Knossos", "PLACE Phaestos"]


def test_a_plain_misspelling_is_read_and_said():
    orders = parse_orders("PLACE Knosos", game(), Actor(player_id=1))
    (line,) = orders.lines
    assert line.command == PlaceStartToken(1, "Knossos")
    assert line.notes == ("read 'Knosos' as Knossos",)


def test_unknown_words_get_line_numbers_reasons_and_suggestions():
    text = "# my orders\n\nNATTOON Crete\nPLACE Atlantis\nPLACE Knossos\n"
    orders = parse_orders(text, game(), Actor(player_id=1))
    bad = orders.errors
    assert [line.number for line in bad] == [3, 4]
    assert "unknown order" in bad[0].error and bad[0].suggestions == ("NATION <nation>",)
    assert "Atlantis" in bad[1].error
    assert orders.lines[-1].command == PlaceStartToken(1, "Knossos")  # one bad line spoils nothing else


def test_secret_lines_are_taken_out_and_help_is_answered():
    orders = parse_orders("SECRET abc123\nHELP AREA Knossos\nHELP", game(), Actor(player_id=1))
    assert orders.secret == "abc123"
    assert "Knossos" in orders.lines[0].help
    assert "PLACE <area>" in orders.lines[1].help


def test_moderator_orders_for_a_player_and_ends_a_step():
    state = game()
    orders = parse_orders("FOR Ben: NATION Thrace\nDEADLINE", state, Actor(moderator=True))
    assert orders.lines[0].command == ChooseNation(2, "Thrace")
    assert orders.lines[1].command == PassDeadline(by="moderator")
    refused = parse_orders("DEADLINE", state, Actor(player_id=1))
    assert "only the moderator" in refused.lines[0].error


def test_every_verb_is_documented_in_the_order_language_page():
    """docs/orders.md is what players are pointed to: a verb missing there is a verb nobody can find."""
    from pathlib import Path

    from pbem.orders.language import VERBS

    page = (Path(__file__).parents[2] / "docs" / "orders.md").read_text()
    missing = [verb for verb in VERBS if f"`{verb}" not in page and f"/ `{verb}" not in page]
    assert not missing, f"not in docs/orders.md: {missing}"


def test_lines_that_are_no_order_attempt_are_ignored_not_errors():
    text = (
        "Hi all,\n"
        "Please find my orders below.\n"
        "I'll go for Crete this time.\n"
        "- NATION Crete\n"
        "2) PLACE Phaestos\n"
        "Thanks,\nLove,\nLater!\nAlex\nkthxbai\n"
        "Confidentiality notice: this e-mail is for its addressee only.\n"
        "Tel: +44 20 7946 0000\n"
    )
    orders = parse_orders(text, game(), Actor(player_id=1))
    assert orders.errors == []
    assert [line.canonical for line in orders.lines] == ["NATION Crete", "PLACE Phaestos"]
    assert orders.ignored == (
        "Hi all,", "Please find my orders below.", "I'll go for Crete this time.", "Thanks,", "Love,", "Later!",
        "Alex", "kthxbai", "Confidentiality notice: this e-mail is for its addressee only.", "Tel: +44 20 7946 0000",
    )


def test_a_near_verb_whose_line_reads_as_its_order_is_an_error_with_the_verb_offered():
    orders = parse_orders("PLCCEE Knossos\nPlease Knossos\n", game(), Actor(player_id=1))
    assert [line.text for line in orders.errors] == ["PLCCEE Knossos", "Please Knossos"]
    assert all(line.suggestions[0] == "PLACE <area>" for line in orders.errors)


@pytest.mark.parametrize("slip", ["PLCAE", "plaec", "PLCE", "pllace", "Palce", "plase", "PLCCE"])
def test_a_verb_one_slip_away_is_read_as_it_when_the_rest_is_its_order_and_said(slip):
    """Two letters swapped, one missing, one extra or one for another: read, with the reading named."""
    (line,) = parse_orders(f"{slip} Knossos", game(), Actor(player_id=1)).lines
    assert line.command == PlaceStartToken(1, "Knossos")
    assert line.notes == (f"read '{slip}' as PLACE",)


def test_a_slip_followed_by_the_games_own_words_is_an_order_refused_with_its_fault():
    (line,) = parse_orders("PLAEC Atlantis Knossos", game(), Actor(player_id=1)).lines
    assert line.command is None and line.error.startswith("read 'PLAEC' as PLACE: ")


def test_a_slip_whose_rest_is_no_order_of_that_verb_is_prose_or_an_error_as_before():
    orders = parse_orders("Plaec de problème\nPas de problème\n", game(), Actor(player_id=1))
    assert orders.commands == [] and orders.errors == []
    assert orders.ignored == ("Plaec de problème", "Pas de problème")


@pytest.mark.parametrize("word", ["Hal", "Ann", "Don", "Fin", "Nat", "Pla", "Hal.", "ann,", "Plac", "HALTT", "Hlat"])
def test_a_beginning_or_a_slip_of_a_verb_alone_on_its_line_is_never_an_order(word):
    """"Hal" under "Thanks," ended a ship step as HALT; "Ann" was read as ANNOUNCE and answered with an error."""
    orders = parse_orders(f"NATION Crete\n{word}", game(), Actor(player_id=1))
    assert [line.canonical for line in orders.lines] == ["NATION Crete"]
    assert orders.ignored == (word,)


def test_a_lone_slip_that_is_no_name_gets_a_word_and_a_name_none():
    assert parse_orders("Hlat", game(), Actor(player_id=1)).notes == (
        "Not read: 'Hlat' alone on a line is no order; write HALT in full if you meant it.",)
    assert parse_orders("Hal", game(), Actor(player_id=1)).notes == ()


@pytest.mark.parametrize("word", ["HALT", "halt", "Halt.", "DONE!", "- HALT"])
def test_a_verb_written_whole_alone_on_its_line_is_an_order(word):
    (line,) = parse_orders(word, game(), Actor(player_id=1)).lines
    assert line.command is not None or line.error  # read as HALT/DONE: legal or not, it was meant


@pytest.mark.parametrize("ending", ["Thanks,", "Cheers, Hal", "Merci,", "Viele Grüße", "Saludos,", "Grazie!", "END", "SIGNOFF"])
def test_nothing_after_the_end_of_a_letter_is_read_and_an_order_there_is_named(ending):
    orders = parse_orders(f"NATION Crete\n{ending}\nAnn Smith\nHALT", game(), Actor(player_id=1))
    assert [line.canonical for line in orders.lines] == ["NATION Crete"]
    assert orders.notes == (f"Not read: 'HALT' comes after '{ending}', where your letter ends; put orders above it.",)


def test_a_thank_you_that_opens_a_letter_ends_nothing():
    orders = parse_orders("Thanks!\nNATION Crete\nPLACE Knossos", game(), Actor(player_id=1))
    assert [line.canonical for line in orders.lines] == ["NATION Crete", "PLACE Knossos"]


def test_a_thank_you_in_the_middle_of_a_letter_ends_nothing():
    orders = parse_orders("Thanks!\nNATION Crete\nPLACE Knossos\nsee you\nmore prose\nand more\nto come", game(), Actor(player_id=1))
    assert [line.canonical for line in orders.lines] == ["NATION Crete", "PLACE Knossos"]


@pytest.mark.parametrize("prose", ["Orders in the block below.", "Status of the trade: pending", "Map looks great!",
                                   "History will judge us", "Hand over Crete please", "Board games are fun",
                                   "Explain why I lost Ur?", "Help me if I got this wrong."])
def test_a_sentence_beginning_with_a_question_word_is_prose(prose):
    orders = parse_orders(prose, game(), Actor(player_id=1))
    assert orders.lines == () and orders.ignored == (prose,)


@pytest.mark.parametrize("query", ["STATUS", "Orders?", "HISTORY 20", "EXPLAIN 431", "map", "HAND"])
def test_a_question_word_with_its_arguments_is_a_question(query):
    (line,) = parse_orders(query, game(), Actor(player_id=1)).lines
    assert line.query is not None


def test_a_player_writing_the_moderators_for_is_told_why_and_for_the_record_is_prose():
    orders = parse_orders("FOR Ben: NATION Thrace\nFor the record, I like Crete.", game(), Actor(player_id=1))
    (line,) = orders.lines
    assert line.command is None and "only the moderator" in line.error
    assert orders.ignored == ("For the record, I like Crete.",)


def test_a_first_name_is_an_order_only_when_the_rest_reads_as_one():
    orders = parse_orders("Ann Smith\nHal Jordan", game(), Actor(player_id=1))
    assert orders.lines == () and orders.ignored == ("Ann Smith", "Hal Jordan")


def test_a_line_note_stays_with_its_line():
    orders = parse_orders("NATION Crete\nPLACE Knosos", game(), Actor(player_id=1))
    assert orders.lines[1].notes == ("read 'Knosos' as Knossos",)
    assert orders.notes == ()  # the message's own notes: none


def test_seed_and_rollback_are_never_guessed_from_a_word_of_prose():
    """"See my answers inline" (Outlook) and "Roll on Friday" are prose, not SEED or ROLLBACK, even for the moderator."""
    state = E.fold(E.new_game("g"), E.create("g", [(1, "A", None), (2, "B", None), (3, "C", None)], {}, commitment("s"), Draws("s")))
    for actor in (Actor(player_id=1), Actor(moderator=True)):
        orders = parse_orders("See my answers inline.\nRoll on Friday.\n", state, actor)
        assert not [line for line in orders.lines if line.command is not None or line.error], orders.lines
    mod = parse_orders("SEED\nROLLBACK 3 a misread order\n", state, Actor(moderator=True))
    assert [type(line.command) for line in mod.lines] == [RevealSeed, RollBack]


def test_two_areas_without_a_separator_are_found_by_their_cut_and_said_as_before():
    """The cuts that name no area are refused without looking for near names (nobody reads those refusals):
    what a player is told stays the same."""
    def read(text):
        (line,) = parse_orders(text, game(), Actor(player_id=1)).lines
        return line.command, line.notes, line.error, line.suggestions

    assert read("MOVE 2 Upper Egypt Sinai") == (MoveTokens(1, 2, "Upper Egypt", "Sinai"), (), None, ())
    assert read("MOVE 2 Uper Egypt Sinai") == (MoveTokens(1, 2, "Upper Egypt", "Sinai"),
                                               ("read 'Uper Egypt' as Upper Egypt",), None, ())
    assert read("MOVE 2 Upper Egypt Atlantis")[2:] == (
        "'Upper Egypt Atlantis' is not two area names: MOVE <n|ALL> <from> <to>", ())
    assert read("MOVE 2 Upper Egypt > Atlantis")[2:] == (
        "unknown area 'Atlantis'; did you mean: Tanis, Salamis, Galatia?", ("Tanis", "Ptolemais", "Athens"))


def _slips(verb: str) -> set[str]:
    """Every word one slip of the thumb from ``verb``: two neighbours swapped, a letter left out or doubled."""
    swapped = {verb[:i] + verb[i + 1] + verb[i] + verb[i + 2:] for i in range(len(verb) - 1)}
    missing = {verb[:i] + verb[i + 1:] for i in range(len(verb))}
    doubled = {verb[:i] + verb[i] + verb[i:] for i in range(len(verb))}
    return {s for s in swapped | missing | doubled if s != verb and len(s) >= 3}


@pytest.mark.parametrize("verb", sorted(v for v in VERBS if v not in WHOLE_VERBS))
def test_every_slip_of_every_verb_is_read_as_that_verb_or_not_guessed(verb):
    """A slip names its own verb, or none when two verbs are that near: never another verb."""
    for slip in _slips(verb):
        if slip in VERBS:
            continue
        assert _slip_of(slip) in (verb, None), slip
        near = [v for v in VERBS if v not in WHOLE_VERBS and v != verb and one_edit_away(slip, v)]
        assert (_slip_of(slip) is None) == bool(near), slip


@pytest.mark.parametrize("verb", sorted(v for v in VERBS if v not in WHOLE_VERBS))
def test_a_slip_of_any_verb_alone_on_its_line_under_a_sign_off_is_never_an_order(verb):
    for slip in sorted(_slips(verb) - set(VERBS)):
        orders = parse_orders(f"Thanks,\n{slip.title()}", game(), Actor(player_id=1))
        assert orders.lines == (), slip
        orders = parse_orders(slip, game(), Actor(player_id=1))
        assert orders.lines == () and orders.ignored == (slip,), slip


def test_no_first_name_signed_under_a_sign_off_or_alone_is_ever_an_order_or_an_error():
    """Every name of pbem/orders/first_names.txt (some 1,300, in five languages), as people sign."""
    state = game()
    for name_ in sorted(first_names()):
        written = name_.title()
        for text in (f"NATION Crete\nThanks,\n{written}", f"NATION Crete\n{written}", f"NATION Crete\nCheers, {written}"):
            orders = parse_orders(text, state, Actor(player_id=1))
            assert [line.canonical for line in orders.lines] == ["NATION Crete"], (written, orders.lines)


def test_rollback_names_a_moment_and_is_previewed_until_confirmed():
    state = game()
    mod = Actor(moderator=True)
    lines = parse_orders("ROLLBACK TO turn 3 movement Egypt's move was a slip\nROLLBACK BEFORE 41 a slip\n"
                         "ROLLBACK 41 CONFIRM a slip\nCONFIRM\n", state, mod).lines
    assert [line.command for line in lines[:3]] == [
        RollBack(0, "Egypt's move was a slip", turn=3, phase="movement", confirmed=False),
        RollBack(41, "a slip", before=True, confirmed=False),
        RollBack(41, "a slip", confirmed=True),
    ]
    assert lines[0].canonical == "ROLLBACK TO turn 3 3. Movement Egypt's move was a slip"
    assert lines[3].canonical == "CONFIRM"
    (refused,) = parse_orders("CONFIRM\n", state, Actor(player_id=1)).lines
    assert refused.command is None and "only the moderator" in refused.error
    (no_moment,) = parse_orders("ROLLBACK soon please\n", state, mod).lines
    assert no_moment.command is None and "ROLLBACK BEFORE <version>" in no_moment.error


def test_history_with_a_turn_phase_or_nation_is_a_question_and_verify_takes_a_chain_head():
    state = game()
    asked = parse_orders("HISTORY turn 3 movement Ann\nVERIFY c982c37a85d6770a\nHistory of the world, part one\n",
                         state, Actor(player_id=1))
    assert [line.query for line in asked.lines] == [("HISTORY", "turn 3 movement Ann"), ("VERIFY", "c982c37a85d6770a")]
    assert asked.ignored  # the sentence is prose


@pytest.mark.parametrize("written, delivery, pictures", [
    ("MAIL digest", "digest", None), ("mail: every", "every", None), ("MAIL no pictures", None, False),
    ("Mail digest, nopictures", "digest", False), ("MAIL PICTURES", None, True), ("MAIL ALL", "every", None)])
def test_mail_sets_the_preference_word_by_word(written, delivery, pictures):
    (line,) = parse_orders(written, game(), Actor(player_id=1)).lines
    assert line.command == SetMailPreference(1, delivery, pictures)


@pytest.mark.parametrize("prose", ["Mail me when it is my turn", "Mail sent from my phone", "Mailing list?"])
def test_a_sentence_beginning_with_mail_is_prose(prose):
    orders = parse_orders(prose, game(), Actor(player_id=1))
    assert orders.lines == () and orders.ignored == (prose,)


@pytest.mark.parametrize("meant", ["MAIL", "MAIL digset", "MAIL every week"])
def test_mail_meant_but_written_wrong_gets_its_usage(meant):
    (line,) = parse_orders(meant, game(), Actor(player_id=1)).lines
    assert line.command is None and "MAIL DIGEST" in line.error
