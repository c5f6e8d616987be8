# Two entry points: `make demo` and `make test`. Both build .venv on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

$(BIN)/pbem: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(BIN)/pbem

.PHONY: install demo test visibility bot-seats property fuzz hostile hostile-kill hostile-relay hostile-workers hostile-sender hostile-disk hostile-flood hostile-stranger bench clean
install: $(BIN)/pbem

demo: $(BIN)/pbem
	$(BIN)/pbem demo --out demo-out --players 4 --bots planner --to-the-end

test: $(BIN)/pbem
	$(BIN)/pytest -q

# Every viewer sees only what the rules let him see, in four bot games by mail covering all twelve calamities.
visibility: $(BIN)/pbem
	PBEM_VISIBILITY_FULL=1 $(BIN)/pytest -q tests/audit/test_visibility.py

# Five seats played to the natural end through the running server: two people by mail, three of the server's bots,
# a person's seat handed to a bot and back; then verify (make test plays the same game to turn 4).
bot-seats: $(BIN)/pbem
	PBEM_BOT_SEATS_FULL=1 $(BIN)/pytest -q tests/service/test_bot_seats.py -k five

# Two hundred seeded bot games across player counts, strategies and options, each verified (docs/bots.md).
property: $(BIN)/pbem
	PBEM_PROPERTY_GAMES=200 $(BIN)/pytest -q tests/property

# Ten thousand generated messages through the inbound path, and every pattern timed on inputs built against it
# (docs/mail.md); CI runs it after the tests.
fuzz: $(BIN)/pbem
	$(BIN)/pytest -q -m fuzz tests/fuzz tests/mail/test_patterns.py

# Faults survived by real processes (docs/reliability.md); CI runs them after the tests.
hostile: hostile-kill hostile-relay hostile-workers hostile-sender hostile-disk hostile-flood hostile-stranger

# kill -9 of pbem serve at random moments while 1,000 order mails arrive: none lost, none applied or answered twice.
hostile-kill: $(BIN)/pbem
	PBEM_HOSTILE_MAILS=1000 $(BIN)/pytest -q -s -m hostile tests/hostile/test_kill_serve.py

# The SMTP relay down for a while and pbem serve killed mid-delivery (four times) while 200 orders arrive: every letter delivered.
hostile-relay: $(BIN)/pbem
	PBEM_HOSTILE_RELAY_MAILS=200 $(BIN)/pytest -q -s -m hostile tests/hostile/test_relay_down.py

# Four pbem serve workers on one PostgreSQL database (started by the tests), one relay, 50 games at once and 900
# orders: each player's orders applied in the order sent, no version gap, none lost or doubled, each letter sent once.
hostile-workers: $(BIN)/pbem
	PBEM_HOSTILE_WORKER_MAILS=900 $(BIN)/pytest -q -s -m hostile tests/hostile/test_workers_postgresql.py

# kill -9 of a sender mid-delivery: three workers on PostgreSQL, each with a slow relay of its own (150 letters),
# and one SQLite server with a Maildir (1,000): what the dead one held goes out within 30 s, none into a Maildir twice.
hostile-sender: $(BIN)/pbem
	PBEM_HOSTILE_SENDER_LETTERS=150 PBEM_HOSTILE_SENDER_MAILDIR_LETTERS=1000 $(BIN)/pytest -q -s -m hostile tests/hostile/test_kill_sender.py

# The store and the service at the limits of issue 17, against raw sqlite3 and the eventsourcing library
# (docs/performance.md). The first run plays a 16,000-event bot game into bench/.cache (a few minutes).
# Then the board picture of issue 31: cairosvg's PNG against the palette PNG on the same positions.
bench: $(BIN)/pbem
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python bench/store.py
	$(BIN)/python bench/service.py
	$(BIN)/python bench/picture.py

# A full disk (tmpfs) and a read-only database (tmpfs remounted, ext4 fallen to read-only) under pbem serve: 4xx
# to SMTP clients, one clear line from the commands, nothing lost or applied twice once the disk is back. Needs root.
hostile-disk: $(BIN)/pbem
	PBEM_HOSTILE_DISK_MAILS=8 $(BIN)/pytest -q -s -m hostile tests/hostile/test_disk_faults.py

# 10,000 mails from one address over four connections while two players keep writing: theirs answered within 1 s.
hostile-flood: $(BIN)/pbem
	PBEM_HOSTILE_FLOOD_MAILS=10000 $(BIN)/pytest -q -s -m hostile tests/hostile/test_flood.py

# A stranger's megabyte of each adversarial shape (78 mails) while two players keep writing: theirs taken within
# 1 s and answered within 2 s; each of his read within reading_limit, none applied.
hostile-stranger: $(BIN)/pbem
	$(BIN)/pytest -q -s -m hostile tests/hostile/test_stranger.py

clean:
	rm -rf $(VENV) demo-out pbem.sqlite*
