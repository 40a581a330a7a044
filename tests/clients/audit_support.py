"""What the auditor's tests start from and forge with: finished matches and their logs
(``base``), the tools of a forger (``forge``, ``edit``: re-signed; ``edit_raw``, ``flip``), and
the registry of named mutations (``mutation``, ``MUTATIONS``) that the ``audit_mutations_*``
modules fill.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

from cardarena.engine import Match, mix_seed, new_match
from cardarena.engine import events as ev
from cardarena.engine.match import action_of, setup
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.chain import chain_hash, genesis_hash

from ..helpers import play_out
from ..logs import log_from_engine, play_with_time_outs

SEED = bytes(range(32))
NAMES = ("ann", "bob", "cy", "di", "ed")


@dataclass(frozen=True)
class Base:
    """A finished match and its log, the material every mutation starts from."""

    match: Match
    resp: spb.GetMatchLogResponse

    def events(self) -> list[pb.Event]:
        return [pb.Event.FromString(e.event) for e in self.resp.entries]

    def seqs(self, kind: str, where: Callable[[pb.Event], bool] = lambda e: True) -> list[int]:
        return [e.seq for e in self.events() if e.WhichOneof("kind") == kind and where(e)]

    @property
    def last(self) -> int:
        return len(self.resp.entries)


@cache
def base(game: str, players: int, *, first_dealer: str | None = None, every: int = 11) -> Base:
    """A random match in which every ``every``-th action is a time-out's default action."""
    options = {"first_dealer": first_dealer} if first_dealer else None
    match = new_match(game, players=players, seed=SEED, options=options)
    timed_out = play_with_time_outs(match, random.Random(f"{game}/{players}"), every)
    resp = log_from_engine(
        match, SEED, f"{game}-{players}", names=NAMES[:players], timed_out=timed_out, move_ms=500
    )
    return Base(match, resp)


def hexa() -> Base:
    return base("hexathlon", 4)


CONTRIBUTIONS = (bytes(range(32, 64)), b"", b"\xff" * 32, b"")
"""Seats 0 and 2 contribute entropy, seats 1 and 3 none (docs/rules.md §4.8)."""


@cache
def contributed() -> Base:
    """A Hexathlon dealt from its seed mixed with two seats' contributions."""
    match = setup("hexathlon", players=4).start(SEED, dealing=False)
    match.deal_from(mix_seed(SEED, [c or None for c in CONTRIBUTIONS]))
    play_out(match, rng_seed=3)
    resp = log_from_engine(match, SEED, "contributed", names=NAMES[:4], contributions=CONTRIBUTIONS)
    return Base(match, resp)


@cache
def base_one_deal() -> Base:
    match = new_match("triathlon", seed=SEED, options={"max_deals": 1})
    play_out(match, rng_seed=1)
    return Base(match, log_from_engine(match, SEED, "one-deal", timed_out=(), move_ms=0))


# -- tools of a forger -----------------------------------------------------------------------


def clone(resp: spb.GetMatchLogResponse) -> spb.GetMatchLogResponse:
    out = spb.GetMatchLogResponse()
    out.CopyFrom(resp)
    return out


def resign(resp: spb.GetMatchLogResponse, start: int = 1) -> spb.GetMatchLogResponse:
    """Recompute every hash from seq ``start`` on: an internally valid chain, and MatchInfo's
    last hash to match (a forger who re-signs edits MatchInfo too)."""
    prev = genesis_hash(resp.match.match_id) if start == 1 else resp.entries[start - 2].hash
    for entry in resp.entries[start - 1 :]:
        prev = chain_hash(prev, entry.event)
        entry.hash = prev
    if resp.entries:
        resp.match.last_hash = resp.entries[-1].hash
    return resp


def forge(b: Base, events: list[pb.Event]) -> spb.GetMatchLogResponse:
    """A whole new, renumbered and re-signed log of ``events``, MatchInfo's last seq fixed."""
    out = clone(b.resp)
    del out.entries[:]
    for seq, event in enumerate(events, start=1):
        event.seq = seq
        out.entries.add(seq=seq, event=event.SerializeToString())
    out.match.last_seq = len(events)
    return resign(out)


def edit(
    b: Base, seq: int, change: Callable[[pb.Event], object], *, sign: bool = True
) -> spb.GetMatchLogResponse:
    """Change the event at ``seq``; re-sign from there unless ``sign`` is false."""
    out = clone(b.resp)
    event = pb.Event.FromString(out.entries[seq - 1].event)
    change(event)
    out.entries[seq - 1].event = event.SerializeToString()
    return resign(out, seq) if sign else out


def edit_nth(
    kind: str, index: int, change: Callable[[pb.Event], object], check: str | set[str]
) -> Expected:
    """The Hexathlon log with its ``index``-th event of ``kind`` changed and re-signed, which
    ``check`` must find at that event."""
    b = hexa()
    seq = b.seqs(kind)[index]
    return edit(b, seq, change), check, seq


def edit_raw(b: Base, seq: int, change: Callable[[bytes], bytes]) -> spb.GetMatchLogResponse:
    out = clone(b.resp)
    out.entries[seq - 1].event = change(out.entries[seq - 1].event)
    return resign(out, seq)


def flip(data: bytes, at: int, mask: int = 0x01) -> bytes:
    raw = bytearray(data)
    raw[at] ^= mask
    return bytes(raw)


def positions(b: Base) -> Iterator[tuple[int, Match]]:
    """(seq of each action, the match just before it): where a forger could change a choice.

    The match is live: read it before asking for the next position."""
    started = b.match.log[0]
    assert isinstance(started, ev.MatchStarted)
    match = Match(started, seed=SEED)
    for event in b.events():
        decoded = codec.event_from_pb(event)
        recorded = action_of(decoded) if decoded is not None else None
        if recorded is not None:
            yield event.seq, match
            match.apply(*recorded)


# -- the mutations -----------------------------------------------------------------------------

Expected = tuple[spb.GetMatchLogResponse, str | set[str], int | None]
MUTATIONS: dict[str, Callable[[], Expected]] = {}


def mutation(name: str) -> Callable[[Callable[[], Expected]], Callable[[], Expected]]:
    def register(build: Callable[[], Expected]) -> Callable[[], Expected]:
        MUTATIONS[name] = build
        return build

    return register


def a_play(b: Base, nth: int = 9) -> int:
    """The seq of the ``nth`` card play after the seats joined."""
    return b.seqs("card_played")[nth]
