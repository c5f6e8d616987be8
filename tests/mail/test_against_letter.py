"""An unmarked quote read against the letter it copies (`order_text.own_against_letter`, issue 29).

Outlook and its kin copy the letter below a header block without ``>`` marks; the reader alone takes the rest
of the message for the quote. With the letter in hand every line the letter did not have is the player's,
whatever the client did to the copy (rewrapping, blanks, bullets, its own header block).
"""

from __future__ import annotations

import textwrap
import time

import pytest

from pbem.mail.order_text import ORDERS_BEGIN, ORDERS_END, UnmarkedQuote, copied_lines, own_against_letter, read_reply

PROMPT = f"""Ben: Choose your nation, then place your first token in one of its start areas. If no orders arrive in time: the first nation still free in A.S.T. order (Africa) and its first start area.
Setup, Nations and start areas.
Deadline: 2026-11-27 04:28 UTC

YOUR CHOICES
  - NATION Africa
  - NATION Italy
  - NATION Crete

HOW TO WRITE ORDERS
  - One order per line; case does not matter; names may be abbreviated.
  - HELP lists the orders; HELP AREA Sinai or HELP CARD Astronomy explains one.

Reply to this message with the lines you want, one order per line. Edit the block below; delete the lines you do not want.
{ORDERS_BEGIN}
NATION Africa
PLACE Sahara
{ORDERS_END}

--
g1 - game log chain head af3a62dac6f7be81
"""

ACK = """Ben: your orders were received.

ACCEPTED FROM THIS MESSAGE
  NATION Crete

NOW ON FILE FOR YOU
  You play Crete.
  PLACE: choose one of Phaestos, Knossos.

--
g1 - game log chain head 1b2c3d4e5f607182
"""

REPORT = """Turn 3 report, Movement.

Crete: MOVE 2 FROM Phaestos TO Knossos
Africa: MOVE 1 FROM Sahara TO Cyrenaica
Deadline: 2026-12-01 04:00 UTC

--
g1 - game log chain head 99aa88bb77cc66dd
"""

#: Header blocks clients write above an unmarked copy of the letter.
HEADERS = {
    "outlook": "________________________________\nFrom: pbem <pbem@pbem.localhost>\nSent: Wednesday, November 25, 2026 5:28 AM\nTo: Ben Example <ben@example.net>\nSubject: [g1] your orders",
    "outlook classic": "-----Original Message-----\nFrom: pbem [mailto:pbem@pbem.localhost]\nSent: Wednesday, November 25, 2026 5:28 AM\nTo: Ben Example\nSubject: [g1] your orders",
    "outlook french": "________________________________\nDe : pbem <pbem@pbem.localhost>\nEnvoyé : mercredi 25 novembre 2026 05:28\nÀ : Ben Example <ben@example.net>\nObjet : [g1] your orders",
    "outlook german": "-----Ursprüngliche Nachricht-----\nVon: pbem <pbem@pbem.localhost>\nGesendet: Mittwoch, 25. November 2026 05:28\nAn: Ben Example <ben@example.net>\nBetreff: [g1] your orders",
    "outlook spanish": "________________________________\nDe: pbem <pbem@pbem.localhost>\nEnviado: miércoles, 25 de noviembre de 2026 5:28\nPara: Ben Example <ben@example.net>\nAsunto: [g1] your orders",
    "outlook italian": "________________________________\nDa: pbem <pbem@pbem.localhost>\nInviato: mercoledì 25 novembre 2026 05:28\nA: Ben Example <ben@example.net>\nOggetto: [g1] your orders",
    "lotus notes": "From:\tpbem <pbem@pbem.localhost>\nTo:\tBen Example <ben@example.net>\nDate:\t25/11/2026 05:28\nSubject:\t[g1] your orders",
    "yahoo": "----- Original Message -----\nFrom: pbem <pbem@pbem.localhost>\nTo: Ben Example <ben@example.net>\nSent: Wednesday, November 25, 2026 5:28 AM\nSubject: [g1] your orders",
    "aol": "-----Original Message-----\nFrom: pbem <pbem@pbem.localhost>\nTo: ben@example.net\nSent: Wed, Nov 25, 2026 5:28 am\nSubject: [g1] your orders",
}


def _unmarked(text: str) -> UnmarkedQuote:
    reply = read_reply(text)
    assert reply.unmarked is not None, "no unmarked quote found"
    return reply.unmarked


@pytest.mark.parametrize("client", sorted(HEADERS))
def test_orders_below_the_copied_prompt_are_the_players(client):
    text = f"\n{HEADERS[client]}\n\n{PROMPT}\nNATION Crete\nPLACE Phaestos\n\nThanks,\nBen\n"
    assert read_reply(text).own == "", "without the letter, the rest of the message is the quote"
    read = own_against_letter(_unmarked(text), [PROMPT])
    assert read.own == "NATION Crete\nPLACE Phaestos\n\nThanks,\nBen"
    assert read.inside == ()


@pytest.mark.parametrize("client", sorted(HEADERS))
def test_orders_above_the_copy_stay_the_only_ones(client):
    text = f"NATION Crete\nPLACE Phaestos\n\n{HEADERS[client]}\n\n{PROMPT}"
    read = own_against_letter(_unmarked(text), [PROMPT])
    assert read.own == "NATION Crete\nPLACE Phaestos" and read.inside == ()


def test_the_order_block_edited_where_it_stands_is_the_players():
    copy = PROMPT.replace("NATION Africa\nPLACE Sahara", "NATION Crete\nPLACE Phaestos")
    read = own_against_letter(_unmarked(f"{HEADERS['outlook']}\n\n{copy}"), [PROMPT])
    # "NATION Crete" is in the list of choices too: the quote has it once more than the letter.
    assert read.own == "NATION Crete\nPLACE Phaestos"


