"""Checks 1 to 6 of an audit: what a log says of itself, before any rule is played.

Its bytes (each entry the canonical encoding of one event), its order, its hash chain, its
opening ``MatchStarted`` against MatchInfo, its seed against the commitment (and the deal seed
mixed from the seats' contributions), and the reveal that closes it. :class:`FormChecks` holds
the state every check shares; :class:`~.checks.Checks` adds the checks that replay the match.
The seed's commitment is computed here as any outsider would, from docs/rules.md §4, not taken
from the engine.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final

from google.protobuf.message import DecodeError

from cardarena.engine import Match
from cardarena.engine import events as ev
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.chain import genesis_hash

from . import canonical
from .canonical import NotCanonical, decode_kind, remember
from .errors import Discrepancy, mismatch
from .pieces import PREFIXES, assemble, seq_prefix

SEED_SIZE: Final = 32
COMMITMENT_PREFIX: Final = b"cardarena-seed-v1"
MIX_PREFIX: Final = b"cardarena-mix-v1"


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


class FormChecks:
    """The state the checks share (decoded events, the seed, the replayed match) and checks
    1 to 6."""

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
        canonical one of a trick, deal, score or dead cards (:func:`.pieces.assemble`), is
        known without a parse; any other is parsed and held to its canonical form
        (:func:`canonical.decode_kind`)."""
        entries = self.resp.entries
        if not entries:
            raise Discrepancy(1, "the log has no entries")
        events, stated = self._events, self._stated
        add_raw, add_seq, add_hash = self.raws.append, self.seqs.append, self.hashes.append
        add_kind, add_decoded, note = self.kinds.append, self.decoded.append, self.noted.append
        known_of, prefixes, parse = canonical.SHOWN.get, PREFIXES, pb.Event.FromString
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
        for part in ("bank_ms", "increment_ms", "round_ms"):
            if getattr(info.time_control, part) != getattr(started, part):
                shown, logged = getattr(info.time_control, part), getattr(started, part)
                raise mismatch(f"time_control.{part}", shown, logged, 1)
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
