"""Events as the rules engine produces and consumes them.

An event is a type name plus JSON-ready data. Outcome events also carry the
rule clauses they applied (``cites``) so a moderator can answer "why?" from
the log alone. Inputs (orders, moderator actions, clock ticks) are the events
that `pbem verify` feeds back into the engine to re-derive every outcome.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    type: str
    data: Mapping[str, Any] = field(default_factory=dict)
    cites: tuple[str, ...] = ()

    def payload(self) -> dict[str, Any]:
        """The JSON object stored in the log (data plus the cited clauses)."""
        body = json.loads(json.dumps(dict(self.data)))
        if self.cites:
            body["cites"] = list(self.cites)
        return body

    @classmethod
    def from_payload(cls, type_: str, payload: Mapping[str, Any]) -> Event:
        data = {k: v for k, v in payload.items() if k != "cites"}
        return cls(type_, data, tuple(payload.get("cites", ())))