def test_a_line_written_between_the_copys_lines_is_taken_only_as_a_legal_order():
    copy = PROMPT.replace("  - NATION Crete\n", "  - NATION Crete\nthis one please\n")
    read = own_against_letter(_unmarked(f"{HEADERS['outlook']}\n\n{copy}"), [PROMPT])
    assert read.own == "" and read.inside == ("this one please",)


def test_rewrapping_blanks_bullets_and_case_are_the_clients_not_the_players():
    body = PROMPT.split(ORDERS_BEGIN)[0]
    wrapped = "\n".join(textwrap.fill(line, 60) if len(line) > 60 else line for line in body.splitlines())
    copy = wrapped.replace("  - ", "  *   ").replace("YOUR CHOICES", "Your choices").replace(" ", "  ", 3)
    copy = "\n\n".join(copy.splitlines())  # Outlook's plain text from HTML puts a blank line between paragraphs
    copy += "\n" + ORDERS_BEGIN + PROMPT.split(ORDERS_BEGIN)[1]
    read = own_against_letter(_unmarked(f"{HEADERS['outlook']}\n\n{copy}\nNATION Crete\n"), [PROMPT])
    assert read.own == "NATION Crete" and read.inside == ()


def test_lines_joined_by_the_client_are_the_letters():
    copy = PROMPT.replace("Setup, Nations and start areas.\nDeadline", "Setup, Nations and start areas. Deadline")
    read = own_against_letter(_unmarked(f"{HEADERS['aol']}\n{copy}\nPLACE Phaestos\n"), [PROMPT])
    assert read.own == "PLACE Phaestos" and read.inside == ()


def test_the_acknowledgement_answered_below_its_copy_gives_only_the_new_order():
    text = f"{HEADERS['outlook']}\n\n{ACK}\nPLACE Phaestos\n"
    read = own_against_letter(_unmarked(text), [ACK])
    assert read.own == "PLACE Phaestos"  # the echoed NATION Crete is the letter's, not sent again


def test_the_turn_report_answered_below_its_copy():
    text = f"{HEADERS['yahoo']}\n\n{REPORT}\n\nMOVE 1 FROM Knossos TO Phaestos\n-- \nBen\n"
    read = own_against_letter(_unmarked(text), [REPORT])
    assert read.own == "MOVE 1 FROM Knossos TO Phaestos"


def test_lines_of_the_letters_html_part_count_as_the_letters():
    html_as_text = "Your choices\n- NATION Africa\n- NATION Crete\n[cid:logo]\n"
    text = f"{HEADERS['outlook']}\n\nYour choices\n\n  *   NATION Africa\n  *   NATION Crete\n[cid:logo]\n\nNATION Crete\n"
    read = own_against_letter(_unmarked(text), ["Pick one:\nNATION Africa\nNATION Crete\n", html_as_text])
    assert read.own == "NATION Crete"


def test_a_line_the_client_adds_inside_the_copy_is_no_order_of_his():
    copy = PROMPT.replace("Setup, Nations and start areas.", "Setup, Nations and start areas.\n<https://pbem.example/g1>")
    read = own_against_letter(_unmarked(f"{HEADERS['outlook']}\n\n{copy}\nNATION Crete\n"), [PROMPT])
    assert read.own == "NATION Crete" and read.inside == ("<https://pbem.example/g1>",)


def test_a_press_block_below_the_copy_keeps_its_blank_lines():
    text = f"{HEADERS['outlook']}\n\n{PROMPT}\nPRESS TO Africa\nFirst paragraph.\n\nSecond paragraph.\nEND\n"
    assert own_against_letter(_unmarked(text), [PROMPT]).own == (
        "PRESS TO Africa\nFirst paragraph.\n\nSecond paragraph.\nEND"
    )


def test_the_letter_copied_best_has_most_of_its_lines_whole():
    text = f"{HEADERS['outlook']}\n\n{PROMPT}\nNATION Crete\n"
    quote = _unmarked(text)
    assert own_against_letter(quote, [PROMPT]).matched > own_against_letter(quote, [REPORT]).matched
    assert copied_lines(quote, [PROMPT]) > copied_lines(quote, [REPORT])


def test_marked_lines_before_the_unmarked_quote_are_kept_apart():
    text = f"On Wed, pbem <p@x.org> wrote:\n> NATION Africa\nNATION Crete\n\n{HEADERS['outlook']}\n\n{PROMPT}"
    quote = _unmarked(text)
    assert quote.marked == ("NATION Africa",) and quote.above == ("NATION Crete", "")


def test_reading_against_the_letter_is_linear():
    """A quote of 200,000 lines, most of them the letter's lines again, then the player's: well under a second."""
    copy = PROMPT * 2_000
    start = time.process_time()
    read = own_against_letter(_unmarked(f"{HEADERS['outlook']}\n\n{copy}\n" + "Subject: a\n" * 50_000), [PROMPT])
    assert time.process_time() - start < 2.0
    assert read.own.startswith("NATION Africa")  # the letter once; its copies beyond that are lines it lacks


def test_a_quote_of_another_text_is_no_copy_of_the_letter():
    """An older message of the player's quoted, not our letter: its orders must not be taken for new ones."""
    older = "NATION Crete\nPLACE Phaestos\n\nThanks,\nBen\n"
    read = own_against_letter(_unmarked(f"NATION Italy\n\n{HEADERS['outlook']}\n\n{older}"), [PROMPT])
    assert not read.copies
    assert own_against_letter(_unmarked(f"{HEADERS['outlook']}\n\n{PROMPT}\nNATION Crete\n"), [PROMPT]).copies
