"""The ten checks of an audit, in their order, over the shared state of one log.

Each ``check_NAME`` of :class:`Checks` raises :class:`Discrepancy` at the first entry (or
MatchInfo field) at fault and may rely on every check before it in :data:`CHECKS`; the
auditor (:mod:`.auditor`) runs them in that order and reports the first failure. The seed's
commitment is computed here as any outsider would, from docs/rules.md §4, not taken from
the engine.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final

from google.protobuf.message import DecodeError

from cardarena.engine import Match, describe, replay
from cardarena.engine import events as ev
from cardarena.engine.errors import ActionError, ReplayError
from cardarena.engine.match import ActionReader
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.chain import first_break_of

from .canonical import NotCanonical, decode_entry
from .errors import Discrepancy, mismatch
from .explain import explain_replay
from .faults import FaultWalk

SEED_SIZE: Final = 32
COMMITMENT_PREFIX: Final = b"cardarena-seed-v1"
MIX_PREFIX: Final = b"cardarena-mix-v1"
CHANCE: Final = frozenset({"dealer_drawn", "trump_drawn", "dealt"})

CHECKS: Final = (
    ("decode", "every entry decodes to one canonical event"),
    ("sequence", "seq runs from 1 without gaps, up to MatchInfo's last seq"),
    ("chain", "the hash chain holds from this match's genesis hash to MatchInfo's last hash"),
    ("start", "MatchStarted opens the log; MatchInfo's settings, seats and state agree with it"),
    ("seed", "the seed is 32 bytes and matches its commitment; every contribution is 32 bytes"),
    ("reveal", "SeedRevealed closes the log with the same seed; one MatchCancelled may precede it"),
    ("replay", "every deal, draw, action and result follows from the deal seed and the rules"),
    (
        "server",
        "every seat joined before the first deal; each time-out is followed by the default action",
    ),
    ("faults", "every fault and forfeit follows the match's fault policy; MatchInfo counts them"),
    ("result", "MatchInfo's totals and winners are the replay's (no winners if cancelled)"),
)

NOT_IN_LOG: Final = frozenset({"created_unix_ms"})
"""MatchInfo's fields that the log cannot vouch for (it records no time), so not checked."""


def seed_commitment(seed: bytes) -> str:
    """RULES.md §4, computed here rather than taken from the engine, as any outsider would."""
    return hashlib.sha256(COMMITMENT_PREFIX + seed).hexdigest()


