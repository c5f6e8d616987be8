"""The moderator's console on his page: each action is the order he would write by mail, with its reason.

Why the console writes orders instead of acting: a moderator's action must
leave the same trace whichever door it came through (the inbox keeps the
message, the log names it as its source, the table is told in the same
letters), and the mail path already does all of that. So each form becomes
one line of `docs/orders.md` (PAUSE, RESUME, EXTEND, DEADLINE, REPLACE,
KICK, UNKICK, ROLLBACK), sent as the moderator's mail (`pages.orders_message`).

A rollback is previewed first, on the page, by the same function that
answers ROLLBACK by mail (`rollback.preview`), read on a transaction that
writes nothing; the button under the preview sends the line the mailed
preview ends with, ``ROLLBACK <v> CONFIRM <reason>``.
"""

from __future__ import annotations

from collections.abc import Mapping

from pbem.rules.core.commands import RollBack
from pbem.rules.core.rejection import Rejection
from pbem.store.unit_of_work import UnitOfWork

from .pages import Opened
from .rollback import preview

__all__ = ["ACTIONS", "console_order", "rollback_preview"]

#: Each action: the order it writes, and the fields it needs (a reason is asked wherever the order takes one).
ACTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "pause": ("PAUSE {reason}", ("reason",)),
    "resume": ("RESUME {reason}", ()),
    "extend": ("EXTEND {hours} {reason}", ("hours", "reason")),
    "deadline": ("DEADLINE {reason}", ()),
    "replace": ("REPLACE {seat} WITH {name} {email} {reason}", ("seat", "name", "email", "reason")),
    "kick": ("KICK {seat} {reason}", ("seat", "reason")),
    "unkick": ("UNKICK {seat} {reason}", ("seat",)),
    "rollback": ("ROLLBACK {version} CONFIRM {reason}", ("version", "reason")),
}
#: The longest text one field takes.
MOST_FIELD = 300


def _field(fields: Mapping[str, str], name: str, needed: bool) -> str:
    value = " ".join(str(fields.get(name, "")).split())  # one line: a newline would start a second order
    if len(value) > MOST_FIELD:
        raise ValueError(f"the {name} is longer than {MOST_FIELD} characters")
    if needed and not value:
        raise ValueError(f"the {name} is missing")
    if name in ("hours", "version") and value and not value.isdigit():
        raise ValueError(f"the {name} is a whole number, not {value!r}")
    if name == "email" and value and ("@" not in value or " " in value):
        raise ValueError(f"{value!r} is not an address")
    return value


def console_order(action: str, fields: Mapping[str, str]) -> str:
    """The order line one console form stands for; ValueError in one sentence for a form not filled in."""
    if action not in ACTIONS:
        raise ValueError(f"there is no console action {action!r}")
    pattern, needed = ACTIONS[action]
    names = [part[1:-1] for part in pattern.split() if part.startswith("{")]
    values = {name: _field(fields, name, name in needed) for name in names}
    return " ".join(pattern.format(**values).split())


def rollback_preview(uow: UnitOfWork, opened: Opened, version: int, reason: str) -> tuple[bool, str]:
    """(whether it can be applied, what it would change or why not): ROLLBACK's preview, nothing applied."""
    if opened.viewer != "moderator":
        raise PermissionError("only the moderator previews a rollback")
    try:
        return True, preview(uow, opened.state, RollBack(to=version, reason=reason, confirmed=False))
    except Rejection as refusal:
        return False, f"ROLLBACK {version} cannot be done: {refusal}"
