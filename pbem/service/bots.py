"""Bot players: random legal orders, sent through the same order language as people.

A bot reads a prompt's choices (complete order lines) and picks one with its
own seeded random generator, so a bot game is reproducible from its seed.
"""

from __future__ import annotations

import random

from pbem.rules.prompt import Prompt


def bot_orders(prompt: Prompt, rng: random.Random) -> str:
    """One order text for ``prompt``: a random choice, or the template when there are none."""
    if prompt.choices:
        return rng.choice(prompt.choices)
    return prompt.template
