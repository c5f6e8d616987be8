"""The pattern audit holds: every pattern that reads untrusted text is listed with why it is linear, and is.

docs/mail.md ("The pattern audit") lists each regular expression of
`pbem/mail/`, `pbem/orders/` and `pbem/service/` with the reason it runs in
time linear in its input. The first test keeps the list and the code
together: a pattern added without its line in the audit fails it. The
second (``make fuzz``, CI) times each pattern on the inputs made to slow it
down (`pattern_audit.attacks`) at 20,000 characters: a linear pattern takes
milliseconds there, one that reads its input again from each position takes
seconds (the SECRET pattern took 1.3 s at 8,000 blank lines, 22 s at
120 kB).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .pattern_audit import ROOT, Found, patterns, slowest

AUDIT = ROOT / "docs" / "mail.md"
#: How long one use of a pattern may take on an attack of 20,000 characters. The slowest linear pattern
#: takes some 30 ms; a quadratic one takes seconds.
LIMIT_SECONDS = 0.5
_ITEM = re.compile(r"\[\d+\]$")  # a pattern of a module-level list: the audit names the list


def _key(found: Found) -> str:
    """How the audit names a pattern: `path:NAME` for a constant, `path` and the pattern for one written inline."""
    path, _, where = found.where.partition(":")
    if where[:1].isdigit():
        source = found.pattern.pattern
        return f"`{path}` inline `{source.decode('latin-1') if isinstance(source, bytes) else source}`"
    return f"`{path}:{_ITEM.sub('', where)}`"


def test_every_pattern_is_in_the_audit():
    text = AUDIT.read_text(encoding="utf-8")
    missing = sorted({_key(f) for f in patterns() if _key(f) not in text})
    assert not missing, "patterns missing from the audit in docs/mail.md:\n" + "\n".join(missing)


@pytest.mark.fuzz
@pytest.mark.parametrize("found", patterns(), ids=lambda f: f.where)
def test_no_pattern_is_slow_on_the_inputs_made_against_it(found: Found):
    took, attack = slowest(found, 20_000)
    assert took < LIMIT_SECONDS, f"{found.where} took {took:.2f} s on {attack!r}..."
