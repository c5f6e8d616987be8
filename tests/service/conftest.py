"""What the service tests share: a migrated database on each backend, and settings writing mail to a Maildir."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine


@pytest.fixture
def world(db_url, tmp_path):
    """(engine, settings) for a fresh database; the server listens on a free port; mail lands in tmp_path/mail.

    Reports carry no picture here (0.4 s each); tests/service/test_board_picture_by_mail.py turns it on. A
    trade prompt brought up to date by an offer goes at once here, as the tests read the clock's own time;
    tests/service/test_offers_gathered.py holds the clock to see it wait."""
    settings = replace(Settings(), db_url=db_url, maildir=tmp_path / "mail", listen_port=0, board_pictures=False,
                       gather_minutes=0)
    db = make_engine(db_url)
    ensure_schema(db)
    yield db, settings
    db.dispose()
