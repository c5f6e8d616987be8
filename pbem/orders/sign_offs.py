"""How people end a letter, and the names they sign with: words that must never be read as orders.

A reply typed on a phone ends "Thanks,", "Hal". Read as orders, "Hal" was
a unique beginning of HALT and ended a player's ship step; "Ann" was read as
ANNOUNCE and answered with an error. The reader (`pbem.orders.language`)
asks this module three things: is a line a sign-off, is a word a person's
first name, and which verb is a word one slip of the finger away from.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from importlib import resources

#: How a letter is ended, in the languages players write in, lowercased, without the final punctuation.
SIGN_OFFS = frozenset({
    # English
    "thanks", "thank you", "thanks a lot", "many thanks", "thanks again", "thx", "ty", "ta", "cheers", "regards",
    "best", "best regards", "kind regards", "warm regards", "best wishes", "all the best", "yours", "yours truly",
    "sincerely", "yours sincerely", "love", "take care", "see you", "cya", "later", "bye", "good luck", "gl",
    "have fun", "good game", "gg", "rgds", "br",
    # French
    "merci", "merci bien", "merci beaucoup", "cordialement", "bien cordialement", "amitiés", "amicalement",
    "bises", "bisous", "à bientôt", "a bientot", "salutations", "bonne journée", "bonne soirée", "à plus", "a+",
    # German
    "danke", "danke schön", "vielen dank", "grüße", "gruß", "gruss", "grüsse", "viele grüße", "liebe grüße",
    "beste grüße", "herzliche grüße", "schöne grüße", "mit freundlichen grüßen", "mfg", "lg", "vg", "tschüss", "ciao",
    # Spanish
    "gracias", "muchas gracias", "saludos", "un saludo", "un abrazo", "abrazos", "atentamente", "cordialmente",
    "hasta luego", "nos vemos", "besos",
    # Italian
    "grazie", "grazie mille", "saluti", "cordiali saluti", "distinti saluti", "un saluto", "a presto", "baci",
    "un abbraccio", "buona giornata",
})

#: Words that end the reading of a message, as the email judges have it.
STOP_WORDS = frozenset({"END", "SIGNOFF"})

#: The characters around a sign-off or a lone word that change nothing: "Thanks!", "Hal.", "Cheers,".
_PUNCTUATION = " \t,.;:!?…-–—~*_()\"'"


def bare(text: str) -> str:
    """``text`` without the punctuation people put around a sign-off or a lone word."""
    return text.strip(_PUNCTUATION)


def is_sign_off(line: str) -> bool:
    """Whether ``line`` ends a letter: a sign-off alone ("Thanks,") or with a name after it ("Cheers, Hal").

    A name after a sign-off is at most two words ("Thanks, Ann Smith"): a
    longer line is a sentence that happens to begin with a thank-you.
    """
    text = bare(line).lower()
    if text in SIGN_OFFS:
        return True
    head, comma, name = text.partition(",")
    if comma and bare(head) in SIGN_OFFS and 0 < len(name.split()) <= 2:
        return True
    words = text.split()
    return len(words) == 2 and words[0] in SIGN_OFFS and words[1][:1].isalpha() and line.split()[-1][:1].isupper()


def _plain(word: str) -> str:
    """``word`` lowercased without its accents: "José" and "Jose", "Zoë" and "Zoe" are one name."""
    return "".join(c for c in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(c))


@lru_cache(maxsize=1)
def first_names() -> frozenset[str]:
    """People's first names and nicknames, lowercased, accents taken off (pbem/orders/first_names.txt)."""
    text = resources.files(__package__).joinpath("first_names.txt").read_text(encoding="utf-8")
    return frozenset(_plain(line.strip()) for line in text.splitlines() if line.strip() and not line.startswith("#"))


def is_first_name(word: str) -> bool:
    return _plain(bare(word)) in first_names()


def one_edit_away(word: str, verb: str) -> bool:
    """Whether ``word`` is ``verb`` with one slip of a thumb: two neighbouring letters swapped, one letter
    missing, one extra, or one typed for another ("mvoe", "mve", "moeve", "moce").

    The reader takes such a word as the verb only when the rest of the line
    is that verb's order, and never alone on its line, where a slip and an
    everyday word ("Pat", "Walt") cannot be told apart.
    """
    a, b = word.upper(), verb
    if a == b:
        return False
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diffs) == 1:
            return True
        return len(diffs) == 2 and diffs[1] == diffs[0] + 1 and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]]
    if abs(len(a) - len(b)) != 1:
        return False
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]
