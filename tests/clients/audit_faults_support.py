"""Logs the real hosting layer writes under a fault policy, and a forger's tools for them.

``host`` plays a triathlon in an Arena over SQLite, each seat doing what its ``Plan`` says
(refused actions, waiting for the clock, disconnecting); ``Log`` reads the stored result.
The tamperings of ``audit_faults_tamperings`` register in ``TAMPERINGS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from cardarena.engine import Match
from cardarena.engine import events as ev
from cardarena.engine.actions import MAX_ACTION, is_action
from cardarena.engine.errors import ActionError, IllegalAction, MalformedAction
from cardarena.server.api.info import match_info
from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.store import SqliteStore
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.chain import chain_hash, genesis_hash

from ..waiting import eventually

SEED = bytes(range(32))
NAMES = ("ann", "bob", "cy")

Plan = Callable[[int, int], str]
"""(seat, its turn from 1) -> what it does: "play", "wait" (for the clock), "illegal",
"illegal twice", "malformed", "disconnect" (then play)."""


def clocked_plan(seat: int, turn: int) -> str:
    """bob: refused, refused twice in one turn, then a time-out: three faults, a forfeit.
    ann: a time-out, then a malformed action. cy: a disconnect."""
    return {
        (1, 1): "illegal",
        (1, 2): "illegal twice",
        (1, 3): "wait",
        (0, 2): "wait",
        (0, 3): "malformed",
        (2, 1): "disconnect",
    }.get((seat, turn), "play")


def clockless_plan(seat: int, turn: int) -> str:
    """cy refuses in two turns and forfeits; no clock, so the server plays it at once."""
    return "illegal" if seat == 2 and turn <= 2 else "play"


def refused(match: Match, seat: int, error: type[ActionError]) -> int:
    """The first action the rules refuse ``seat`` now with ``error``. Quick, since the
    match's clock runs meanwhile: one copy of the match serves every try (a refused action
    leaves a match unchanged), and the legal actions are not tried at all."""
    trial, legal = match.clone(), match.legal_mask()
    for action in range(MAX_ACTION + 1):
        if not is_action(action) or legal >> action & 1:
            continue
        try:
            trial.apply(seat, action)
        except error:
            return action
        except ActionError:
            continue
        trial = match.clone()  # a variant of a legal action: it was played on the copy
    raise AssertionError(f"no action is refused with {error.__name__}")


async def host(
    store: SqliteStore, plan: Plan, *, move_ms: int, forfeit_after: int, tournament_id: str
) -> spb.GetMatchLogResponse:
    hosted = await Arena(store).create(
        "triathlon",
        3,
        {},
        move_ms=move_ms,
        seed=SEED,
        forfeit_after=forfeit_after,
        tournament_id=tournament_id,
    )
    for name in NAMES:
        await hosted.join(None, name)
    turns = [0] * 3
    while True:
        async with hosted.lock:  # between writes (the clock's too)
            ended, seat = hosted.ended, hosted.engine.to_act
            info, seq = match_info(hosted), hosted.last_seq
        if ended:
            break
        assert seat is not None
        if info.seats[seat].forfeited:  # the server plays it at once
            await _moved(hosted, seq, "the forfeited seat's move")
        else:
            turns[seat] += 1
            await _act(hosted, seat, plan(seat, turns[seat]))
    stored = await store.read_events(hosted.match_id)
    entries = [spb.LogEntry(seq=s.seq, event=s.payload, hash=s.hash) for s in stored]
    return spb.GetMatchLogResponse(match=info, entries=entries, seed=hosted.record.seed)


async def _moved(hosted: HostedMatch, seq: int, what: str) -> None:
    """Until the server writes past ``seq`` (its clock, or its move for a forfeited seat)."""
    await eventually(lambda: hosted.last_seq > seq, every=0.005, what=what)


async def _forfeited(hosted: HostedMatch, seat: int) -> bool:
    async with hosted.lock:
        return match_info(hosted).seats[seat].forfeited


async def _act(hosted: HostedMatch, seat: int, what: str) -> None:
    if what == "disconnect":
        await hosted.disconnected(seat)
    errors = {"illegal": IllegalAction, "malformed": MalformedAction}
    for _ in range(2 if what.endswith(" twice") else 1):
        error = errors.get(what.split(maxsplit=1)[0])
        if error is not None:
            with pytest.raises(error):
                await hosted.submit(seat, refused(hosted.engine, seat, error), hosted.last_seq, "")
    seq = hosted.last_seq
    if what == "wait" or await _forfeited(hosted, seat):
        await _moved(hosted, seq, "the clock to play")
    else:
        await hosted.submit(seat, hosted.engine.legal_actions()[0], seq, "")


@dataclass(frozen=True)
class Log:
    resp: spb.GetMatchLogResponse

    def events(self) -> list[pb.Event]:
        return [pb.Event.FromString(e.event) for e in self.resp.entries]

    def seqs(self, kind: str, where: Callable[[pb.Event], bool] = lambda e: True) -> list[int]:
        return [e.seq for e in self.events() if e.WhichOneof("kind") == kind and where(e)]


def _refusal(e: pb.Event) -> bool:
    return e.seat_faulted.kind == pb.FAULT_KIND_REFUSED_ACTION


def _disconnect(seat: int) -> Callable[[pb.Event], bool]:
    return lambda e: (
        e.seat_faulted.seat == seat and e.seat_faulted.kind == pb.FAULT_KIND_DISCONNECTED
    )


def _timeout(seat: int, *, forfeited: bool) -> Callable[[pb.Event], bool]:
    return lambda e: e.timed_out.seat == seat and e.timed_out.forfeited == forfeited


# -- tools of a forger -------------------------------------------------------------------------


def forge(log: Log, events: list[pb.Event]) -> spb.GetMatchLogResponse:
    """A renumbered, re-signed log of ``events`` with ``log``'s MatchInfo (its last seq and
    hash fixed, as a forger who re-signs would)."""
    out = spb.GetMatchLogResponse()
    out.CopyFrom(log.resp)
    del out.entries[:]
    prev = genesis_hash(out.match.match_id)
    for seq, event in enumerate(events, start=1):
        event.seq = seq
        payload = event.SerializeToString()
        prev = chain_hash(prev, payload)
        out.entries.add(seq=seq, event=payload, hash=prev)
    out.match.last_seq, out.match.last_hash = len(events), prev
    return out


def changed(log: Log, seq: int, change: Callable[[pb.Event], object]) -> spb.GetMatchLogResponse:
    events = log.events()
    change(events[seq - 1])
    return forge(log, events)


def inserted(log: Log, seq: int, event: pb.Event) -> spb.GetMatchLogResponse:
    """``event`` put in at ``seq`` (the entries from there on move up one)."""
    events = log.events()
    events.insert(seq - 1, event)
    return forge(log, events)


def dropped(log: Log, seq: int) -> spb.GetMatchLogResponse:
    events = log.events()
    del events[seq - 1]
    return forge(log, events)


def next_action(log: Log, after: int) -> tuple[int, int]:
    """The (seat, action) of the first action after seq ``after``."""
    started = log.events()[0]
    opening = codec.event_from_pb(started)
    assert isinstance(opening, ev.MatchStarted)
    match = Match(opening, seed=SEED)
    for event in log.events()[1:]:
        decoded = codec.event_from_pb(event)
        recorded = match.recorded_action(decoded) if decoded is not None else None
        if recorded is not None:
            if event.seq > after:
                return recorded
            match.apply(*recorded)
    raise AssertionError("no action follows")


# -- the tamperings ----------------------------------------------------------------------------

Tampered = tuple[spb.GetMatchLogResponse, str, int | None, str]
"""The log, the check that must fail, at which seq, and what its reason says."""
TAMPERINGS: dict[str, Callable[[dict[str, Log]], Tampered]] = {}


def tampering(name: str) -> Callable[[Callable[[dict[str, Log]], Tampered]], object]:
    def register(build: Callable[[dict[str, Log]], Tampered]) -> object:
        TAMPERINGS[name] = build
        return build

    return register
