"""The reading policy keeps the headers it parsed: what it gives must be what the standard policy gives, every time."""

from __future__ import annotations

import email.policy
from email.parser import BytesParser
from pathlib import Path

import pytest

from pbem.mail.inbound import parse_message
from pbem.mail.policies import DEFAULT

HERE = Path(__file__).parent
MESSAGES = sorted([*(HERE / "corpus").glob("*.eml"), *(HERE / "messages").glob("*.eml")])


def _headers(raw: bytes, policy) -> list[tuple]:
    """Every header of every part as the policy reads it: value, class, defects, parameters, addresses."""
    out = []
    for part in BytesParser(policy=policy).parsebytes(raw).walk():
        for name in part.keys():
            value = part[name]
            out.append((name, str(value), type(value).__name__.lstrip("_"), [type(d).__name__ for d in value.defects],
                        dict(getattr(value, "params", {}) or {}), [str(a) for a in getattr(value, "addresses", ())]))
        out.append(("content", part.get_content_type(), part.get_content_charset(), part.get_filename(),
                    part.get_content_disposition()))
    return out


@pytest.mark.parametrize("path", MESSAGES, ids=lambda p: p.name)
def test_each_header_reads_as_the_standard_policy_reads_it_first_time_and_again(path):
    raw = path.read_bytes()
    expected = _headers(raw, email.policy.default)
    assert _headers(raw, DEFAULT) == expected  # parsed by the reading policy
    assert _headers(raw, DEFAULT) == expected  # and now from what it kept


def _read(raw: bytes):
    try:
        return parse_message(raw)
    except Exception as exc:  # noqa: BLE001 - a refusal is an outcome to compare too
        return repr(exc)


def test_a_message_reads_the_same_whichever_messages_were_read_before_it():
    raws = [path.read_bytes() for path in MESSAGES]
    raws = [raw.replace(b"{{FROM}}", b"ben@example.org") for raw in raws]  # the corpus leaves the address to its tests
    forwards = [_read(raw) for raw in raws]
    backwards = [_read(raw) for raw in reversed(raws)][::-1]
    assert forwards == backwards
    assert sum(1 for outcome in forwards if not isinstance(outcome, str)) > 50
