"""The audit of a match log: every check an outsider can make, in a fixed order.

Why a fixed order and the first discrepancy only: each check relies on the ones before it
(the chain is only meaningful over entries that decode, the replay only over a chain that
holds), so the first failure is the one that explains the others. Every check works on the
log alone plus the published rules; nothing here trusts the server that wrote it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Final

from google.protobuf.message import DecodeError

from cardarena.engine import Match, describe, replay
from cardarena.engine import events as ev
from cardarena.engine.errors import ActionError, ReplayError
from cardarena.engine.match import action_of
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.chain import first_break

from .auditdetail import NotCanonical, decode_entry, explain_replay

SEED_SIZE: Final = 32
COMMITMENT_PREFIX: Final = b"cardarena-seed-v1"

CHECKS: Final = (
    ("decode", "every entry decodes to one canonical event"),
    ("sequence", "seq runs from 1 without gaps, up to MatchInfo's last seq"),
    ("chain", "the hash chain holds from this match's genesis hash"),
    ("start", "MatchStarted opens the log for this match, as MatchInfo describes it"),
    ("seed", "the seed is 32 bytes and matches its commitment"),
    ("reveal", "SeedRevealed closes the log with the same seed"),
    ("replay", "every deal, draw, action and result follows from the seed and the rules"),
    ("server", "every seat joined before play; each time-out is followed by the default action"),
    ("result", "MatchEnded agrees with MatchInfo's totals and winners"),
)


class Discrepancy(Exception):
    """A check failed at ``seq`` (``None`` when the fault is in MatchInfo or the seed field)."""

    def __init__(self, seq: int | None, reason: str) -> None:
        super().__init__(reason)
        self.seq = seq
        self.reason = reason


@dataclass(frozen=True)
class Failure:
    check: str
    seq: int | None
    reason: str


@dataclass
class AuditReport:
    """What was audited, which checks passed, and the first discrepancy if any."""

    match_id: str
    game: str
    players: int
    seats: list[str]
    totals: list[str]
    winners: list[int]
    entries: int
    passed: list[str] = field(default_factory=list)
    failure: Failure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


def seed_commitment(seed: bytes) -> str:
    """RULES.md §4, computed here rather than taken from the engine, as any outsider would."""
    return hashlib.sha256(COMMITMENT_PREFIX + seed).hexdigest()


def audit_log(
    resp: spb.GetMatchLogResponse, *, match_id: str | None = None, head: bytes | None = None
) -> AuditReport:
    """Run every check of :data:`CHECKS` in order; stop at the first discrepancy.

    ``match_id`` is the match the caller asked for (a server fetch); by default the log is
    audited as the match its MatchInfo names. ``head`` is a last hash the caller trusts
    (from an earlier copy of the log): without one, whoever holds a log can re-sign a
    consistent alternative history, which only the consequences of a change give away.
    """
    info = resp.match
    report = AuditReport(
        match_id=info.match_id,
        game=info.game,
        players=info.players,
        seats=[s.name for s in sorted(info.seats, key=lambda s: s.seat)],
        totals=[str(codec.score_from_pb(t)) for t in info.totals],
        winners=list(info.winners),
        entries=len(resp.entries),
    )
    state = _Audit(resp, match_id if match_id is not None else info.match_id, head)
    for name, _ in CHECKS:
        try:
            getattr(state, f"check_{name}")()
        except Discrepancy as found:
            report.failure = Failure(name, found.seq, found.reason)
            return report
        report.passed.append(name)
    return report


@dataclass(frozen=True)
class _Chained:
    seq: int
    payload: bytes
    hash: bytes


class _Audit:
    """The state the checks share: decoded events, the seed, the replayed match."""

    def __init__(self, resp: spb.GetMatchLogResponse, match_id: str, head: bytes | None) -> None:
        self.resp = resp
        self.head = head
        self.info = resp.match
        self.match_id = match_id
        self.events: list[pb.Event] = []
        self.decoded: list[ev.Event | None] = []
        self.seed = bytes(resp.seed)

    # -- 1. decode -------------------------------------------------------------------------

    def check_decode(self) -> None:
        if not self.resp.entries:
            raise Discrepancy(1, "the log has no entries")
        for n, entry in enumerate(self.resp.entries, start=1):
            event = pb.Event()
            try:
                event.ParseFromString(entry.event)
            except DecodeError:
                raise Discrepancy(n, "the entry's bytes are not an Event message") from None
            self.events.append(event)
            try:
                self.decoded.append(decode_entry(event, entry.event))
            except NotCanonical as error:
                raise Discrepancy(n, str(error)) from None

    # -- 2. sequence -----------------------------------------------------------------------

    def check_sequence(self) -> None:
        for n, (entry, event) in enumerate(zip(self.resp.entries, self.events, strict=True), 1):
            if entry.seq != n:
                raise Discrepancy(
                    n, f"expected seq {n}, found seq {entry.seq} (a gap, a repeat or a swap)"
                )
            if event.seq != n:
                raise Discrepancy(n, f"the event stored at seq {n} says it is seq {event.seq}")
        count, last = len(self.events), self.info.last_seq
        if last > count:
            raise Discrepancy(
                count + 1, f"the log ends at seq {count} but MatchInfo's last seq is {last}"
            )
        if last < count:
            raise Discrepancy(last + 1, f"MatchInfo's last seq is {last} but the log goes on")

    # -- 3. chain --------------------------------------------------------------------------

    def check_chain(self) -> None:
        chained = [_Chained(e.seq, e.event, e.hash) for e in self.resp.entries]
        broken = first_break(self.match_id, chained)
        if broken is not None:
            raise Discrepancy(
                broken,
                "the hash does not chain: SHA-256(previous hash || event bytes) differs "
                "(an event or a hash was changed, or the log is not this match's)",
            )
        last = self.resp.entries[-1]
        if self.head is not None and last.hash != self.head:
            raise Discrepancy(
                last.seq,
                f"the chain ends at {last.hash.hex()}, not at the trusted head "
                f"{self.head.hex()}: the log was re-signed, cut or extended",
            )

    # -- 4. start --------------------------------------------------------------------------

    def check_start(self) -> None:
        first = self.events[0]
        if first.WhichOneof("kind") != "match_started":
            raise Discrepancy(
                1, f"the log opens with {first.WhichOneof('kind')}, not match_started"
            )
        started, info = first.match_started, self.info
        if started.match_id != self.match_id:
            raise Discrepancy(
                1, f"MatchStarted names match {started.match_id!r}, not {self.match_id!r}"
            )
        if info.match_id != self.match_id:
            raise Discrepancy(
                None, f"MatchInfo names match {info.match_id!r}, not {self.match_id!r}"
            )
        if (info.game, info.players) != (started.game, started.players):
            raise Discrepancy(
                1,
                f"MatchInfo says {info.game} for {info.players}, "
                f"MatchStarted says {started.game} for {started.players}",
            )
        if info.options != started.options:
            raise Discrepancy(1, "MatchInfo's options differ from MatchStarted's")
        if info.status != spb.MATCH_STATUS_ENDED:
            raise Discrepancy(
                None, f"MatchInfo's status is {spb.MatchStatus.Name(info.status)}, not ENDED"
            )
        seats = sorted((s.seat, s.taken) for s in info.seats)
        if seats != [(s, True) for s in range(info.players)]:
            raise Discrepancy(
                None, f"MatchInfo's seats are not seats 0..{info.players - 1}, all taken"
            )

    # -- 5. seed ---------------------------------------------------------------------------

    def check_seed(self) -> None:
        if len(self.seed) != SEED_SIZE:
            raise Discrepancy(None, f"the revealed seed is {len(self.seed)} bytes, not {SEED_SIZE}")
        expected = seed_commitment(self.seed)
        if self.events[0].match_started.seed_commitment != expected:
            raise Discrepancy(
                1, f"the seed's commitment is {expected}, MatchStarted published another"
            )
        if self.info.seed_commitment != expected:
            raise Discrepancy(None, f"the seed's commitment is {expected}, MatchInfo says another")
        if self.info.seed != self.seed:
            raise Discrepancy(None, "MatchInfo's seed differs from the log's revealed seed")

    # -- 6. reveal -------------------------------------------------------------------------

    def check_reveal(self) -> None:
        last = len(self.events)
        for n, event in enumerate(self.events, start=1):
            if event.WhichOneof("kind") == "seed_revealed" and n < last:
                raise Discrepancy(n + 1, f"an entry follows the seed's reveal at seq {n}")
        final = self.events[-1]
        if final.WhichOneof("kind") != "seed_revealed":
            raise Discrepancy(last + 1, f"the log ends at seq {last} without revealing the seed")
        if final.seed_revealed.seed != self.seed:
            raise Discrepancy(last, "SeedRevealed reveals another seed than the log's")

    # -- 7. replay -------------------------------------------------------------------------

    def check_replay(self) -> None:
        seqs = [n for n, e in enumerate(self.decoded, start=1) if e is not None]
        engine_log = [e for e in self.decoded if e is not None]
        try:
            match = replay(engine_log, seed=self.seed)
        except ReplayError as error:
            at = seqs[error.index] if error.index < len(seqs) else seqs[-1] + 1
            raise Discrepancy(at, explain_replay(engine_log, error, self.seed)) from None
        except Exception as error:  # untrusted input must never crash the auditor
            raise Discrepancy(None, f"the rules could not replay the log: {error!r}") from None
        if not match.over:
            raise Discrepancy(seqs[-1] + 1, "the log stops before the match is over")

    # -- 8. server events ------------------------------------------------------------------

    def check_server(self) -> None:
        started = self.decoded[0]
        assert isinstance(started, ev.MatchStarted)  # the replay check holds
        match = Match(started, seed=self.seed)
        names = {s.seat: s.name for s in self.info.seats}
        joined: set[int] = set()
        timed_out: tuple[int, int, int] | None = None  # (seq, seat, default action)
        for n, (event, decoded) in enumerate(zip(self.events, self.decoded, strict=True), 1):
            kind = event.WhichOneof("kind")
            recorded = action_of(decoded) if decoded is not None else None
            if timed_out is not None:
                _check_default(n, recorded, timed_out)
                timed_out = None
            if kind == "seat_joined":
                self._joined(n, event.seat_joined, joined, names)
            elif kind == "timed_out":
                timed_out = self._timed_out(n, event.timed_out.seat, match)
            elif recorded is not None:
                if len(joined) < started.players:
                    missing = sorted(set(range(started.players)) - joined)
                    raise Discrepancy(n, f"play starts before seats {missing} joined")
                try:
                    match.apply(*recorded)
                except ActionError as error:  # the replay check makes this unreachable
                    raise Discrepancy(n, str(error)) from None

    def _joined(
        self, n: int, seat_joined: pb.SeatJoined, joined: set[int], names: dict[int, str]
    ) -> None:
        seat = seat_joined.seat
        if seat >= self.info.players or seat in joined:
            raise Discrepancy(n, f"seat {seat} cannot join: no such seat, or it joined before")
        if seat_joined.name != names.get(seat):
            raise Discrepancy(
                n, f"seat {seat} joined as {seat_joined.name!r}, MatchInfo says {names.get(seat)!r}"
            )
        joined.add(seat)

    def _timed_out(self, n: int, seat: int, match: Match) -> tuple[int, int, int]:
        if self.info.time_control.move_ms == 0:
            raise Discrepancy(n, "a time-out in a match without a clock")
        if match.to_act != seat:
            raise Discrepancy(n, f"seat {seat} timed out, but seat {match.to_act} was to act")
        return n, seat, match.default_action()

    # -- 9. result -------------------------------------------------------------------------

    def check_result(self) -> None:
        ends = [(n, e) for n, e in enumerate(self.decoded, 1) if isinstance(e, ev.MatchEnded)]
        if not ends:  # the replay check makes this unreachable
            raise Discrepancy(None, "the log has no MatchEnded")
        n, ended = ends[-1]
        totals = tuple(codec.score_from_pb(t) for t in self.info.totals)
        if totals != ended.totals:
            shown = ", ".join(map(str, ended.totals))
            raise Discrepancy(
                n,
                f"MatchInfo's totals {', '.join(map(str, totals))} differ from MatchEnded's {shown}",
            )
        if tuple(self.info.winners) != ended.winners:
            raise Discrepancy(
                n,
                f"MatchInfo's winners {list(self.info.winners)} differ from MatchEnded's {list(ended.winners)}",
            )


def _check_default(
    n: int, recorded: tuple[int, int] | None, timed_out: tuple[int, int, int]
) -> None:
    at, seat, default = timed_out
    if recorded != (seat, default):
        got = "no action" if recorded is None else f"seat {recorded[0]} {describe(recorded[1])}"
        raise Discrepancy(
            n,
            f"seat {seat} timed out at seq {at}: its default action is {describe(default)} "
            f"(the lowest legal), but the log has {got}",
        )
