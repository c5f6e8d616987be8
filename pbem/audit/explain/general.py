"""What any event changed, as the viewer may see it, and the numbers before it of what its data names.

The changes are `pbem diff`'s sentences (`pbem.audit.diff.diff`) between the
views just before and just after the event, so they tell another nation's
hand only to whoever may read it, in the same words as a diff of two
versions. Every explanation ends with them; for an event with no arithmetic of
its own they are the explanation.
"""

from __future__ import annotations

from pbem.audit.diff import diff
from pbem.audit.explain.common import (
    Case,
    Told,
    area_line,
    named,
    named_areas,
    nation_line,
)

#: The changes listed at most; the start of a phase can touch every area of the board.
MOST = 30


def changes(case: Case) -> list[str]:
    """One sentence per nation or area whose numbers the event changed, as the viewer sees them."""
    lines = diff(case.seen_before, case.seen_after)
    if len(lines) > MOST:
        lines = lines[:MOST] + [f"... and {len(lines) - MOST} more"]
    return lines


def general(case: Case) -> Told:
    """The numbers before the event of every nation and area its data names."""
    nations = named(case.event, case.before.nations)
    areas = named_areas(case.event, case.seen_before["areas"], case.before.nations)
    lines = [nation_line(case.seen_before, n) for n in nations] + [area_line(case.seen_before, a) for a in areas]
    return Told(tuple(lines), ())
