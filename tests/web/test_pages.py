"""Issue 32: a game's page for each reader, over real HTTP from a running `pbem serve --http`, on both backends.

The position is phase 7 of tests/service/test_three_player_turn_by_mail.py:
Ann (Africa) and Ben (Italy) hold hands that allow a deal and are asked to
trade. Every link is the one a letter carried (read from the Maildir), every
order from a page goes through the server's door for mail and is answered by
mail, and every refusal is checked to say nothing a guesser could use.
"""

from __future__ import annotations

import json
import logging
import re
from email.message import EmailMessage
from dataclasses import replace
from email.utils import make_msgid

import pytest
from service.mailclient import holding, letters, send, text_of
from service.test_three_player_turn_by_mail import PEOPLE

from pbem.rules import table
from pbem.service.demo import reply_to_prompt
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .site import MODERATOR, LiveSite, served_game

LINK = re.compile(r"(http://127\.0\.0\.1:\d+/g/[a-z0-9-]+/[a-z0-9]+/[0-9a-f]{32}/)")
FORM = re.compile(r'name="form_id" value="([0-9a-f]{32})".*?name="proof" value="([0-9a-f]{32})"', re.S)


def _email(name: str) -> str:
    return next(p.email for p in PEOPLE if p.name == name)


def link_of(settings, address: str) -> str:
    """The page link in the newest letter to ``address`` that has one."""
    found = [LINK.findall(text_of(m)) for m in letters(settings.maildir, address)]
    found = [f for f in found if f]
    assert found, f"no letter to {address} carries a link"
    assert len(set(found[-1])) == 1, "a letter carries one link, its reader's"
    return found[-1][0]


@pytest.fixture
def trading(world):
    """A live server with its pages, game g1 set at phase 7 (Ann and Ben asked to trade)."""
    db, settings = world
    with served_game(db, settings, trading=True) as site:
        yield db, site


def test_a_players_letters_carry_his_own_link_and_it_opens_his_page_alone(trading):
    db, site = trading
    settings = site.settings
    ann, ben = link_of(settings, _email("Ann")), link_of(settings, _email("Ben"))
    assert ann != ben
    for name, link in (("Ann", ann), ("Ben", ben)):
        others = [p.email for p in PEOPLE if p.name != name] + [MODERATOR]
        for address in others:  # nobody else's letters hold it
            assert not holding(settings.maildir, address, link.rsplit("/", 2)[-2])
    page = site.get(ann)
    assert page.status == 200
    # her own hand and what is asked of her, with the order form
    assert "Asked of you" in page.body and 'name="orders"' in page.body
    assert "Your position" in page.body and "Salt" in page.body and "Hides" in page.body
    # Ben's hand is his: Ann's page names his card count, never his cards (Iron is in the rules' example)
    assert "Oil" not in page.body
    assert "4 cards in hand" in page.body
    # the guards every page carries
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["Cache-Control"] == "no-store"
    board = site.get(ann + "board.svg")
    assert board.status == 200 and board.headers["Content-Type"].startswith("image/svg+xml")
    assert board.body.lstrip().startswith(("<?xml", "<svg"))
    # the moderator's letters carry his own link, which shows every hand
    moderator = site.get(link_of(settings, MODERATOR))
    assert moderator.status == 200 and "Oil" in moderator.body


