"""Turning the text of an email into commands, line by line.

Made for people typing on a phone: verbs are short and may be abbreviated,
case never matters, names forgive small misspellings (the nearest names are
offered), and one bad line never spoils the others. Lines that are not orders
(blank lines, ``#`` comments, ``SECRET`` lines handled by authentication) are
skipped.

A line is an order attempt only when its first word is a verb, a unique
prefix of one, or so near one that the rest of the line reads as that verb's
order ("PLCE Phaestos"). Anything else ("Thanks,", "Alex", a signature line)
was never meant as an order: it is listed as ignored, never called an error.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pbem.rules.core.state import GameState
from pbem.rules.ruleset.reference import TOPICS, describe
from pbem.rules.ruleset.rulebook import ruleset_for_options, ruleset_of

from . import (
    advances,
    calamities,
    calamity_war,
    cities,
    conflict,
    expansion,
    moderator,
    movement,
    settings,
    setup,
    tax,
    trade,
    trade_cards,
)
from . import press as press_orders
from .grammar import Actor, LineError, Parser, name
from .moments import ALL_PHASE_WORDS
from .sign_offs import STOP_WORDS, bare, is_first_name, is_sign_off, one_edit_away


@dataclass(frozen=True)
class OrderLine:
    number: int
    text: str
    command: Any = None
    canonical: str = ""
    error: str | None = None
    suggestions: tuple[str, ...] = ()
    help: str | None = None
    notes: tuple[str, ...] = ()
    #: A question (STATUS, ORDERS, HAND, BOARD, HISTORY, EXPLAIN) and what follows it: the service answers it.
    query: tuple[str, str] | None = None


@dataclass(frozen=True)
class Orders:
    lines: tuple[OrderLine, ...] = ()
    secret: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: Lines that were no order attempt (sign-offs, greetings, prose), as written.
    ignored: tuple[str, ...] = ()

    @property
    def commands(self) -> list[tuple["OrderLine", Any]]:
        return [(line, line.command) for line in self.lines if line.command is not None]

    @property
    def errors(self) -> list[OrderLine]:
        return [line for line in self.lines if line.error]


#: The modules that hold each phase's verbs, in the order HELP lists them.
VERB_MODULES = (
    setup, tax, expansion, movement, conflict, cities, trade_cards, trade, calamities, calamity_war, advances, moderator, settings
)
VERBS: dict[str, tuple[Parser, str]] = {}
CANONICAL: dict[type, Callable[[Any], str]] = {}
for _module in VERB_MODULES:
    VERBS.update(_module.VERBS)
    CANONICAL.update(_module.CANONICAL)
CANONICAL[press_orders.SendPress] = press_orders.canonical
HELP_VERBS = ("HELP", "?")
#: Questions any player may ask; written whole (ORDERS is not ORDER), answered by the service.
#: Words a question may take beside numbers and names: a turn, a phase ("HISTORY turn 3 movement").
MOMENT_WORDS = ALL_PHASE_WORDS | {"turn", "before", "to"}
QUERY_VERBS = ("STATUS", "ORDERS", "HAND", "BOARD", "HISTORY", "MAP", "EXPLAIN", "VERIFY", "LINK")
#: Orders that must be written whole: their beginnings are everyday words ("See my answers below", "Roll on
#: Friday"), and what they do (tell the seed, take the game back) must never be guessed from a word of prose.
WHOLE_VERBS = ("SEED", "ROLLBACK", "CONFIRM", "MAIL", "REVOKE")


#: No verb is longer; a longer first word is no order, and is not compared with every verb.
_LONGEST_VERB = 24


def _verb(word: str) -> str:
    word = word.upper().rstrip(":")
    if len(word) > _LONGEST_VERB:
        raise LineError(f"unknown order '{word[:_LONGEST_VERB]}'…")
    if word in VERBS:
        return word
    starts = sorted({v for v in VERBS if v.startswith(word) and v not in WHOLE_VERBS}) if len(word) >= 3 else []
    if len(starts) == 1:
        return starts[0]
    near = difflib.get_close_matches(word, list(VERBS), n=3, cutoff=0.7)
    raise LineError(f"unknown order '{word}'", [VERBS[v][1] for v in near])


def _verb_or_none(word: str) -> str | None:
    """The verb ``word`` names (as `_verb` reads it), or None."""
    try:
        return _verb(word)
    except LineError:
        return None


def _slip_of(word: str) -> str | None:
    """The one verb ``word`` is a slip of the finger away from (`one_edit_away`), or None (none, or several)."""
    word = word.upper().rstrip(":")
    if len(word) < 3 or len(word) > _LONGEST_VERB:
        return None
    near = [verb for verb in VERBS if verb not in WHOLE_VERBS and one_edit_away(word, verb)]
    return near[0] if len(near) == 1 else None


def _mail_meant(rest: str) -> bool:
    """Whether a line beginning with MAIL sets the mail preference: nothing after it, or a word of MAIL's
    (or a slip of one, refused with the usage) first; "Mail me when it is my turn" is a sentence."""
    words = rest.replace(",", " ").split()
    if not words:
        return True
    first = bare(words[0]).upper()
    return first == "NO" or any(first == w or one_edit_away(first, w) for w in settings.MAIL_WORDS)


def _reads_as(verb: str, rest: str, state: GameState, actor: Actor) -> tuple[Any, list[str]] | None:
    """The command the rest of a line makes as ``verb``'s order, with its notes; None when it makes none."""
    notes: list[str] = []
    try:
        return VERBS[verb][0](state, actor, rest, notes), notes
    except Exception:  # a probe: whatever the parser objects to, the line is no order of that verb
        return None


