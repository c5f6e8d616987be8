"""Everything the `pbem` command prints goes through here, with control characters escaped (`pbem.escaping`).

Why one place: a command prints names, press, order lines, subjects and
senders' addresses that players and strangers wrote, and a moderator runs it
in a terminal. An ANSI escape, a carriage return or a backspace printed raw
would let its writer clear that screen, retitle the terminal or rewrite a
line already shown; a line feed in a name would make a log entry or a row of
a table look like two. So every line printed is escaped as one line: a line
feed or tab inside it is written out too, and each line on the screen is
one the command meant. JSON is printed as JSON, every control character a
JSON escape, so the data read back is exactly what was written.

Escaping twice is not escaping once: print each text here, and nowhere
escape it before.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import click

from pbem.escaping import escape_controls

__all__ = ["say", "say_json", "say_lines"]


def say(*cells: object, sep: str = " ", err: bool = False, nl: bool = True) -> None:
    """Print one line made of ``cells`` joined by ``sep`` (the command's own), each cell escaped as one line.

    ``say(f"...")`` prints one line; ``say(game, status, version, sep="\\t")``
    a row of a tab-separated table, where a tab in a cell is written out and
    cannot make a column of its own.
    """
    click.echo(sep.join(escape_controls(str(cell), one_line=True) for cell in cells), err=err, nl=nl)


def say_lines(lines: Iterable[str], *, err: bool = False) -> None:
    """Print each of ``lines`` on a line of its own (an explanation, an acknowledgement, a table of the rules)."""
    for line in lines:
        say(line, err=err)


def say_json(data: Any, **options: Any) -> None:
    """Print ``data`` as JSON (``options`` as for `json.dumps`): ASCII only, so no control character is printed
    raw and the data is exact (``\\u001b``, not an escape of pbem's own)."""
    click.echo(json.dumps(data, ensure_ascii=True, **options))