def test_every_link_that_does_not_open_gets_the_same_404(trading):
    db, site = trading
    ann = link_of(site.settings, _email("Ann"))
    base, game, reader, token = ann.rstrip("/").rsplit("/", 3)
    flipped = token[:-1] + ("0" if token[-1] != "0" else "1")
    # another game on the same server, with a player in the same seat number
    create_game(db, site.settings, "g2", [NewPlayer("Dee", "dee@example.org", "Africa"),
                                          NewPlayer("Eli", "eli@example.org", "Italy")], seed="other", now=utc_now())
    site.idle()
    dee = link_of(site.settings, "dee@example.org")
    other_token = dee.rstrip("/").rsplit("/", 1)[1]
    assert site.get(dee).status == 200
    wrong = [
        f"{base}/{game}/{reader}/{flipped}/",  # a token tampered with
        f"{base}/g2/{reader}/{token}/",  # Ann's token on another game
        f"{base}/{game}/{dee.rstrip('/').rsplit('/', 2)[1]}/{other_token}/",  # another game's link on this one
        f"{base}/g9/{reader}/{token}/",  # a game that does not exist
        f"{base}/{game}/p2/{token}/",  # another seat with Ann's token
        f"{base}/{game}/moderator/{token}/",  # the moderator's page with Ann's token
        f"{base}/{game}/{reader}/{token[:16]}/",  # a reply token's length
        f"{base}/{game}/{reader}/{flipped}/board.svg",
        f"{base}/{game}/{reader}/{flipped}/explain/1",
        f"{base}/",  # no listing of games
        f"{base}/g/",
        ann + "?v=0",  # a version outside the log
        ann + "?v=99999",
        ann + "?v=x",
        ann + "explain/99999",
    ]
    answers = [site.get(url) for url in wrong]
    assert [a.status for a in answers] == [404] * len(wrong)
    assert len({a.body for a in answers}) == 1, "a refusal says nothing about why"
    assert all(a.headers["X-Frame-Options"] == "DENY" for a in answers)


def test_orders_from_the_form_take_the_mail_path_and_are_answered_by_mail(trading):
    db, site = trading
    settings = site.settings
    ann = link_of(settings, _email("Ann"))
    form_id, proof = FORM.search(site.get(ann).body).groups()
    before = len(letters(settings.maildir, _email("Ann")))
    # a form not made for this link sends nothing
    refused = site.post(ann + "orders", {"orders": "FINISH", "form_id": form_id, "proof": "0" * 32})
    assert refused.status == 403
    offer = "OFFER Italy: Salt 2, Ochre + Hides FOR Grain 2 + 1 more"
    sent = site.post(ann + "orders", {"orders": offer, "form_id": form_id, "proof": proof})
    assert sent.status == 303 and sent.headers["Location"] == "./?sent=1"
    again = site.post(ann + "orders", {"orders": offer, "form_id": form_id, "proof": proof})  # sent twice
    assert again.status == 303
    site.idle()
    with UnitOfWork(db) as uow:
        stored = uow.inbox.by_message_id(f"web.{form_id}@{settings.domain}")
        assert stored is not None and stored.status == "done"
        offers = [e for e in uow.events.read("g1") if e.type == "OfferMade"]
        # the same form sent twice is stored and played once, as a mail delivered twice is
        assert len(offers) == 1 and offers[0].payload["nation"] == "Africa"
    new = letters(settings.maildir, _email("Ann"))[before:]
    answers = [m for m in new if "ACCEPTED FROM THIS MESSAGE" in text_of(m)]
    assert len(answers) == 1, [str(m["Subject"]) for m in new]
    assert "OFFER" in text_of(answers[0])
    page = site.get(ann + "?sent=1")
    assert "Your orders were sent" in page.body


def test_the_history_steps_through_versions_and_explains_each_entry(trading):
    db, site = trading
    ann = link_of(site.settings, _email("Ann"))
    now = site.get(ann).body
    latest = int(re.search(r"Version (\d+) of (\d+)", now).group(2))
    first = site.get(ann + "?v=1")
    assert first.status == 200 and f"Version 1 of {latest}" in first.body and 'name="orders"' not in first.body
    assert "back to now" in first.body
    assert site.get(ann + "board.svg?v=1").status == 200
    why = site.get(ann + "explain/1")
    assert why.status == 200 and "Why: v1" in why.body and "§" in why.body
    steps = re.findall(r'href="\?v=(\d+)#history" rel="(prev|next)"', site.get(ann + "?v=2").body)
    assert ("1", "prev") in steps and ("3", "next") in steps