def _fault(verb: str, rest: str, state: GameState, actor: Actor) -> str:
    """Why the rest of a line is no order of ``verb``, in the parser's words."""
    try:
        VERBS[verb][0](state, actor, rest, [])
    except LookupError as exc:
        return str(exc).strip("'\"")
    except Exception as exc:  # the parser's own refusal (LineError) or any other: its words are the reason
        return str(exc)
    return "it could not be read"


def _names_the_game(rest: str, state: GameState) -> bool:
    """Whether the rest of a line holds a number or the name of an area or a nation, written whole.

    A slip of a verb followed by prose ("More later.", "Plase find them below")
    is no order; followed by the game's own words ("MVOE 1 Knossos Atlantis")
    it is one, and its fault (Atlantis) is worth telling.
    """
    words = [bare(word).upper() for word in rest.split()]
    if any(word.isdigit() for word in words):
        return True
    text = f" {' '.join(words)} "
    ruleset = ruleset_of(state) if state.players else ruleset_for_options({})
    names = [*ruleset.areas, *(p.nation for p in state.players if p.nation)]
    return any(f" {known.upper()} " in text for known in names)


def _meant_as_order(head: str, rest: str, state: GameState, actor: Actor) -> bool:
    """Whether a line with an unknown first word was meant as an order.

    It was when the nearest verb reads the rest of the line ("PLCE Phaestos");
    "Please find my orders below" and "Love," were not, though PLEASE and LOVE
    are near PLACE and MOVE.
    """
    word = head.upper().rstrip(":")
    if len(word) > _LONGEST_VERB:
        return False
    for verb in difflib.get_close_matches(word, list(VERBS), n=3, cutoff=0.7):
        try:
            VERBS[verb][0](state, actor, rest, [])
        except Exception:  # a probe: whatever the parser objects to, the line is no order of that verb
            continue
        return True
    return False


#: Lines of one message read as orders at most; no step needs a tenth of it, and a flood of
#: lines (650 kB of HELP once) must not hold the game's transaction for seconds.
MAX_LINES = 300

#: Characters an order line may have. The longest order a player writes (a purchase naming a dozen cards
#: and how to pay) is a few hundred; a longer line starting with a verb is refused unread, one without is
#: prose. With `MAX_LINES` it bounds what one message can make the verb parsers read.
MAX_LINE_CHARS = 1_000


