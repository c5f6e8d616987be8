"""A progress bar for the long commands (simulate, verify, demo): on a terminal only, on standard error.

The service layer reports progress through a plain callback, ``report(done,
total, what)``; this module turns it into a rich progress bar when a person
watches: standard output and standard error are both a terminal (not a dumb
one) and the command was not asked for ``--json``. Otherwise it gives None and
the command prints exactly what it always printed. The bar is drawn on
standard error and erased when the command ends, so what stays on the screen
is the command's own output. rich is imported only when a bar is drawn, so
`pbem ingest` behind an MTA never loads it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Report = Callable[[int, int, str], None]


def on_terminal() -> bool:
    """Both standard output and standard error are a terminal: nobody reads this run's output as data."""
    return all(stream is not None and stream.isatty() for stream in (sys.stdout, sys.stderr))


@contextmanager
def progress_bar(description: str, *, quiet: bool = False) -> Iterator[Report | None]:
    """The callback drawing a bar titled ``description`` while the block runs; None when quiet or not on a terminal."""
    if quiet or not on_terminal():
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(stderr=True)
    if not console.is_interactive:  # TERM=dumb, or TTY_COMPATIBLE=0: no cursor movement to redraw a bar with
        yield None
        return
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[what]}", markup=False),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(description, total=None, what="")
        bar.refresh()

        def report(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, what=what)

        yield report
