"""The orders in a reply: what the player wrote, without the quoted message, signatures or phone footers.

The text stops at the first reply header ("On ... wrote:", an Outlook header
block, an "Original Message" rule), signature or phone footer, and quoted
lines go; a reply written below the quote keeps the lines below it. When
what is left still carries the prompt's order block markers (`ORDERS_BEGIN`,
`ORDERS_END`, which `render` writes into every prompt), only the lines
between them are read.
"""

from __future__ import annotations

import re

ORDERS_BEGIN = "===== ORDERS: edit below this line ====="
ORDERS_END = "===== END OF ORDERS ====="


_REPLY_HEADER_RES = [
    re.compile(r"^On\b.+\bwrote:?$", re.I),                 # English (Gmail, Apple, Thunderbird)
    re.compile(r"^Le\b.+\ba [ée]crit ?:$", re.I),           # French
    re.compile(r"^Am\b.+\bschrieb\b.*:$", re.I),           # German
    re.compile(r"^El\b.+\bescribi[óo] ?:$", re.I),         # Spanish
    re.compile(r"^Il\b.+\bha scritto ?:$", re.I),          # Italian
    re.compile(r"^Op\b.+\bschreef\b.*:$", re.I),           # Dutch
]


_ORIGINAL_MESSAGE_RE = re.compile(
    r"^-{2,}\s*(Original Message|Ursprüngliche Nachricht|Message d'origine|Mensaje original|"
    r"Messaggio originale|Oorspronkelijk bericht)\s*-{2,}$",
    re.I,
)


_OUTLOOK_FROM_RE = re.compile(r"^[*_]*(From|De|Von|Da|Van)\s*:[*_]*\s*\S", re.I)


_OUTLOOK_FOLLOW_RE = re.compile(
    r"^[*_]*(Sent|Date|Envoy[ée]|Gesendet|Enviado|Inviato|Verzonden|Datum)\s*:[*_]*", re.I
)


_RULE_RE = re.compile(r"^[_\-=]{10,}$")


_MOBILE_FOOTER_RE = re.compile(
    r"^("
    r"Sent from my \S.*|Sent from (Mail|Outlook|Yahoo Mail|AOL)\b.*|"
    r"Sent from \S+ for (iOS|Android|iPhone|iPad|Windows).*|"
    r"Sent (via|with|using) .*(mobile|phone|iPhone|Android|app|Galaxy|BlackBerry).*|"
    r"Get Outlook for (iOS|Android).*|"
    r"Envoy[ée] de mon \S.*|Von meinem \S.* gesendet\.?|Enviado desde mi \S.*|Inviato da .*(iPhone|Android).*"
    r")$",
    re.I,
)


_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"), None)


def _reply_header_at(lines: list[str], i: int) -> bool:
    """Lines i.. start a reply header ('On <date>, <who> wrote:' possibly wrapped)."""
    first = lines[i].strip()
    if not first:
        return False
    joined = first
    for j in range(i, min(i + 3, len(lines))):
        if j > i:
            nxt = lines[j].strip()
            if not nxt:
                break
            joined = f"{joined} {nxt}"
        if any(r.match(joined) for r in _REPLY_HEADER_RES):
            return True
    return False


def _outlook_block_at(lines: list[str], i: int) -> bool:
    if not _OUTLOOK_FROM_RE.match(lines[i].strip()):
        return False
    following = [ln.strip() for ln in lines[i + 1:i + 6]]
    return any(_OUTLOOK_FOLLOW_RE.match(ln) for ln in following)


def _signature_or_footer_at(lines: list[str], i: int) -> bool:
    line = lines[i]
    if line in ("-- ", "--"):
        return True
    return bool(_MOBILE_FOOTER_RE.match(line.strip()))


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _cut_signature(lines: list[str]) -> list[str]:
    for i in range(len(lines)):
        if _signature_or_footer_at(lines, i):
            return lines[:i]
    return lines


def _select_order_block(lines: list[str]) -> list[str]:
    begin = ORDERS_BEGIN.lower()
    end = ORDERS_END.lower()
    norm = [ln.strip().lower() for ln in lines]
    if begin not in norm:
        return lines
    start = norm.index(begin) + 1
    try:
        stop = norm.index(end, start)
    except ValueError:
        stop = len(lines)
    return lines[start:stop]


def extract_order_text(text: str) -> str:
    """Remove quoted replies, signatures and mobile footers from a body.

    Everything from the first reply header ('On ... wrote:', '-----Original
    Message-----', an Outlook 'From: ... Sent: ...' block), signature
    separator ('-- ' or '--') or mobile footer ('Sent from my iPhone') onward
    is dropped, then every remaining line starting with '>' is dropped.  If the
    player wrote nothing above an 'On ... wrote:' header (bottom-posting), the
    unquoted lines below it are kept instead.  If the order block markers of a
    prompt are present, only the lines between them are kept.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.translate(_INVISIBLE).replace("\xa0", " ")
    lines = [ln.rstrip() if ln not in ("-- ",) else ln for ln in text.split("\n")]

    cut = len(lines)
    cut_kind = ""
    for i in range(len(lines)):
        stripped = lines[i].strip()
        if _signature_or_footer_at(lines, i):
            cut, cut_kind = i, "signature"
            break
        if _ORIGINAL_MESSAGE_RE.match(stripped):
            cut, cut_kind = i, "original"
            break
        if _outlook_block_at(lines, i):
            cut, cut_kind = i, "outlook"
            if i > 0 and _RULE_RE.match(lines[i - 1].strip()):
                cut = i - 1
            elif i > 1 and not lines[i - 1].strip() and _RULE_RE.match(lines[i - 2].strip()):
                cut = i - 2
            break
        if _reply_header_at(lines, i):
            cut, cut_kind = i, "reply"
            break

    above = [ln for ln in lines[:cut] if not ln.lstrip().startswith(">")]
    if cut_kind == "reply" and not any(ln.strip() for ln in above):
        # Bottom-posted reply: the player's own lines follow the quote.
        below = lines[cut + 1:]
        # skip the continuation of a wrapped header ("... <a@b>\nwrote:")
        while below and below[0].strip() and not below[0].lstrip().startswith(">") and \
                below[0].strip().lower().endswith(("wrote:", "écrit :", "écrit:")):
            below = below[1:]
        below = [ln for ln in _cut_signature(below) if not ln.lstrip().startswith(">")]
        if any(ln.strip() for ln in below):
            above = below

    kept = _select_order_block(_trim_blank(above))
    return "\n".join(_trim_blank(kept))