#: A list marker a phone or a word processor puts before a line: "- ", "* ", "• ", "1. ", "2) ".
_BULLET = re.compile(r"^(?:[-*•·‣◦]|\d{1,2}[.)])\s+(?=\S)")


def canonical(command: Any, state: GameState) -> str:
    """The order as the server understood it, in the form a player would write it."""
    write = CANONICAL.get(type(command))
    return write(command) if write else type(command).__name__


def _help(state: GameState | None, rest: str) -> str:
    ruleset = ruleset_of(state) if state is not None and state.players else ruleset_for_options({})
    words = rest.split(None, 1)
    if not words:
        return "Orders: " + "; ".join(sorted({usage for _, usage in VERBS.values()})) + (
            ". HELP AREA <name>, HELP CARD <name>, HELP CALAMITY <name>, HELP STACKS, HELP AST, HELP OPTIONS, HELP MONEY."
        )
    topic = words[0].lower()
    return describe(ruleset, topic, words[1] if len(words) > 1 else None)


#: "FOR <who>: <order>" or "FOR <who> <order>". The blanks before the colon start where their run does (the
#: look-behind): "(.+?)\s*:" read a long run of blanks again from each of them.
_FOR = re.compile(r"^for\s++(.+?)(?<!\s)\s*+:\s*(.+)$|^for\s+(\S+)\s+(.+)$", re.IGNORECASE)


def _for_another(text: str) -> bool:
    """Whether a player's line beginning with FOR is the moderator's order form: its order starts with a verb."""
    match = _FOR.match(text)
    if not match:
        return False
    order = (match.group(2) or match.group(4)).split()
    return bool(order) and bare(order[0]).upper() in VERBS


def _on_behalf(state: GameState, text: str) -> tuple[Actor, str]:
    match = _FOR.match(text)
    if not match:
        raise LineError("write FOR <player or nation>: <order>")
    who = (match.group(1) or match.group(3)).strip()
    order = (match.group(2) or match.group(4)).strip()
    by_name = {p.name: p.id for p in state.players}
    by_name.update({p.nation: p.id for p in state.players if p.nation})
    return Actor(player_id=by_name[name(who, by_name, "player or nation")], moderator=True), order


def _press_body(all_lines: list[str], number: int, rest: str) -> tuple[list[str], int]:
    """The lines a PRESS block carries, and the number of its last line (END, or the message's last)."""
    if ":" in rest:
        return [], number  # PRESS TO ALL: the message on one line
    for end in range(number, len(all_lines)):
        if all_lines[end].strip().upper() == press_orders.END:
            return [ln.rstrip() for ln in all_lines[number:end]], end + 1
    return [ln.rstrip() for ln in all_lines[number:]], len(all_lines)


@dataclass(frozen=True)
class Written:
    """The lines of a message that may be orders, found without the game: what `parse_orders` reads.

    Finding them reads the whole message (a megabyte of blank lines is a million lines); reading them as
    orders needs the game's state, and so its transaction. The service finds them before that transaction
    opens (pbem.service.inbound), so the transaction reads at most `MAX_LINES` lines.
    """

    #: (line number, the line without its list marker, the lines a PRESS block carries or None).
    lines: tuple[tuple[int, str, tuple[str, ...] | None], ...] = ()
    notes: tuple[str, ...] = ()


def written_lines(text: str) -> Written:
    """The lines of ``text`` that are neither blank nor comments, up to `MAX_LINES`, each PRESS with its block."""
    found: list[tuple[int, str, tuple[str, ...] | None]] = []
    notes: list[str] = []
    all_lines = text.splitlines()
    inside_press = 0  # the last line of a PRESS block being read
    for number, raw in enumerate(all_lines, start=1):
        if number <= inside_press:
            continue
        stripped = raw.strip()
        if not stripped:
            continue
        line = _BULLET.sub("", stripped)
        if not line or line.startswith("#") or line.startswith("//"):
            continue
        if len(found) >= MAX_LINES:
            rest = sum(1 for r in all_lines[number - 1 :] if r.strip())
            notes.append(f"Only the first {MAX_LINES} lines were read; {rest} more were not. Send fewer at a time.")
            break
        words = line.split(None, 1)
        body = None
        if words[0].upper() == "PRESS":
            lines, inside_press = _press_body(all_lines, number, words[1].strip() if len(words) > 1 else "")
            body = tuple(lines)
        found.append((number, line, body))
    return Written(tuple(found), tuple(notes))