def test_a_link_stops_working_when_its_seat_changes_hands(trading):
    db, site = trading
    settings = site.settings
    ann = link_of(settings, _email("Ann"))
    letter = [m for m in letters(settings.maildir, MODERATOR) if m["Reply-To"]][-1]
    send(site.smtp_port, reply_to_prompt(letter, MODERATOR, "REPLACE Ann WITH Dora Smith dora@example.com Ann left"),
         MODERATOR, [str(letter["Reply-To"])])
    site.idle()
    assert site.get(ann).status == 404
    dora = link_of(settings, "dora@example.com")
    assert dora != ann and dora.split("/g/")[1].split("/")[1] == ann.split("/g/")[1].split("/")[1]
    page = site.get(dora)
    assert page.status == 200 and "Dora Smith" in page.body


def test_no_log_line_holds_a_link(trading, caplog):
    db, site = trading
    ann = link_of(site.settings, _email("Ann"))
    token = ann.rstrip("/").rsplit("/", 1)[1]
    with caplog.at_level(logging.INFO, logger="pbem.web"):
        assert site.get(ann).status == 200
        assert site.get(ann + "nothing-here").status == 404
    shown = [r.getMessage() for r in caplog.records if r.name == "pbem.web"]
    assert len(shown) >= 2 and not any(token in line or token[:12] in line for line in shown)


def test_a_link_is_limited_to_so_many_requests_a_minute(trading):
    db, site = trading
    ann = link_of(site.settings, _email("Ann"))
    statuses = [site.get(ann + "?v=x").status for _ in range(121)]  # refused before any reading: quick
    assert statuses[:120] == [404] * 120 and statuses[120] == 429
    assert site.get(link_of(site.settings, _email("Ben"))).status == 200  # another link is not held back


def moderator_says(site, text: str) -> None:
    letter = [m for m in letters(site.settings.maildir, MODERATOR) if m["Reply-To"]][-1]
    send(site.smtp_port, reply_to_prompt(letter, MODERATOR, text), MODERATOR, [str(letter["Reply-To"])])
    site.idle()


def test_revoke_by_mail_ends_a_link_and_link_by_mail_sends_the_new_one(trading):
    db, site = trading
    settings = site.settings
    ann, ben = link_of(settings, _email("Ann")), link_of(settings, _email("Ben"))
    moderator_says(site, "REVOKE Africa she forwarded a letter to her brother")
    assert site.get(ann).status == 404
    assert site.get(ben).status == 200, "only her links are revoked"
    answer = text_of(letters(settings.maildir, MODERATOR)[-1])
    assert "REVOKE Africa she forwarded a letter to her brother" in answer
    # she asks for her link by mail: the answer holds a new one, which opens her page
    prompt = [m for m in letters(settings.maildir, _email("Ann")) if m["Reply-To"]][-1]
    send(site.smtp_port, reply_to_prompt(prompt, _email("Ann"), "LINK"), _email("Ann"), [str(prompt["Reply-To"])])
    site.idle()
    said = text_of(letters(settings.maildir, _email("Ann"))[-1])
    fresh = re.search(r"LINK: your page of the game.*?(http://\S+/)", said, re.S).group(1)
    assert fresh != ann and site.get(fresh).status == 200
    # the moderator reads the revocation in his history; a player does not
    assert "revoked the page links of Ann (Africa)" in site.get(link_of(settings, MODERATOR)).body
    assert "revoked the page links" not in site.get(ben).body


@pytest.fixture
def created(world):
    """A live server with its pages and game g1 just created (a log folded from its first event)."""
    db, settings = world
    with served_game(db, settings, trading=False) as site:
        yield db, site


def test_a_kicked_players_link_stops_working(created):
    db, site = created
    ann = link_of(site.settings, _email("Ann"))
    moderator_says(site, "KICK Africa gone for good")
    assert site.get(ann).status == 404
    moderator_says(site, "UNKICK Africa back again")
    assert site.get(ann).status == 200, "taken back, her link works again: it was never revoked"


