"""What several phases ask of the board and the players: ranking, city support, conflict, losses, card effects, stacks.

Above the ruleset, below the phases: a rule that more than one phase applies
lives here once, so no phase imports another.
"""