#: Lines a sign-off may have after it (a name, a title, a telephone number): one with more is a thank-you
#: in the middle of a letter, and the lines after it are read.
_SIGNED_LINES = 3


def _end_of_reading(written: Written) -> tuple[int, str] | None:
    """(the index of the line that ends the reading, that line): END or SIGNOFF, or a sign-off near the end
    that is not the first line."""
    for index, (_number, line, press_body) in enumerate(written.lines):
        if press_body is not None:
            continue
        if bare(line).upper() in STOP_WORDS:
            return index, line
        if index > 0 and is_sign_off(line) and len(written.lines) - index - 1 <= _SIGNED_LINES:
            return index, line  # (the first line of a letter is an opening: "Thanks!" then the orders)
    return None


def _would_be_order(line: str) -> bool:
    """Whether a line not read (after a sign-off) begins with a verb or a question written whole: worth a word."""
    head = bare(line.split()[0]).upper()
    return (head in VERBS or head in QUERY_VERBS) and not (len(line.split()) == 1 and is_first_name(head))


def _head_like(word: str) -> bool:
    """A chain head as letters show it (16 hex digits, or up to the whole 64): VERIFY's argument."""
    return 16 <= len(word) <= 64 and all(c in "0123456789abcdefABCDEF" for c in word)


def _query_arguments(rest: str, state: GameState) -> bool:
    """Whether what follows a query word is its arguments (numbers, players' and nations' names), not prose.

    "HISTORY 20", "EXPLAIN 431", "HISTORY turn 3 movement Egypt" are questions; "Orders in the block below."
    is a sentence that happens to begin with one.
    """
    known = {p.name.upper() for p in state.players} | {p.nation.upper() for p in state.players if p.nation}
    return all(word.isdigit() or word.upper() in known or word.lower() in MOMENT_WORDS or _head_like(word)
               for word in (bare(w) for w in rest.split()))


def _lone_word(line: str, notes: list[str]) -> str | None:
    """A line of one word: the word when it is a verb or a question written whole, else None (and why, if it helps).

    A beginning of a verb or a slip alone on its line is never an order:
    "Hal" and "Ann" are how people sign, and what HALT or a wrong ANNOUNCE
    would do cannot be taken back by the player. A lone slip of a verb that
    is no name ("Hlat") gets a word in the acknowledgement.
    """
    word = bare(line)
    upper = word.upper()
    if upper in HELP_VERBS or upper in QUERY_VERBS or (upper in VERBS and not is_first_name(word)):
        return upper
    slip = _slip_of(word) if word and not is_first_name(word) else None
    if slip is not None:
        notes.append(f"Not read: '{line}' alone on a line is no order; write {slip} in full if you meant it.")
    return None


