"""A hand-set position stored as a game's latest snapshot, its prompts mailed as a phase start would mail them."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from rules.casefile import position

from pbem.rules.core.codec import state_to_json
from pbem.rules.core.draws import Draws
from pbem.rules.core.state import GameState
from pbem.rules.engine import ENGINE_VERSION, fold, resume
from pbem.service.batch import letters_for
from pbem.service.projector import RECENT, load_state
from pbem.store.unit_of_work import UnitOfWork


def set_position(db, settings, case: dict, seed: str, now: datetime, game_id: str = "g1") -> tuple[int, GameState]:
    """Store ``case`` (a rule case's position, played by the game's own players by nation) as the game's state.

    The prompts are mailed here because the position never came out of a
    phase the service played: without them the players would have no letter
    to reply to. Returns the log's version, after which every event is one
    the mail caused, and the state stored."""
    with UnitOfWork(db) as uow:
        state = load_state(uow, game_id)
        hand_set = position(case)
        nations = type(hand_set.nations)(
            (name, replace(n, player_id=next(p.id for p in state.players if p.nation == name)))
            for name, n in hand_set.nations.items())
        at = replace(hand_set, game_id=state.game_id, version=state.version, players=state.players, nations=nations,
                     options=state.options, seed_commitment=state.seed_commitment, revision=state.revision, turn=1,
                     deadline=state.deadline)  # the step's deadline, as a phase begun in play has one
        at = replace(fold(at, resume(at, Draws(seed))), version=state.version)  # what the phase does at once
        # the phase begins with the first event after the snapshot, so its report replays from the hand-set position
        at = replace(at, phase_began=state.version + 1)
        uow.snapshots.save(game_id, state.version, state_to_json(at), ENGINE_VERSION, now)
        _, head = uow.events.head(game_id)
        letters_for(uow, settings, uow.games.get(game_id), now).new_prompts({}, at, head)
    RECENT.forget()
    return state.version, at
