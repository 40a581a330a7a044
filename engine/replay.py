"""Replay a recorded log through the rules, checking every recorded result.

Actions and deals are taken from the log; every derived event (forced passes, trick winners,
dead cards, scores, the end) is recomputed and must equal the record. In a round with voluntary
passes a forced pass is the seat's action (it was asked), replayed and checked like any other:
the rules must find that the seat could not play, as the record says. Given the revealed
seed, the deals and draws are recomputed too and must equal the record, so a replay with the
seed is a full audit of the rules' side of a log.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from .errors import ActionError, EngineError, ReplayError
from .events import DealerDrawn, Dealt, Event, MatchStarted, TrumpDrawn
from .fairdeal import commitment
from .games import get_game
from .match import Match, validate_options


def replay(
    log: Sequence[Event], *, seed: bytes | None = None, deal_seed: bytes | None = None
) -> Match:
    """Fold ``log`` through the rules and return the resulting match.

    With a ``seed`` (checked against the log's commitment) every deal and draw must be the
    one the fair-deal stream gives: the stream of ``deal_seed`` when the seats contributed
    entropy (the seed mixed with their contributions), of ``seed`` itself otherwise.

    Raises :class:`ReplayError` naming the index of the first event that the rules do not
    produce, or that is not a legal action at that point. A log may stop before the end.
    """
    if not log or not isinstance(log[0], MatchStarted):
        raise ReplayError(0, "a log starts with MatchStarted")
    started = log[0]
    try:
        normalized = validate_options(get_game(started.game), started.players, started.options)
    except EngineError as error:
        raise ReplayError(0, str(error)) from None
    if normalized != started.options:
        raise ReplayError(0, "the recorded options are not in normal form")
    if seed is not None and commitment(seed) != started.commitment:
        raise ReplayError(0, "the seed does not match the commitment")
    match = Match(started, seed=seed if deal_seed is None else deal_seed)
    expected: deque[Event] = deque(match.log[1:])
    index = 1
    while True:
        while expected:
            if index >= len(log):
                raise ReplayError(index, f"the log ends where the rules give {expected[0]!r}")
            if log[index] != expected[0]:
                raise ReplayError(index, f"recorded {log[index]!r}, the rules give {expected[0]!r}")
            expected.popleft()
            index += 1
        if index >= len(log):
            return match
        expected.extend(_feed(match, log[index], index))


def _feed(match: Match, event: Event, index: int) -> list[Event]:
    if match.over:
        raise ReplayError(index, f"{type(event).__name__} after the end of the match")
    if match.pending is not None:
        if not isinstance(event, DealerDrawn | TrumpDrawn | Dealt):
            raise ReplayError(index, f"expected a deal or draw, got {type(event).__name__}")
        try:
            return match.resolve(event)
        except ValueError as error:
            raise ReplayError(index, str(error)) from None
    recorded = match.recorded_action(event)
    if recorded is None:
        raise ReplayError(index, f"seat {match.to_act} is to act; {event!r} is not an action")
    seat, action = recorded
    try:
        return match.apply(seat, action)
    except ActionError as error:
        raise ReplayError(index, str(error)) from None
