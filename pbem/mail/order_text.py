"""The lines a player wrote in a reply: above the quote, below it or between its lines.

People answer the way their client leads them: Outlook and phones put the
reply on top, Thunderbird and old hands write below the quote, some answer
between the quoted lines. This module keeps every line the player wrote and
drops what they did not:

* lines marked as quoted (``>``), and HTML blockquotes (which `html_text`
  writes as ``>`` lines);
* the header a client writes above a quote: an attribution ("On ... wrote:",
  in the languages players write in, possibly wrapped over three lines), a
  rule such as "-----Original Message-----", or a block of header lines
  ("From:/Sent:/To:/Subject:", "Von:/Gesendet:", "От:/Отправлено:", Hotmail's
  "Date:/Subject:/From:"). When the quote after such a header is marked, the
  player's lines after it are kept (bottom-posting, interleaving); when it is
  not marked (Outlook), the rest of the message is the quote, except what
  follows the end of the prompt's own order block, which can only be the
  player's. The service, which has the letter copied, reads such a quote
  again against it (`own_against_letter`: `Reply.unmarked` keeps it);
* a signature from its "-- " line to the next quote, and phone footers.

The quoted lines are kept aside (`Reply.quoted`): a player may edit the
prompt's block where it stands, inside the quote; `added_lines` finds such
lines by comparing the quote with the letter it quotes.

Sign-offs and signatures written without "-- " stay in the text: the order
parser reads as orders only lines that start with an order's verb and lists
the rest as ignored, so "Thanks," is never called an error. When the kept
lines carry the prompt's order block markers (`ORDERS_BEGIN`, `ORDERS_END`),
only the lines between them are read. The text is NFKC-normalised, so
fullwidth letters read as their plain forms.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from pbem.mail.limits import UNBOUNDED, ReadingTime

ORDERS_BEGIN = "===== ORDERS: edit below this line ====="
ORDERS_END = "===== END OF ORDERS ====="

#: How many lines an attribution ("On <date>, <who> wrote:") may be wrapped over.
ATTRIBUTION_LINES = 3

#: Attributions, each with whether it must end in ":". A pattern never has two open-ended parts one after
#: the other (".+\\bschrieb\\b.*:$" read the rest of the line again after every "schrieb" of a long line):
#: the colon at the end is tested apart (docs/mail.md, the pattern audit).
_ATTRIBUTION_RES = [
    (re.compile(r"^(?:-{2,}+\s*)?On\b.+\bwrote\s*:?$", re.I), False),  # English; Yahoo's "--- On ... wrote:"
    (re.compile(r"^Le\b.+\ba\s+[ée]crit\s*:?$", re.I), False),  # French
    (re.compile(r"^Am\b.+\bschrieb\b", re.I), True),  # German
    (re.compile(r"^El\b.+\bescribi[óo]\s*:?$", re.I), False),  # Spanish
    (re.compile(r"^Il\b.+\bha scritto\s*:?$", re.I), False),  # Italian
    (re.compile(r"^Op\b.+\bschreef\b", re.I), True),  # Dutch
    (re.compile(r"^(?:Em|On)\b.+\bescreveu\s*:?$", re.I), False),  # Portuguese
    (re.compile(r"^(?:W dniu|Dnia)\b.+\bnapisa[łl]a?\b", re.I), True),  # Polish
]

#: Attributions that begin with the date or the name: read on one line only, never joined
#: to the line above (which may be the player's last order). Each is a line ending in ":" with a digit
#: somewhere before the word (`_dated_attribution`): "^.*\\d.*\\bskrev\\b.*:$" as one pattern tried every
#: digit against every later position.
_ATTRIBUTION_WORDS = [
    re.compile(r"\b(?:пишет|написал|написала|написал\(а\))\s*:$", re.I),  # Russian
    re.compile(r"\bskrev\b", re.I),  # Swedish, Danish, Norwegian
    re.compile(r"\bkirjoitti\s*:$", re.I),  # Finnish
]

#: A line naming a mailbox and a time and ending in ":" is an attribution when a marked quote follows it
#: (`_loose_attribution`: a digit before the mailbox, the colon tested apart).
_MAILBOX = re.compile(r"<[^<>@\s]++@[^<>\s]++>")
_DIGIT = re.compile(r"\d")


def _attribution_re_match(text: str) -> bool:
    return any(pattern.match(text) and (not colon or text.endswith(":")) for pattern, colon in _ATTRIBUTION_RES)


def _dated_attribution(line: str) -> bool:
    """A one-line attribution: it ends in ":" and has a digit before its word ("2024-05-01 Ann skrev:")."""
    if not line.endswith(":"):
        return False
    digit = _DIGIT.search(line)
    return digit is not None and any(word.search(line, digit.end()) for word in _ATTRIBUTION_WORDS)


def _loose_attribution(line: str) -> bool:
    """A line ending in ":" with a mailbox in angle brackets and a digit before it."""
    if not line.endswith(":"):
        return False
    last = None
    for last in _MAILBOX.finditer(line):
        pass
    return last is not None and _DIGIT.search(line, 0, last.start()) is not None

_RULE_HEADER = re.compile(
    r"^-{2,}+\s*(?:Original Message|Original message|Forwarded message|Forwarded Message|"
    r"Ursprüngliche Nachricht|Originalnachricht|Message d'origine|Message original|Mensaje original|"
    r"Messaggio originale|Oorspronkelijk bericht|Исходное сообщение|Пересылаемое сообщение|"
    r"Ursprungligt meddelande|Oprindelig meddelelse|Opprinnelig melding|Wiadomość oryginalna)\s*-{2,}+(?:\s.*)?$"
    r"|^Begin forwarded message:$",
    re.I,
)

_RULE = re.compile(r"^[_\-=*]{10,}+$")

#: The names of the header lines clients write above a quote, by what they mean.
_FROM_KEYS = r"From|De|Von|Da|Van|От|Från|Fra|Od|Lähettäjä|Feladó|Kimden|Remetente|发件人|寄件者|差出人"
_OTHER_KEYS = (
    r"Sent|Date|To|Cc|Subject|Envoy[ée]|[ÀA]|Objet|Gesendet|Datum|An|Betreff|Enviado|Fecha|Para|Asunto|"
    r"Inviato|Data|Oggetto|Verzonden|Aan|Onderwerp|Отправлено|Дата|Кому|Копия|Тема|Skickat|Till|Ämne|"
    r"Sendt|Til|Emne|Wysłano|Do|Temat|Lähetetty|Vastaanottaja|Aihe|Assunto|Reply-To|发送时间|收件人|主题|日期|送信日時|宛先|件名"
)
_FROM_LINE = re.compile(rf"^[*_]*+(?:{_FROM_KEYS})\s*[:：][*_]*\s*\S", re.I)
_HEADER_LINE = re.compile(rf"^[*_]*+(?:{_FROM_KEYS}|{_OTHER_KEYS})\s*[:：][*_]*(?:\s|$)", re.I)

_MOBILE_FOOTER = re.compile(
    r"^("
    r"Sent from my \S.*|Sent from (Mail|Outlook|Yahoo Mail|AOL|Proton Mail|ProtonMail)\b.*|"
    r"Sent from \S+ for (iOS|Android|iPhone|iPad|Windows).*|"
    r"Sent (via|with|using) .*(mobile|phone|iPhone|Android|app|Galaxy|BlackBerry|Proton).*|"
    r"Get Outlook for (iOS|Android).*|Sent from the all[- ]new AOL app.*|"
    r"Sent from Samsung.*|Sent from Yahoo Mail.*|Sent from Gmail Mobile|"
    r"Envoy[ée] de mon \S.*|Von meinem \S.* gesendet\.?|Enviado desde mi \S.*|Inviato da .*(iPhone|Android).*|"
    r"Отправлено (с|из) .*|Sent from .*"
    r")$",
    re.I,
)

_QUOTE_MARKS = re.compile(r"^\s*(?:>\s?)+")
_BULLET = re.compile(r"^\s*(?:[-*•·‣◦]|\d{1,2}[.)])\s+")
#: A rule line format=flowed joined to the header after it (Outlook Express ends the rule with a space).
_JOINED_RULE = re.compile(r"^(\s*-{2,}+\s*Original Message\s*-{2,}+)\s+(\S.*)$", re.I)

_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)


def _quoted(line: str) -> bool:
    return line.lstrip().startswith(">")


#: How an attribution's first line can begin: the words the joinable patterns start with.
_ATTRIBUTION_START = re.compile(r"^(?:-{2,}+\s*)?(?:On|Le|Am|El|Il|Op|Em|W dniu|Dnia)\b", re.I)


#: The verbs the joinable attributions end with: an attribution has one of them.
_ATTRIBUTION_END = re.compile(r"wrote|[ée]crit|schrieb|escribi|scritto|schreef|escreveu|napisa", re.I)


def _attribution_at(lines: list[str], i: int) -> int:
    """How many lines an attribution starting at ``i`` takes (0 if none)."""
    first = lines[i].strip()
    if not first.endswith(":") and not _ATTRIBUTION_START.match(first):
        return 0  # the cheap test first: most lines are neither
    if _dated_attribution(first):
        return 1
    after = _next_text(lines, i + 1)
    if _loose_attribution(first) and after is not None and _quoted(lines[after]):
        return 1
    if not _ATTRIBUTION_START.match(first):
        return 0
    last = min(i + ATTRIBUTION_LINES, len(lines))
    if not any(_ATTRIBUTION_END.search(lines[j]) for j in range(i, last)):
        return 0  # no "wrote" in any language: no need to join the lines and try each pattern
    joined = ""
    for j in range(i, last):
        part = lines[j].strip()
        if not part or _quoted(lines[j]):
            return 0
        joined = f"{joined} {part}".strip()
        if _attribution_re_match(joined):
            return j - i + 1
    return 0


#: Lines a block of quote headers may take. The longest real block (Outlook's, with a Cc of many names
#: wrapped) is some forty lines, and once a block is found, the unmarked quote below it runs to the end.
_HEADER_BLOCK_LINES = 60
#: Lines into a block past which a line that is no header ends it (before: a value wrapped onto it).
_WRAPPED_VALUES = 12


class _HeaderMarks:
    """Which lines of a reply are quote headers, and where the next From and the next break are, read once.

    A block is looked for at every line the player may have written. Read line by line from each, a body
    of header-like lines without a From ("Subject: a" ten thousand times) was read to its end again from
    each of its lines: forty seconds for 8,000 lines. With these marks a block that cannot reach a From is
    refused at once, and one that can is found and skipped as a whole (docs/mail.md, the pattern audit).
    """

    def __init__(self, lines: list[str]) -> None:
        n = len(lines)
        self.header = [False] * n
        self.stop = [False] * n  # a blank or quoted line ends a block
        from_line = [False] * n
        for j, raw in enumerate(lines):
            line = raw.strip()
            if not line or _quoted(raw):
                self.stop[j] = True
            elif _HEADER_LINE.match(line):
                self.header[j] = True
                from_line[j] = bool(_FROM_LINE.match(line))
        # The first line at or after j that is a From header, a break, or no header at all (n: none).
        self.next_from = self._next(from_line)
        self.next_stop = self._next(self.stop)
        self.next_other = self._next([not (h or st) for h, st in zip(self.header, self.stop)])

    @staticmethod
    def _next(marks: list[bool]) -> list[int]:
        out = [len(marks)] * (len(marks) + 1)
        for j in range(len(marks) - 1, -1, -1):
            out[j] = j if marks[j] else out[j + 1]
        return out

    def may_reach_from(self, i: int) -> bool:
        """Whether a block starting at ``i`` can reach a From line before it ends."""
        found = self.next_from[i]
        if found >= len(self.header) or found - i >= _HEADER_BLOCK_LINES or self.next_stop[i] < found:
            return False
        later = i + _WRAPPED_VALUES + 1
        return later >= found or self.next_other[later] >= found


def _header_block_at(lines: list[str], i: int, marks: _HeaderMarks | None = None) -> int:
    """How many lines a block of quote headers (with a rule above it) starting at ``i`` takes (0 if none)."""
    marks = marks or _HeaderMarks(lines)
    start = i
    if _RULE.match(lines[i].strip()) or _RULE_HEADER.match(lines[i].strip()):
        i = _next_text(lines, i + 1)
        if i is None:
            return 0
    if not marks.header[i] or not marks.may_reach_from(i):
        return 0
    keys = 0
    saw_from = False
    j = i
    while j < len(lines) and j - i < _HEADER_BLOCK_LINES and not marks.stop[j]:
        if marks.header[j]:
            keys += 1
            saw_from = saw_from or marks.next_from[j] == j
        elif j - i > _WRAPPED_VALUES:
            break  # a value wrapped onto the next line is part of the block; prose is not
        j += 1
    if keys >= 2 and saw_from:
        return j - start
    return 0


def _next_text(lines: list[str], i: int) -> int | None:
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i if i < len(lines) else None


def _signature_at(line: str) -> bool:
    return line in ("-- ", "--")


def _normalise(text: str) -> list[str]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = unicodedata.normalize("NFKC", text.translate(_INVISIBLE))
    lines: list[str] = []
    for ln in text.split("\n"):
        joined = _JOINED_RULE.match(ln) if "--" in ln else None
        lines.extend([joined.group(1), joined.group(2)] if joined else [ln if ln == "-- " else ln.rstrip()])
    return lines


#: Lines read between two looks at the time a message may take (`ReadingTime`).
_LINES_BETWEEN_CHECKS = 4096


@dataclass(frozen=True)
class _Unmarked:
    """Where an unmarked quote began: its first line, and how many lines were kept and quoted before it."""

    start: int
    kept: int
    quoted: int


def _own_lines(lines: list[str], time: ReadingTime = UNBOUNDED) -> tuple[list[str], list[str], _Unmarked | None]:
    """(every line the player wrote, every quoted line with its marks taken off, each in order; the first
    unmarked quote, if there is one)."""
    kept: list[str] = []
    quoted: list[str] = []
    unmarked: _Unmarked | None = None
    end_marker = ORDERS_END.lower()
    marks = _HeaderMarks(lines)
    i = 0
    steps = 0
    while i < len(lines):
        steps += 1
        if steps % _LINES_BETWEEN_CHECKS == 0:
            time.check()
        line = lines[i]
        stripped = line.strip()
        if not stripped:  # most lines of a long body, and never a quote, a footer or a header
            kept.append(line)
            i += 1
            continue
        if _quoted(line):
            quoted.append(_QUOTE_MARKS.sub("", line))
            i += 1
            continue
        if _MOBILE_FOOTER.match(stripped):
            i += 1
            continue
        if _signature_at(line):
            i += 1
            while i < len(lines) and not _quoted(lines[i]) and not _quote_header(lines, i, marks):
                i += 1
            continue
        size = _quote_header(lines, i, marks)
        if not size:
            kept.append(line)
            i += 1
            continue
        after = _next_text(lines, i + size)
        if after is not None and _quoted(lines[after]):
            i = after  # a marked quote: what the player writes after it is read
            continue
        # An unmarked quote runs to the end, except what follows the prompt's own order block. Where it began
        # is kept: the service, which has the letter it copies, can tell the player's lines in it apart.
        unmarked = unmarked or _Unmarked(i + size, len(kept), len(quoted))
        rest = [n.strip().lower() for n in lines[i + size:]]
        if end_marker not in rest:
            quoted.extend(lines[i + size:])
            break
        resume = i + size + len(rest) - rest[::-1].index(end_marker)
        quoted.extend(lines[i + size:resume])
        i = resume
    return kept, quoted, unmarked


def _quote_header(lines: list[str], i: int, marks: _HeaderMarks | None = None) -> int:
    stripped = lines[i].strip()
    if not stripped:
        return 0
    block = _header_block_at(lines, i, marks)
    if block:
        return block
    if _RULE_HEADER.match(stripped):
        return 1
    return _attribution_at(lines, i)


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _select_order_block(lines: list[str]) -> list[str]:
    norm = [ln.strip().lower() for ln in lines]
    begin = ORDERS_BEGIN.lower()
    if begin not in norm:
        return lines
    start = norm.index(begin) + 1
    end = ORDERS_END.lower()
    stop = norm.index(end, start) if end in norm[start:] else len(lines)
    return lines[start:stop]


def _block_in(lines: list[str]) -> tuple[str, ...]:
    """The lines between the last pair of order block markers in ``lines`` (none if there is no pair)."""
    norm = [ln.strip().lower() for ln in lines]
    begin, end = ORDERS_BEGIN.lower(), ORDERS_END.lower()
    if begin not in norm:
        return ()
    start = len(norm) - norm[::-1].index(begin)
    if end not in norm[start:]:
        return ()
    stop = norm.index(end, start)
    return tuple(ln.strip() for ln in lines[start:stop] if ln.strip())


@dataclass(frozen=True)
class UnmarkedQuote:
    """An unmarked quote (Outlook's) and what stood around it, kept to be read against the letter it copies.

    Without that letter, everything after the quote's header is taken for the quote, but for what follows the
    prompt's order block: a player who wrote below the copy was not heard. The service has the letter, and
    `own_against_letter` takes every line not in it as the player's.
    """

    above: tuple[str, ...]  # the lines the player wrote before the quote's header
    lines: tuple[str, ...]  # every line after the header, to the end of the message
    marked: tuple[str, ...]  # the lines of marked quotes before it, marks taken off


@dataclass(frozen=True)
class Reply:
    """What a reply holds for the order reader."""

    own: str  # the lines the player wrote, blank edges trimmed
    #: The quoted lines, marks taken off. A player may write inside the quote (edit the
    #: prompt's order block where it stands, or answer inline in Outlook's unmarked quote);
    #: only the service, which has the letter that was quoted, can tell those lines apart.
    quoted: tuple[str, ...] = ()
    unmarked: UnmarkedQuote | None = None  # the first unmarked quote, if the reply has one


def _stripped(lines: list[str]) -> tuple[str, ...]:
    return tuple(ln.strip() for ln in lines if ln.strip())


def _kept_text(lines: list[str]) -> str:
    return "\n".join(_trim_blank(_select_order_block(_trim_blank(lines))))


def read_reply(text: str, time: ReadingTime = UNBOUNDED) -> Reply:
    lines = _normalise(text)
    time.check()
    own, quoted, at = _own_lines(lines, time)
    unmarked = None
    if at is not None:
        unmarked = UnmarkedQuote(tuple(own[:at.kept]), tuple(lines[at.start:]), _stripped(quoted[:at.quoted]))
    return Reply(_kept_text(own), _stripped(quoted), unmarked)


def _comparable(line: str) -> str:
    return " ".join(_BULLET.sub("", line).split()).casefold()


#: Quoted lines read beyond the quoted letter's own length when looking for what a player wrote inside it.
QUOTED_LINES_READ = 1_000


class _Letter:
    """The letter a quote copies, read once: how often it has each line, and its text joined, to find pieces in.

    Clients rewrap what they quote, and change blanks, bullets and case: lines are compared by `_comparable`,
    and a line the letter does not have whole may still be a piece of one of its lines, or two joined.
    """

    def __init__(self, letters: list[str]) -> None:
        texts = [[_comparable(ln) for ln in _normalise(t)] for t in letters]
        self.whole = [" ".join(x for x in lines if x) for lines in texts]
        self.counts = [Counter(lines) for lines in texts]
        self.lines = min((sum(1 for x in lines if x) for lines in texts), default=0)
        #: How many quoted lines are worth looking for as pieces: a quote of the letter has about its lines;
        #: one far longer is another text quoted (or a flood), and each line would be searched for in it all.
        self.most = 4 * max((len(lines) for lines in texts), default=0) + QUOTED_LINES_READ

    def count(self, key: str) -> int:
        return max((c[key] for c in self.counts), default=0)

    def has_piece(self, key: str) -> bool:
        return any(key in w for w in self.whole)


def added_lines(quoted: tuple[str, ...], letters: list[str]) -> list[str]:
    """The lines of a quote that the quoted letter did not have: what the player wrote inside it.

    ``letters`` are the texts of the letter that was quoted (its plain part, its
    HTML part as text). A quoted line is the player's when it is found nowhere
    in them, even joined or cut as clients rewrap lines, or when it occurs more
    often in the quote than in the letter ("NATION Crete" typed again under
    the list of choices that names it).
    """
    letter = _Letter(letters)
    seen: Counter[str] = Counter()
    added: list[str] = []
    for line in quoted[:letter.most]:
        key = _comparable(line)
        if not key:
            continue
        seen[key] += 1
        in_letter = letter.count(key)
        if seen[key] > in_letter and not (in_letter == 0 and letter.has_piece(key)):
            added.append(line)
    return added


@dataclass(frozen=True)
class AgainstLetter:
    """An unmarked quote read against the letter it copies."""

    own: str  # the player's text: his lines above the quote, in the copy's order block, and below the copy
    inside: tuple[str, ...]  # other lines of the copy the letter did not have: orders only if legal
    matched: int  # how many lines of the quote the letter had: to choose among letters it may copy
    letter_lines: int  # how many lines with text the letter has (its shortest text)

    @property
    def copies(self) -> bool:
        """Whether the quote copies the letter at all: at least half its lines are found whole. Another text
        quoted (an older message of the player's, a letter from elsewhere) would be taken whole for his."""
        return 2 * self.matched >= self.letter_lines


_BLOCK_KEYS = (" ".join(ORDERS_BEGIN.split()).casefold(), " ".join(ORDERS_END.split()).casefold())


def _whole_lines(keys: list[str], letter: _Letter) -> tuple[list[bool], int]:
    """(for each line, whether the letter lacks it whole, counted so far; the last line it has: the copy's end)."""
    seen: Counter[str] = Counter()
    mine = [False] * len(keys)
    last = -1
    for j, key in enumerate(keys):
        if not key:
            continue
        seen[key] += 1
        if seen[key] <= letter.count(key):
            last = j
        else:
            mine[j] = True
    return mine, last


def copied_lines(quote: UnmarkedQuote, letters: list[str]) -> int:
    """How many lines of the quote the letter has whole: which of a player's letters a quote copies, found
    by counts alone before the one chosen is read in full (`own_against_letter`)."""
    keys = [_comparable(line) for line in quote.lines]
    mine, _ = _whole_lines(keys, _Letter(letters))
    return sum(1 for key, his in zip(keys, mine) if key and not his)


def own_against_letter(quote: UnmarkedQuote, letters: list[str]) -> AgainstLetter:
    """The player's lines in and below an unmarked quote: every line of it that the letter did not have.

    The quote is the letter copied, what the player changed in it (the order block edited where it stands,
    an answer between its lines) and, below it, what he wrote after it. A line is the letter's while the
    letter has it as often as the quote has so far (counts, not a diff: linear, and indifferent to what the
    client rearranged); a line found nowhere whole is still the letter's when it is a piece of it rewrapped.
    The copy ends at the last line the letter has whole; all after it is the player's, blank lines included
    (a PRESS block keeps its shape), and so are his changes to the order block. Other lines in the copy the
    letter did not have may be the client's (a line rebuilt from the HTML part, a link spelled out): they
    are orders only when complete and legal (`AgainstLetter.inside`).
    """
    letter = _Letter(letters)
    keys = [_comparable(line) for line in quote.lines]
    mine, last = _whole_lines(keys, letter)
    looked = 0
    for j in range(last + 1):
        if mine[j] and letter.count(keys[j]) == 0:
            looked += 1
            mine[j] = looked > letter.most or not letter.has_piece(keys[j])
    in_block = False
    block: list[str] = []
    inside: list[str] = []
    for j in range(last + 1):
        if keys[j] in _BLOCK_KEYS and not mine[j]:
            in_block = keys[j] == _BLOCK_KEYS[0]
        elif mine[j]:
            (block if in_block else inside).append(quote.lines[j].strip())
    kept, _, _ = _own_lines([*block, "", *quote.lines[last + 1:]])  # his footers, signature, marked quotes go
    matched = sum(1 for j in range(last + 1) if keys[j] and not mine[j])
    return AgainstLetter(_kept_text([*quote.above, *kept]), tuple(inside[:letter.most]), matched, letter.lines)


def extract_order_text(text: str) -> str:
    """The lines of ``text`` the player wrote (see the module's docstring), blank edges trimmed."""
    return read_reply(text).own
