"""A replay failure in words: what the log records where it fails, and what the rules give.

Why a module of its own: :class:`~cardarena.engine.errors.ReplayError` carries only text
with reprs of card ids, while an auditor's reader knows cards by their codes; the replay
check asks here for the reason it reports.
"""

from __future__ import annotations

from collections import deque

from cardarena.engine import Match
from cardarena.engine import events as ev
from cardarena.engine.errors import ReplayError

from ..logs.text import event_text


def explain_replay(log: list[ev.Event], error: ReplayError, seed: bytes) -> str:
    """The replay's reason in card codes: what the log records there, and what the rules give.

    Why a second walk: :class:`ReplayError` carries only text with reprs of card ids; the
    walk below rebuilds the rules' expectation at ``error.index`` (the prefix before it has
    just replayed cleanly, so it cannot fail).
    """
    text = str(error)
    prefix = f"event {error.index}: "
    reason = text[len(prefix) :] if text.startswith(prefix) else text
    if not 0 < error.index <= len(log):
        return reason
    try:
        expected = _expected_at(log, error.index, seed)
    except Exception:  # an explanation must never hide the discrepancy itself
        return reason
    if error.index == len(log):
        given = event_text(expected) if expected is not None else "an action"
        return f"the log ends where the rules give: {given}"
    recorded = log[error.index]
    if expected is None:
        return f"{event_text(recorded)}: {reason}"
    return f"the log records: {event_text(recorded)}; the rules give: {event_text(expected)}"


def _expected_at(log: list[ev.Event], index: int, seed: bytes) -> ev.Event | None:
    """The event the rules produce at ``index`` after ``log[:index]``; ``None`` where a seat
    chooses (an action is expected, and the recorded one was refused)."""
    first = log[0]
    assert isinstance(first, ev.MatchStarted)
    match = Match(first, seed=seed)
    pending = deque(match.log[1:])
    for event in log[1:index]:
        if not pending:
            recorded = match.recorded_action(event)
            assert recorded is not None
            pending.extend(match.apply(*recorded))
        pending.popleft()
    return pending[0] if pending else None
