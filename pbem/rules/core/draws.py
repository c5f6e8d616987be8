"""Reproducible randomness derived from a game's committed secret seed.

Every random choice in a game (place cards, shuffles, picks) is an
HMAC-SHA256 of the secret seed and a label naming the draw and the game
version at which it happens. Once the seed is revealed anyone can recompute
every draw; before that, nobody can predict one. Draws are recorded as outcome
events, so replay never needs the seed.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def commitment(secret: str) -> str:
    """The published hash of a secret seed."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class Draws:
    def __init__(self, secret: str) -> None:
        self._key = secret.encode("utf-8")

    def _word(self, label: str, counter: int) -> int:
        digest = hmac.new(self._key, f"{label}#{counter}".encode(), hashlib.sha256).digest()
        return int.from_bytes(digest[:8], "big")

    def below(self, n: int, label: str) -> int:
        """A uniform integer in [0, n), by rejection sampling over 64-bit words."""
        if n <= 0:
            raise ValueError("cannot draw from an empty range")
        span = 1 << 64
        limit = span - span % n
        counter = 0
        while True:
            word = self._word(label, counter)
            if word < limit:
                return word % n
            counter += 1

    def shuffle(self, items: Sequence[T], label: str) -> list[T]:
        """A uniform permutation (Fisher-Yates) of the items."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1, f"{label}/{i}")
            out[i], out[j] = out[j], out[i]
        return out

    def choice(self, items: Sequence[T], label: str) -> T:
        return items[self.below(len(items), label)]