class Checks:
    """The state the checks share: decoded events, the seed, the replayed match."""

    def __init__(self, resp: spb.GetMatchLogResponse, match_id: str, head: bytes | None) -> None:
        self.resp = resp
        self.head = head
        self.info = resp.match
        self.match_id = match_id
        self.events: list[pb.Event] = []
        self.decoded: list[ev.Event | None] = []
        self.seed = bytes(resp.seed)
        self.deal_seed = self.seed
        """The seed mixed with the seats' contributions (docs/rules.md §4.8): what deals."""
        self.seated = False
        """Whether every seat joined, so that the match was dealt at all."""
        self.replayed: Match | None = None
        self._firsts: dict[str | None, int] | None = None

    def _seq_of(self, kind: str) -> int | None:
        """The seq of the first entry of ``kind``, if any (asked once the log is decoded:
        one scan of it then answers every later question)."""
        if self._firsts is None:
            firsts: dict[str | None, int] = {}
            for n, event in enumerate(self.events, start=1):
                firsts.setdefault(event.WhichOneof("kind"), n)
            self._firsts = firsts
        return self._firsts.get(kind)

    # -- 1. decode -------------------------------------------------------------------------

    def check_decode(self) -> None:
        if not self.resp.entries:
            raise Discrepancy(1, "the log has no entries")
        events, decoded, parse = self.events, self.decoded, pb.Event.FromString
        for n, entry in enumerate(self.resp.entries, start=1):
            raw = entry.event  # read once: each read of a bytes field copies it
            try:
                event = parse(raw)
            except DecodeError:
                raise Discrepancy(n, "the entry's bytes are not an Event message") from None
            events.append(event)
            try:
                decoded.append(decode_entry(event, raw))
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
        entries = self.resp.entries
        broken = first_break_of(self.match_id, ((e.seq, e.event, e.hash) for e in entries))
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
        if self.info.last_hash != last.hash:
            raise mismatch(
                "last_hash",
                self.info.last_hash.hex() or "empty",
                f"{last.hash.hex()} (the chained hash of seq {last.seq})",
                last.seq,
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
        if info.game != started.game:
            raise mismatch("game", repr(info.game), repr(started.game), 1)
        if info.players != started.players:
            raise mismatch("players", info.players, started.players, 1)
        if info.options != started.options:
            path, mine, theirs = _first_difference(
                codec.dict_of(info.options), codec.dict_of(started.options), "options"
            )
            raise mismatch(path, mine, theirs, 1)
        if info.tournament_id != started.tournament_id:
            shown = repr(started.tournament_id) if started.tournament_id else "'' (none)"
            raise mismatch("tournament_id", repr(info.tournament_id), shown, 1)
        if info.time_control.move_ms != started.move_ms:
            old = " (a log that predates clocks in MatchStarted)" if started.move_ms == 0 else ""
            raise mismatch(
                "time_control.move_ms", info.time_control.move_ms, f"{started.move_ms}{old}", 1
            )
        self._check_state()
        self._check_seats(started)

    def _check_state(self) -> None:
        """``status`` and ``cancelled``; the end itself is the reveal's and the replay's."""
        last = len(self.events)
        if self.events[-1].WhichOneof("kind") == "seed_revealed":
            if self.info.status != spb.MATCH_STATUS_ENDED:
                shown = spb.MatchStatus.Name(self.info.status)
                raise mismatch("status", shown, "MATCH_STATUS_ENDED (the seed is revealed)", last)
        elif self.info.status != spb.MATCH_STATUS_ENDED:  # the reveal check will say why
            raise Discrepancy(
                None,
                f"MatchInfo.status is {spb.MatchStatus.Name(self.info.status)}: only an ended "
                "match can be audited",
            )
        cancelled = self._seq_of("match_cancelled")
        if self.info.cancelled != (cancelled is not None):
            log_says = f"True (MatchCancelled at seq {cancelled})" if cancelled else "False"
            raise mismatch("cancelled", self.info.cancelled, log_says, cancelled)

    def _check_seats(self, started: pb.MatchStarted) -> None:
        """One SeatInfo per seat: reserved as MatchStarted says, taken and named as the seat's
        first SeatJoined says (the server check judges the SeatJoined entries themselves)."""
        players, flags = started.players, list(started.reserved_seats)
        if flags and len(flags) != players:
            raise Discrepancy(
                1, f"MatchStarted has {len(flags)} reserved_seats flags for {players} seats"
            )
        reserved = flags or [False] * players  # a log from before reservations: none reserved
        joined: dict[int, tuple[int, str]] = {}
        for n, event in enumerate(self.events, start=1):
            if event.WhichOneof("kind") == "seat_joined":
                joined.setdefault(event.seat_joined.seat, (n, event.seat_joined.name))
        numbers = sorted(s.seat for s in self.info.seats)
        if numbers != list(range(players)):
            raise mismatch("seats", f"seats {numbers}", f"seats 0..{players - 1}", 1)
        for info in sorted(self.info.seats, key=lambda s: s.seat):
            seat = info.seat
            if info.reserved != reserved[seat]:
                raise mismatch(f"seats[{seat}].reserved", info.reserved, reserved[seat], 1)
            at, name = joined.get(seat, (None, ""))
            if info.taken != (at is not None):
                log_says = f"True (SeatJoined at seq {at})" if at else "False (it never joined)"
                raise mismatch(f"seats[{seat}].taken", info.taken, log_says, at)
            if info.name != name:
                raise mismatch(f"seats[{seat}].name", repr(info.name), repr(name), at)

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
            raise mismatch(
                "seed_commitment",
                self.info.seed_commitment or "empty",
                f"{expected} (the seed's)",
                1,
            )
        if self.info.seed != self.seed:
            raise mismatch("seed", self.info.seed.hex() or "empty", self.seed.hex(), None)
        self.deal_seed = self._mixed()

    def _mixed(self) -> bytes:
        """The deal seed, computed from docs/rules.md §4.8 as an outsider would: the seed
        itself, or SHA-256 over the mix label, the seed and every seat's contribution (32
        zero bytes for a seat that gave none) when at least one seat contributed. The same
        pass over the joins notes whether every seat joined (:attr:`seated`)."""
        players = self.events[0].match_started.players
        given = [bytes(SEED_SIZE)] * players
        contributed = False
        seats: set[int] = set()
        for n, event in enumerate(self.events, start=1):
            if event.WhichOneof("kind") != "seat_joined":
                continue
            joined = event.seat_joined
            seats.add(joined.seat)
            if not joined.contribution:
                continue
            if len(joined.contribution) != SEED_SIZE:
                raise Discrepancy(
                    n,
                    f"seat {joined.seat} contributed {len(joined.contribution)} bytes, "
                    f"not {SEED_SIZE}",
                )
            if joined.seat < players:  # the server check names a seat that does not exist
                given[joined.seat] = bytes(joined.contribution)
                contributed = True
        self.seated = len(seats & set(range(players))) == players
        if not contributed:
            return self.seed
        return hashlib.sha256(MIX_PREFIX + self.seed + b"".join(given)).digest()

    # -- 6. reveal -------------------------------------------------------------------------

    def check_reveal(self) -> None:
        last = len(self.events)
        kinds = [e.WhichOneof("kind") for e in self.events]
        for n, kind in enumerate(kinds, start=1):
            if kind == "seed_revealed" and n < last:
                raise Discrepancy(n + 1, f"an entry follows the seed's reveal at seq {n}")
        cancels = [n for n, kind in enumerate(kinds, start=1) if kind == "match_cancelled"]
        if len(cancels) > 1:
            raise Discrepancy(
                cancels[1], f"a second MatchCancelled (the match was cancelled at seq {cancels[0]})"
            )
        if cancels:
            at = cancels[0]
            ended = self._seq_of("match_ended")
            if ended is not None and ended < at:
                raise Discrepancy(at, f"MatchCancelled after the match ended at seq {ended}")
            if at == last:
                raise Discrepancy(at, "MatchCancelled is not followed by SeedRevealed")
            if kinds[at] != "seed_revealed":
                raise Discrepancy(
                    at, f"MatchCancelled is followed by {kinds[at]}, not SeedRevealed"
                )
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
            match = replay(engine_log, **self._dealing())
        except ReplayError as error:
            at = seqs[error.index] if error.index < len(seqs) else seqs[-1] + 1
            raise Discrepancy(at, explain_replay(engine_log, error, self.deal_seed)) from None
        except Exception as error:  # untrusted input must never crash the auditor
            raise Discrepancy(None, f"the rules could not replay the log: {error!r}") from None
        # A cancelled match stops where it was cancelled (the reveal check put the
        # MatchCancelled there): the replay above has checked everything up to it.
        cancelled = self._seq_of("match_cancelled")
        if not match.over and cancelled is None:
            raise Discrepancy(seqs[-1] + 1, "the log stops before the match is over")
        if cancelled is not None:
            recorded = self.events[cancelled - 1].match_cancelled.totals
            if tuple(codec.score_from_pb(t) for t in recorded) != match.totals:
                shown = ", ".join(map(str, match.totals))
                raise Discrepancy(
                    cancelled, f"MatchCancelled records totals that are not the replay's ({shown})"
                )
        self.replayed = match

    def _dealing(self) -> dict[str, bytes | None]:
        """How the replay deals: from the deal seed once every seat has joined; not at all
        in a match whose seats never all joined (it was cancelled or expired before its first
        deal, which the server check holds it to)."""
        if not self.seated:
            return {"seed": None, "deal_seed": None}
        return {"seed": self.seed, "deal_seed": self.deal_seed}

    # -- 8. server events ------------------------------------------------------------------

    def check_server(self) -> None:
        started = self.decoded[0]
        assert isinstance(started, ev.MatchStarted)  # the replay check holds
        clocked = self.events[0].match_started.move_ms > 0  # the log's clock, not MatchInfo's
        # The rules are followed again only to judge time-outs (the seat to act, its default
        # action); the replay check has followed them through the whole log. Without a
        # time-out, actions are told apart by the log's own rounds until every seat is in.
        playing = any(e.WhichOneof("kind") == "timed_out" for e in self.events)
        match = Match(started, seed=self.deal_seed) if playing else None
        reader = ActionReader()
        joined: set[int] = set()
        timed_out: tuple[int, int, int] | None = None  # (seq, seat, default action)
        forfeit_between = False  # whether the time-out's SeatForfeited came between
        for n, (event, decoded) in enumerate(zip(self.events, self.decoded, strict=True), 1):
            kind = event.WhichOneof("kind")
            follows = playing or len(joined) < started.players
            if not follows and kind != "seat_joined":
                continue  # every seat is in, no time-out to judge: only a join is judged now
            recorded = None
            if decoded is not None and follows:
                recorded = reader(decoded) if match is None else match.recorded_action(decoded)
            if timed_out is not None:
                # The time-out that brings its seat to the fault policy's limit is followed
                # by the seat's forfeit, then the action (the faults check judges the forfeit).
                if (
                    kind == "seat_forfeited"
                    and event.seat_forfeited.seat == timed_out[1]
                    and not forfeit_between
                ):
                    forfeit_between = True
                    continue
                _check_default(n, recorded, timed_out)
                timed_out, forfeit_between = None, False
            if kind == "seat_joined":
                self._joined(n, event.seat_joined.seat, joined, started.players)
            elif kind in CHANCE and len(joined) < started.players:
                missing = sorted(set(range(started.players)) - joined)
                raise Discrepancy(n, f"the first deal comes before seats {missing} joined")
            elif kind == "timed_out":
                # A forfeited seat is played at once, clock or none.
                clock = clocked or event.timed_out.forfeited
                assert match is not None  # a log with a time-out is played
                timed_out = self._timed_out(n, event.timed_out.seat, match, clocked=clock)
            elif recorded is not None:
                if len(joined) < started.players:
                    missing = sorted(set(range(started.players)) - joined)
                    raise Discrepancy(n, f"play starts before seats {missing} joined")
                try:
                    if match is not None:
                        match.apply(*recorded)
                except ActionError as error:  # the replay check makes this unreachable
                    raise Discrepancy(n, str(error)) from None

    @staticmethod
    def _joined(n: int, seat: int, joined: set[int], players: int) -> None:
        if seat >= players or seat in joined:
            raise Discrepancy(n, f"seat {seat} cannot join: no such seat, or it joined before")
        joined.add(seat)

    @staticmethod
    def _timed_out(n: int, seat: int, match: Match, *, clocked: bool) -> tuple[int, int, int]:
        if not clocked:
            raise Discrepancy(n, "a time-out in a match without a clock (MatchStarted.move_ms 0)")
        if match.to_act != seat:
            raise Discrepancy(n, f"seat {seat} timed out, but seat {match.to_act} was to act")
        return n, seat, match.default_action()

    # -- 9. faults -------------------------------------------------------------------------

    def check_faults(self) -> None:
        """The fault policy's rules, entry by entry (:mod:`.faults`), then MatchInfo's counts."""
        started = self.decoded[0]
        assert isinstance(started, ev.MatchStarted)  # the replay check holds
        walk = FaultWalk(self.events[0].match_started, started, self.deal_seed)
        walk.walk(self.events, self.decoded)
        walk.check_info(self.info)

    # -- 10. result -------------------------------------------------------------------------

    def check_result(self) -> None:
        match = self.replayed
        assert match is not None  # the replay check holds
        cancelled = self._seq_of("match_cancelled")
        ended = self._seq_of("match_ended")
        at = cancelled if cancelled is not None else ended
        where = f"MatchCancelled at seq {cancelled}" if cancelled else f"MatchEnded at seq {ended}"
        totals = tuple(codec.score_from_pb(t) for t in self.info.totals)
        if totals != match.totals:
            shown = ", ".join(map(str, match.totals))
            raise mismatch(
                "totals", ", ".join(map(str, totals)) or "none", f"{shown} ({where})", at
            )
        if tuple(self.info.winners) != match.winners:
            raise mismatch(
                "winners", list(self.info.winners), f"{list(match.winners)} ({where})", at
            )


def _first_difference(mine: Any, theirs: Any, path: str) -> tuple[str, str, str]:
    """The first place two JSON values differ: its path and each side there, as JSON."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs)):
            if mine.get(key, _ABSENT) != theirs.get(key, _ABSENT):
                return _first_difference(
                    mine.get(key, _ABSENT), theirs.get(key, _ABSENT), f"{path}.{key}"
                )
    if isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        for index, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{index}]")
    return path, _json(mine), _json(theirs)


_ABSENT: Final = object()


def _json(value: Any) -> str:
    return "absent" if value is _ABSENT else json.dumps(value, sort_keys=True)


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