def test_verify_and_the_export_as_the_reader_may_have_them(trading):
    db, site = trading
    ann = link_of(site.settings, _email("Ann"))
    checked = site.get(ann + "verify")
    assert checked.status == 200 and "hash chain ok" in checked.body and "waits for the secret seed" in checked.body
    export = site.get(ann + "export.jsonl")
    assert export.status == 200 and export.headers["Content-Disposition"].startswith("attachment;")
    lines = [json.loads(line) for line in export.body.splitlines()]
    assert lines[0]["exported_as"] == "player:africa" and len(lines) == lines[0]["head"]["version"] + 1
    moderator = [json.loads(line) for line in site.get(link_of(site.settings, MODERATOR) + "export.jsonl").body.splitlines()]
    assert moderator[0]["exported_as"] == "moderator" and not any("withheld" in line for line in moderator[1:])


def test_an_observer_gets_a_link_of_his_own_that_shows_what_an_observer_sees(created):
    db, site = created
    settings = site.settings
    ask = EmailMessage()
    ask["From"], ask["To"] = "Olga <olga@example.com>", f"pbem+g1@{settings.domain}"
    ask["Subject"], ask["Message-ID"] = "watching", make_msgid(domain="example.com")
    ask.set_content("OBSERVE Olga")
    send(site.smtp_port, ask, "olga@example.com", [f"pbem+g1@{settings.domain}"])
    site.idle()
    with UnitOfWork(db) as uow:
        ((number, _),) = table.observers(load_state(uow, "g1"), "asked").items()
    moderator_says(site, f"APPROVE {number}")
    olga = link_of(settings, "olga@example.com")
    assert f"/o{number}/" in olga
    page = site.get(olga)
    assert page.status == 200 and "Olga, observer" in page.body
    assert "Your position" not in page.body and 'name="orders"' not in page.body
    refused = site.post(olga + "orders", {"orders": "STATUS", "form_id": "0" * 32, "proof": "0" * 32})
    assert refused.status == 403
    moderator_says(site, f"DENY {number} the game is private now")
    assert site.get(olga).status == 404, "a dismissed observer's link stops working"


def test_two_workers_on_postgresql_serve_the_same_pages(db_url, tmp_path):
    """Pages keep nothing between requests: a second `pbem serve` on the same PostgreSQL database serves any link,
    takes the orders of its form, and the first shows what they changed."""
    if not db_url.startswith("postgresql"):
        pytest.skip("several workers share one database on PostgreSQL only (docs/operations.md)")
    db = make_engine(db_url)
    ensure_schema(db)
    settings = replace(Settings(), db_url=db_url, maildir=tmp_path / "mail", listen_port=0, board_pictures=False,
                       gather_minutes=0)
    try:
        with served_game(db, settings, trading=True) as first, LiveSite(db, settings) as second:
            ann = link_of(first.settings, _email("Ann"))
            path = ann.removeprefix(first.base)
            before = first.get(ann).body
            page = second.get(second.base + path)
            assert page.status == 200 and re.search(r"Version \d+ of \d+", page.body).group(0) in before
            form_id, proof = FORM.search(page.body).groups()
            offer = "OFFER Italy: Salt 2, Ochre + Hides FOR Grain 2 + 1 more"
            assert second.post(second.base + path + "orders",
                               {"orders": offer, "form_id": form_id, "proof": proof}).status == 303
            second.idle()
            first.idle()
            with UnitOfWork(db) as uow:
                assert [e.payload["nation"] for e in uow.events.read("g1") if e.type == "OfferMade"] == ["Africa"]
            latest = re.search(r"Version (\d+) of (\d+)", first.get(ann).body).groups()
            assert latest[0] == latest[1] and int(latest[1]) > int(re.search(r"of (\d+)", before).group(1))
    finally:
        db.dispose()
