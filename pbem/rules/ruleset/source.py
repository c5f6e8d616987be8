"""One data file of a ruleset being read: rows, JSON, numbers and flags, and errors that name file and line."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any, Iterable

from pbem.rules.ruleset.model import RulesetError


class Source:
    """One data file: reading it and turning problems into RulesetErrors."""

    def __init__(self, folder: Path, filename: str) -> None:
        self.filename = filename
        self.path = folder / filename
        try:
            self.text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RulesetError(f"{filename}: file missing in {folder}") from None

    def error(self, line: int | None, problem: str) -> RulesetError:
        where = f"{self.filename}, line {line}" if line else self.filename
        return RulesetError(f"{where}: {problem}")

    def rows(self, columns: Iterable[str]) -> list[tuple[int, dict[str, str]]]:
        reader = csv.DictReader(self.text.splitlines())
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            raise self.error(1, f"missing column(s) {', '.join(missing)}")
        out = []
        for row in reader:
            if not any((v or "").strip() for v in row.values()):
                continue
            clean = {k: (v or "").strip() for k, v in row.items() if k is not None}
            out.append((reader.line_num, clean))
        return out

    def json(self) -> Any:
        try:
            return json.loads(self.text)
        except json.JSONDecodeError as exc:
            raise self.error(exc.lineno, f"not valid JSON: {exc.msg}") from None

    def line_of(self, key: str, value: Any) -> int | None:
        """Line where ``"key": value`` appears, to point at a JSON entry."""
        pattern = re.escape(json.dumps(key)) + r"\s*:\s*" + re.escape(json.dumps(value))
        m = re.search(pattern, self.text)
        return self.text.count("\n", 0, m.start()) + 1 if m else None

    def int_field(self, line: int | None, label: str, raw: Any, minimum: int = 0) -> int:
        try:
            value = int(raw) if not isinstance(raw, bool) else None
        except (TypeError, ValueError):
            value = None
        if value is None or (isinstance(raw, float) and raw != value):
            raise self.error(line, f"{label}: bad number {raw!r}")
        if value < minimum:
            raise self.error(line, f"{label}: {value} is below {minimum}")
        return value


def flag(src: Source, line: int, label: str, raw: str) -> bool:
    if raw not in ("0", "1"):
        raise src.error(line, f"{label}: expected 0 or 1, got {raw!r}")
    return raw == "1"


def parse_disputed(src: Source, line: int, raw: str) -> dict[str, dict[str, str]]:
    """``field: src=value src=value (note); field: ...`` -> {field: {src: value}}."""
    out: dict[str, dict[str, str]] = {}
    for entry in filter(None, (e.strip() for e in raw.split("; "))):
        field, sep, rest = entry.partition(":")
        if not sep:
            raise src.error(line, f"disputed: entry {entry!r} has no 'field:'")
        rest = re.sub(r"\([^)]*\)\s*$", "", rest.strip()).strip()
        votes = dict(tok.split("=", 1) for tok in rest.split() if "=" in tok)
        out[field.strip()] = votes
    return out