def parse_orders(text: str | Written, state: GameState, actor: Actor) -> Orders:
    """Parse every line; a bad line gets an error and the rest still count."""
    written = text if isinstance(text, Written) else written_lines(text)
    lines: list[OrderLine] = []
    ignored: list[str] = []
    notes: list[str] = list(written.notes)
    secret: str | None = None
    end = _end_of_reading(written)
    for index, (number, line, press_body) in enumerate(written.lines):
        if end is not None and index >= end[0]:
            if index > end[0] and _would_be_order(line):
                notes.append(f"Not read: '{line[:80]}' comes after '{end[1]}', where your letter ends; "
                             "put orders above it.")
            elif index > end[0] or bare(end[1]).upper() not in STOP_WORDS:
                ignored.append(line)
            continue
        words = line.split(None, 1)
        head, rest = words[0], (words[1].strip() if len(words) > 1 else "")
        if len(words) == 1 and head.upper() != "PRESS":
            whole = _lone_word(line, notes)
            if whole is None:
                ignored.append(line)
                continue
            head = line = whole
        if head.upper() != "PRESS":
            # One space between words: no parser then meets a long run of blanks (docs/mail.md, the pattern audit).
            if len(line) > MAX_LINE_CHARS:
                if _verb_or_none(head) is None:
                    ignored.append(line)
                else:
                    lines.append(OrderLine(number, line[:80] + "…", error=(
                        f"this line is {len(line):,} characters long; an order is at most {MAX_LINE_CHARS:,}: "
                        "write one order a line")))
                continue
            line = " ".join(line.split())
            rest = " ".join(rest.split())
        if head.upper().rstrip(":") == "SECRET":
            secret = rest
            continue
        try:
            if head.upper() in HELP_VERBS:
                if len(rest.split()) >= 3 and bare(rest.split()[0]).lower() not in TOPICS:
                    ignored.append(line)  # "Help me if I got this wrong.": a sentence, not a question
                    continue
                lines.append(OrderLine(number, line, help=_help(state, rest)))
                continue
            if head.upper().rstrip("?:") in QUERY_VERBS:
                if not _query_arguments(rest, state):
                    ignored.append(line)  # a sentence beginning with the word: prose
                    continue
                lines.append(OrderLine(number, line, query=(head.upper().rstrip("?:"), rest)))
                continue
            if head.upper().rstrip(":") == "MAIL" and not _mail_meant(rest):
                ignored.append(line)  # "Mail me when it is my turn": prose
                continue
            if head.upper() == "PRESS":
                command = press_orders.press(state, actor, rest, list(press_body or ()))
                lines.append(OrderLine(number, line, command, canonical(command, state)))
                continue
            who = actor
            if head.upper() == "FOR" and not actor.moderator:
                if _for_another(line):
                    raise LineError("only the moderator gives orders for another player: write your own orders "
                                    "without FOR")
                ignored.append(line)  # "For the record, ...": prose
                continue
            if head.upper() == "FOR" and actor.moderator:
                who, line_order = _on_behalf(state, line)
                words = line_order.split(None, 1)
                head, rest = words[0], (words[1].strip() if len(words) > 1 else "")
            verb = _verb_or_none(head)
            if verb is not None and verb != head.upper().rstrip(":") and is_first_name(head):
                # "Ann Smith": a name, unless the rest reads as the order its beginning would make
                read = _reads_as(verb, rest, state, who)
                if read is None:
                    ignored.append(line)
                    continue
            if verb is None:
                slip = _slip_of(head)
                read = _reads_as(slip, rest, state, who) if slip is not None else None
                if read is not None:
                    command, line_notes = read
                    line_notes.insert(0, f"read '{head}' as {slip}")
                    lines.append(OrderLine(number, line, command, canonical(command, state), notes=tuple(line_notes)))
                    continue
                if slip is not None and _names_the_game(rest, state):
                    # "MVOE 1 Knossos Atlantis": an order, refused with its fault, the reading said
                    lines.append(OrderLine(number, line, error=f"read '{head}' as {slip}: {_fault(slip, rest, state, who)}"))
                    continue
                if not _meant_as_order(head, rest, state, who):
                    ignored.append(line)
                    continue
                verb = _verb(head)  # raises: unknown order, with the nearest verbs
            parser, _usage = VERBS[verb]
            line_notes = []
            command = parser(state, who, rest, line_notes)
            lines.append(OrderLine(number, line, command, canonical(command, state), notes=tuple(line_notes)))
        except LookupError as exc:
            lines.append(OrderLine(number, line, error=str(exc).strip("'\"")))
        except LineError as exc:
            lines.append(OrderLine(number, line, error=str(exc), suggestions=exc.suggestions))
    return Orders(tuple(lines), secret, tuple(notes), ignored=tuple(ignored))
