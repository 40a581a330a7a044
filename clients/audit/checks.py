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
from cardarena.v1.chain import genesis_hash

from . import canonical
from .canonical import NotCanonical, assemble, decode_kind, remember, seq_prefix
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

NOTED: Final = frozenset(
    {
        "seat_joined",
        "timed_out",
        "seat_faulted",
        "seat_forfeited",
        "match_cancelled",
        "match_ended",
        "seed_revealed",
    }
)
"""The kinds of entry the checks look for by seq (a log has few of them): the decode pass
notes where they are, so that no check searches the whole log for them."""

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
        self.raws: list[bytes] = []
        """Each entry's event bytes."""
        self.kinds: list[str | None] = []
        """Each entry's kind of event (its oneof field), from 1 at index 0."""
        self.decoded: list[ev.Event | None] = []
        self._events: dict[int, pb.Event] = {}
        """The entries parsed so far, by seq: an entry the decoder knew needs no parse, and
        is parsed (:meth:`event`) only when a check reads its fields."""
        self._stated: dict[int, int] = {}
        """The entries whose event says another seq than their place, with that seq."""
        self.seed = bytes(resp.seed)
        self.deal_seed = self.seed
        """The seed mixed with the seats' contributions (docs/rules.md §4.8): what deals."""
        self.seated = False
        """Whether every seat joined, so that the match was dealt at all."""
        self.replayed: Match | None = None
        self.noted: list[int] = []
        """The seqs of the entries of a :data:`NOTED` kind, in order."""
        self._where: dict[str, list[int]] = {}
        self.seqs: list[int] = []
        """Each entry's seq, as the entry (not its event) says."""
        self.hashes: list[bytes] = []
        """Each entry's hash."""

    def event(self, n: int) -> pb.Event:
        """The message of entry ``n`` (from 1), once the decode check has passed it."""
        event = self._events.get(n)
        if event is None:
            event = self._events[n] = pb.Event.FromString(self.raws[n - 1])
        return event

    def _seq_of(self, kind: str) -> int | None:
        """The seq of the first entry of ``kind``, if any."""
        found = self._seqs_of(kind)
        return found[0] if found else None

    def _seqs_of(self, kind: str) -> list[int]:
        """The seqs of every entry of ``kind`` (one of :data:`NOTED`), in order: found among
        the entries the decode pass noted, not by a search of the whole log."""
        if kind not in NOTED:
            raise ValueError(f"the decode pass does not note where {kind} entries are")
        found = self._where.get(kind)
        if found is None:
            kinds = self.kinds
            found = self._where[kind] = [n for n in self.noted if kinds[n - 1] == kind]
        return found

    # -- 1. decode -------------------------------------------------------------------------

    def check_decode(self) -> None:
        """Each entry, in one pass: an entry that is its seq's canonical prefix and then a
        payload shown canonical before (:data:`canonical.SHOWN`), or a payload read as the
        canonical one of a trick, deal, score or dead cards (:func:`canonical.assemble`), is
        known without a parse; any other is parsed and held to its canonical form
        (:func:`canonical.decode_kind`)."""
        entries = self.resp.entries
        if not entries:
            raise Discrepancy(1, "the log has no entries")
        events, stated = self._events, self._stated
        add_raw, add_seq, add_hash = self.raws.append, self.seqs.append, self.hashes.append
        add_kind, add_decoded, note = self.kinds.append, self.decoded.append, self.noted.append
        known_of, prefixes, parse = canonical.SHOWN.get, canonical.PREFIXES, pb.Event.FromString
        known_up_to, once = len(prefixes), canonical.ONCE
        for n, entry in enumerate(entries, start=1):
            # Each field read once, here, for this check and the next two (each read of a
            # field makes an object; a bytes field is copied).
            raw = entry.event
            add_raw(raw)
            add_seq(entry.seq)
            add_hash(entry.hash)
            prefix = prefixes[n] if n < known_up_to else seq_prefix(n)
            if raw.startswith(prefix):
                payload = raw[len(prefix) :]
                known = known_of(payload)
                if known is None:
                    known = assemble(raw, len(prefix))
                    if known is not None and known[0] not in once:
                        remember(payload, *known)
                if known is not None:
                    kind = known[0]
                    add_kind(kind)
                    add_decoded(known[1])
                    if kind in NOTED:
                        note(n)
                    continue
            try:
                event = parse(raw)
            except DecodeError:
                raise Discrepancy(n, "the entry's bytes are not an Event message") from None
            events[n] = event
            if event.seq != n:
                stated[n] = event.seq
            try:
                kind, engine_event = decode_kind(event, raw)
            except NotCanonical as error:
                raise Discrepancy(n, str(error)) from None
            add_kind(kind)
            add_decoded(engine_event)
            if kind in NOTED:
                note(n)

    # -- 2. sequence -----------------------------------------------------------------------

    def check_sequence(self) -> None:
        seqs = self.seqs
        count = len(seqs)
        if self._stated or seqs != list(range(1, count + 1)):
            for n, seq in enumerate(seqs, start=1):
                if seq != n:
                    raise Discrepancy(
                        n, f"expected seq {n}, found seq {seq} (a gap, a repeat or a swap)"
                    )
                if n in self._stated:
                    raise Discrepancy(
                        n, f"the event stored at seq {n} says it is seq {self._stated[n]}"
                    )
        last = self.info.last_seq
        if last > count:
            raise Discrepancy(
                count + 1, f"the log ends at seq {count} but MatchInfo's last seq is {last}"
            )
        if last < count:
            raise Discrepancy(last + 1, f"MatchInfo's last seq is {last} but the log goes on")

    # -- 3. chain --------------------------------------------------------------------------

    def check_chain(self) -> None:
        # The chain of chain.py (SHA-256 of the previous hash and the event's bytes, from the
        # match's genesis hash), entry by entry; the sequence check has put every seq in place.
        # Chained over the whole log in one comprehension, then compared with the log's hashes
        # at once: the first entry where they differ is where the chain breaks.
        prev, sha256, broken = genesis_hash(self.match_id), hashlib.sha256, None
        chained = [prev := sha256(prev + raw).digest() for raw in self.raws]
        if chained != self.hashes:
            pairs = zip(chained, self.hashes, strict=True)
            broken = next(n for n, (mine, theirs) in enumerate(pairs, start=1) if mine != theirs)
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
        if self.kinds[0] != "match_started":
            raise Discrepancy(1, f"the log opens with {self.kinds[0]}, not match_started")
        started, info = self.event(1).match_started, self.info
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
        last = len(self.kinds)
        if self.kinds[-1] == "seed_revealed":
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
        for n in self._seqs_of("seat_joined"):
            event = self.event(n).seat_joined
            joined.setdefault(event.seat, (n, event.name))
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
        if self.event(1).match_started.seed_commitment != expected:
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
        players = self.event(1).match_started.players
        given = [bytes(SEED_SIZE)] * players
        contributed = False
        seats: set[int] = set()
        for n in self._seqs_of("seat_joined"):
            joined = self.event(n).seat_joined
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
        kinds = self.kinds
        last = len(kinds)
        revealed = self._seq_of("seed_revealed")
        if revealed is not None and revealed < last:
            raise Discrepancy(revealed + 1, f"an entry follows the seed's reveal at seq {revealed}")
        cancels = self._seqs_of("match_cancelled")
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
        if kinds[-1] != "seed_revealed":
            raise Discrepancy(last + 1, f"the log ends at seq {last} without revealing the seed")
        if self.event(last).seed_revealed.seed != self.seed:
            raise Discrepancy(last, "SeedRevealed reveals another seed than the log's")

    # -- 7. replay -------------------------------------------------------------------------

    def check_replay(self) -> None:
        engine_log = [e for e in self.decoded if e is not None]
        try:
            match = replay(engine_log, **self._dealing())
        except ReplayError as error:
            seqs = self._engine_seqs()
            at = seqs[error.index] if error.index < len(seqs) else seqs[-1] + 1
            raise Discrepancy(at, explain_replay(engine_log, error, self.deal_seed)) from None
        except Exception as error:  # untrusted input must never crash the auditor
            raise Discrepancy(None, f"the rules could not replay the log: {error!r}") from None
        # A cancelled match stops where it was cancelled (the reveal check put the
        # MatchCancelled there): the replay above has checked everything up to it.
        cancelled = self._seq_of("match_cancelled")
        if not match.over and cancelled is None:
            raise Discrepancy(self._engine_seqs()[-1] + 1, "the log stops before the match is over")
        if cancelled is not None:
            recorded = self.event(cancelled).match_cancelled.totals
            if tuple(codec.score_from_pb(t) for t in recorded) != match.totals:
                shown = ", ".join(map(str, match.totals))
                raise Discrepancy(
                    cancelled, f"MatchCancelled records totals that are not the replay's ({shown})"
                )
        self.replayed = match

    def _engine_seqs(self) -> list[int]:
        """The seq of each engine event (the entries the replay is given), in order."""
        return [n for n, e in enumerate(self.decoded, start=1) if e is not None]

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
        clocked = self.event(1).match_started.move_ms > 0  # the log's clock, not MatchInfo's
        # The rules are followed again only to judge time-outs (the seat to act, its default
        # action); the replay check has followed them through the whole log. Without a
        # time-out, actions are told apart by the log's own rounds until every seat is in.
        playing = bool(self._seqs_of("timed_out"))
        match = Match(started, seed=self.deal_seed) if playing else None
        reader = ActionReader()
        joined: set[int] = set()
        timed_out: tuple[int, int, int] | None = None  # (seq, seat, default action)
        forfeit_between = False  # whether the time-out's SeatForfeited came between
        players = started.players
        for n, (kind, decoded) in enumerate(zip(self.kinds, self.decoded, strict=True), 1):
            if not playing and len(joined) == players:
                # Every seat is in and there is no time-out to judge: from here on only a join
                # is judged (and a join now is always wrong), so only joins are looked at.
                for later in self._seqs_of("seat_joined"):
                    if later >= n:
                        self._joined(later, self.event(later).seat_joined.seat, joined, players)
                break
            recorded = None
            if decoded is not None:
                recorded = reader(decoded) if match is None else match.recorded_action(decoded)
            if timed_out is not None:
                # The time-out that brings its seat to the fault policy's limit is followed
                # by the seat's forfeit, then the action (the faults check judges the forfeit).
                if (
                    kind == "seat_forfeited"
                    and self.event(n).seat_forfeited.seat == timed_out[1]
                    and not forfeit_between
                ):
                    forfeit_between = True
                    continue
                _check_default(n, recorded, timed_out)
                timed_out, forfeit_between = None, False
            if kind == "seat_joined":
                self._joined(n, self.event(n).seat_joined.seat, joined, players)
            elif kind in CHANCE and len(joined) < players:
                missing = sorted(set(range(players)) - joined)
                raise Discrepancy(n, f"the first deal comes before seats {missing} joined")
            elif kind == "timed_out":
                # A forfeited seat is played at once, clock or none.
                marked = self.event(n).timed_out
                assert match is not None  # a log with a time-out is played
                clock = clocked or marked.forfeited
                timed_out = self._timed_out(n, marked.seat, match, clocked=clock)
            elif recorded is not None:
                if len(joined) < players:
                    missing = sorted(set(range(players)) - joined)
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
        walk = FaultWalk(self.event(1).match_started, started, self.deal_seed)
        walk.walk(self.kinds, self.decoded, self.event, self._seqs_of)
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
