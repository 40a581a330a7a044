"""The log a server writes for a match, written in-process (for :func:`.local.play`).

Why the server's entries, order and summary exactly: a match played without a server must
audit, replay and diff like a served one, so nothing downstream (``cardarena audit``,
``cardarena replay``, a tournament's tooling) needs to know where a log came from. A served
match outside any tournament, created with a seed and a clock, writes (see
``server/hosting/match.py``):

1. the opening events of the engine (MatchStarted, carrying the match's settings: the clock
   ``move_ms``, one ``reserved_seats`` flag per seat, no fault policy, no tournament; then the
   first round's start), in one write at creation;
2. one ``SeatJoined`` per seat, here in seat order, under the seat's name, contributing
   nothing (a local match is dealt from its own seed, so the same seed plays the same cards),
   the last one followed by the first deal;
3. each action's events; when the seat's clock ran out, a ``TimedOut`` (a fault) before the
   events of the default action the server played for it;
4. ``SeedRevealed``, in the write that ends the match.

Every entry is chained as :mod:`cardarena.v1.chain` says, over its deterministic encoding
(a Struct's map, MatchStarted's options, has no fixed byte order, and the same match played
again must chain to the same hashes in any process; the auditor takes any order), and :meth:`LogWriter.response` is
the ``GetMatchLogResponse`` the server answers once the match has ended: MatchInfo with each
seat's faults (its time-outs, as the server counts them), the totals, the winners and the
seed. ``created_unix_ms`` is left 0: the log records no time, and a local log should be the
same bytes every time it is played from the same seed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from cardarena.engine import Match, commitment
from cardarena.engine import events as ev
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.chain import chain_hash, genesis_hash

MAX_NAME: Final = 64
"""The longest seat name a server takes (its JoinMatch refuses longer ones)."""


def local_match_id(
    game: str,
    options: Mapping[str, Any],
    names: Sequence[str],
    move_ms: int,
    seed: bytes,
) -> str:
    """A match id for a local match: 16 hex digits like a server's, derived from the match's
    settings and seed, so that the same match played again has the same log."""
    settings = json.dumps(
        {"game": game, "options": dict(options), "names": list(names), "move_ms": move_ms},
        sort_keys=True,
    )
    digest = hashlib.sha256(b"cardarena-local-v1:" + settings.encode() + b"\0" + seed)
    return digest.hexdigest()[:16]


def check_name(name: str, seat: int) -> str:
    """A seat's name as a server takes it: at most 64 characters, all of them printable."""
    if len(name) > MAX_NAME or any(not (c.isprintable() or c == " ") for c in name):
        raise ValueError(
            f"seat {seat}'s name {name[:80]!r} is not a name a server takes:"
            f" at most {MAX_NAME} printable characters"
        )
    return name


class LogWriter:
    """The entries of one match as its server would write them, in order."""

    def __init__(self, match_id: str, engine: Match, seed: bytes, *, move_ms: int) -> None:
        if move_ms <= 0:
            raise ValueError(
                f"move_ms must be > 0, got {move_ms}: a local match plays a failing bot's turn"
                " as its clock running out, which only a match with a clock can log"
            )
        self.match_id = match_id
        self.engine = engine
        self.seed = seed
        self.move_ms = move_ms
        self.events: list[pb.Event] = []
        self.faults = [0] * engine.players
        self.names = [""] * engine.players
        self.joined = [False] * engine.players
        reserved = [False] * engine.players
        for event in engine.log:  # the opening: the settings are hashed with MatchStarted
            self._append(
                codec.event_to_pb(
                    event, self.next_seq, match_id, move_ms=move_ms, reserved_seats=reserved
                )
            )

    @property
    def next_seq(self) -> int:
        """The seq of the next entry."""
        return len(self.events) + 1

    def _append(self, event: pb.Event) -> None:
        self.events.append(event)

    def join(self, seat: int, name: str) -> None:
        self._append(pb.Event(seq=self.next_seq, seat_joined=pb.SeatJoined(seat=seat, name=name)))
        self.names[seat], self.joined[seat] = name, True

    def record(self, events: Sequence[ev.Event], *, timed_out: int | None = None) -> None:
        """What one action caused, after the ``TimedOut`` of ``timed_out`` if its clock ran
        out (the action is then the seat's default); the seed's reveal if the match is over."""
        if timed_out is not None:
            self._append(pb.Event(seq=self.next_seq, timed_out=pb.TimedOut(seat=timed_out)))
            self.faults[timed_out] += 1
        for event in events:
            self._append(codec.event_to_pb(event, self.next_seq, self.match_id))
        if self.engine.over:
            self._append(pb.Event(seq=self.next_seq, seed_revealed=pb.SeedRevealed(seed=self.seed)))

    def response(self) -> spb.GetMatchLogResponse:
        """The server's ``GetMatchLog`` answer for the ended match: chained entries, MatchInfo
        and the seed."""
        if not self.engine.over:
            raise ValueError("the match has not ended: its log and seed are not public yet")
        entries: list[spb.LogEntry] = []
        prev = genesis_hash(self.match_id)
        for event in self.events:
            payload = event.SerializeToString(deterministic=True)
            prev = chain_hash(prev, payload)
            entries.append(spb.LogEntry(seq=event.seq, event=payload, hash=prev))
        engine = self.engine
        info = spb.MatchInfo(
            match_id=self.match_id,
            game=engine.game.name,
            players=engine.players,
            # as the server's, read back from its stored settings (JSON with sorted keys)
            options=codec.struct_of(json.loads(json.dumps(engine.options, sort_keys=True))),
            status=spb.MATCH_STATUS_ENDED,
            seats=[
                spb.SeatInfo(
                    seat=s, taken=self.joined[s], name=self.names[s], faults=self.faults[s]
                )
                for s in range(engine.players)
            ],
            seed_commitment=commitment(self.seed),
            last_seq=len(entries),
            last_hash=prev,
            time_control=spb.TimeControl(move_ms=self.move_ms),
            totals=[codec.score_to_pb(t) for t in engine.totals],
            winners=list(engine.winners),
            seed=self.seed,
        )
        return spb.GetMatchLogResponse(match=info, entries=entries, seed=self.seed)
