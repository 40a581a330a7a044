"""The auditor: clean logs of every game pass, every tampering is caught at the right seq.

Mutations come in two kinds. A raw one changes the stored log and leaves the hashes alone,
as a careless or lazy forger would. A re-signed one (``forge``/``edit``) recomputes every
hash from the change on, so the chain is internally valid and only the checks behind it (the
seed, the rules, the server's own events, MatchInfo) can catch it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import struct_pb2

from cardarena.clients.audit import (
    CHECKS,
    NOT_IN_LOG,
    AuditReport,
    audit_log,
    seed_commitment,
)
from cardarena.clients.cli import main
from cardarena.clients.logs import LogUnavailable, load_log, save_log
from cardarena.engine import AUDITOR, GAMES, Match, new_match, view
from cardarena.engine import events as ev
from cardarena.engine.match import action_of
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.chain import chain_hash, genesis_hash

from ..helpers import play_out
from ..logs import log_from_engine, play_with_time_outs
from ..serverproc import ServerProcess
from ..waiting import eventually

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


@mutation("flip a byte in an event")
def _flip_event() -> Expected:
    b, k = hexa(), a_play(hexa())
    out = clone(b.resp)
    out.entries[k - 1].event = flip(out.entries[k - 1].event, 5, 0x02)
    return out, {"decode", "sequence", "chain"}, k


@mutation("flip a byte in a hash")
def _flip_hash() -> Expected:
    b, k = hexa(), a_play(hexa())
    out = clone(b.resp)
    out.entries[k - 1].hash = flip(out.entries[k - 1].hash, 7)
    return out, "chain", k


@mutation("drop an event")
def _drop() -> Expected:
    b, k = hexa(), a_play(hexa())
    out = clone(b.resp)
    del out.entries[k - 1]
    return out, "sequence", k


@mutation("duplicate an event")
def _duplicate() -> Expected:
    b, k = hexa(), a_play(hexa())
    out = clone(b.resp)
    entries = list(out.entries)
    del out.entries[:]
    out.entries.extend([*entries[:k], entries[k - 1], *entries[k:]])
    return out, "sequence", k + 1


@mutation("swap two events")
def _swap() -> Expected:
    b, k = hexa(), a_play(hexa())
    out = clone(b.resp)
    entries = list(out.entries)
    entries[k - 1], entries[k] = entries[k], entries[k - 1]
    del out.entries[:]
    out.entries.extend(entries)
    return out, "sequence", k


@mutation("truncate")
def _truncate() -> Expected:
    b, k = hexa(), a_play(hexa())
    out = clone(b.resp)
    del out.entries[k:]
    return out, "sequence", k + 1


@mutation("truncate and fix MatchInfo's last seq")
def _truncate_seq_fixed() -> Expected:
    b, k = hexa(), a_play(hexa())
    out = clone(b.resp)
    del out.entries[k:]
    out.match.last_seq = k
    return out, "chain", k  # MatchInfo's last hash is still the real end's


@mutation("truncate and fix MatchInfo's last seq and last hash")
def _truncate_fixed() -> Expected:
    b, k = hexa(), a_play(hexa())
    out = clone(b.resp)
    del out.entries[k:]
    out.match.last_seq, out.match.last_hash = k, out.entries[-1].hash
    return out, "reveal", k + 1


@mutation("append junk")
def _junk() -> Expected:
    b = hexa()
    out = clone(b.resp)
    out.entries.add(seq=b.last + 1, event=b"\xff\xfejunk", hash=bytes(32))
    return out, "decode", b.last + 1


@mutation("append junk and fix MatchInfo's last seq")
def _junk_fixed() -> Expected:
    b = hexa()
    out = clone(b.resp)
    out.entries.add(seq=b.last + 1, event=b"\x08", hash=bytes(32))
    out.match.last_seq = b.last + 1
    return out, "decode", b.last + 1


@mutation("re-signed: append a play after the reveal")
def _append_signed() -> Expected:
    b = hexa()
    events = b.events()
    return forge(b, [*events, events[a_play(b) - 1]]), "reveal", b.last + 1


@mutation("re-signed: a card the seat does not hold")
def _card_not_held() -> Expected:
    b = hexa()
    first, k = b.seqs("card_played")[0], b.seqs("card_played")[5]
    gone = b.events()[first - 1].card_played.card
    return edit(b, k, lambda e: e.card_played.card.CopyFrom(gone)), "replay", k


@mutation("re-signed: another legal card")
def _other_legal_card() -> Expected:
    b = hexa()
    events = b.events()
    for k, match in positions(b):
        table = view(match, AUDITOR)
        legal = match.legal_actions()
        if k > 100 and table.trick and len(legal) > 1:
            played = events[k - 1].card_played.card
            other = next(a for a in legal if a != codec.card_from_pb(played))
            trick_end = next(s for s in b.seqs("trick_won") if s > k)
            card = codec.card_to_pb(other)
            out = edit(b, k, lambda e: e.card_played.card.CopyFrom(card))  # noqa: B023
            return out, "replay", trick_end
    raise AssertionError("no trick with a choice")


@mutation("re-signed: a trick winner")
def _trick_winner() -> Expected:
    b = hexa()
    k = b.seqs("trick_won")[3]
    return (
        edit(b, k, lambda e: setattr(e.trick_won, "seat", (e.trick_won.seat + 1) % 4)),
        "replay",
        k,
    )


@mutation("re-signed: a round score")
def _round_score() -> Expected:
    b = hexa()
    k = b.seqs("round_scored")[1]
    return edit(b, k, lambda e: setattr(e.round_scored.scores[0], "numerator", 99)), "replay", k


@mutation("re-signed: a running total")
def _running_total() -> Expected:
    b = hexa()
    k = b.seqs("round_scored")[2]
    return edit(b, k, lambda e: setattr(e.round_scored.totals[1], "numerator", -7)), "replay", k


@mutation("re-signed: a final total")
def _final_total() -> Expected:
    b = hexa()
    k = b.seqs("match_ended")[0]
    return edit(b, k, lambda e: setattr(e.match_ended.totals[2], "numerator", 0)), "replay", k


@mutation("re-signed: the winners")
def _winners() -> Expected:
    b = hexa()
    k = b.seqs("match_ended")[0]
    loser = next(s for s in range(4) if s not in b.match.winners)
    return edit(b, k, lambda e: e.match_ended.winners.__setitem__(0, loser)), "replay", k


@mutation("MatchInfo's totals")
def _info_totals() -> Expected:
    b = hexa()
    out = clone(b.resp)
    out.match.totals[0].numerator += 1
    return out, "result", b.seqs("match_ended")[0]


@mutation("MatchInfo's winners")
def _info_winners() -> Expected:
    b = hexa()
    out = clone(b.resp)
    out.match.winners.append(next(s for s in range(4) if s not in b.match.winners))
    return out, "result", b.seqs("match_ended")[0]


@mutation("re-signed: a dealt hand")
def _dealt_hand() -> Expected:
    b = hexa()
    k = b.seqs("dealt")[1]

    def swap(e: pb.Event) -> None:
        one, two = e.dealt.hands[0].cards, e.dealt.hands[1].cards
        a, c = pb.Card(), pb.Card()
        a.CopyFrom(one[0])
        c.CopyFrom(two[0])
        one[0].CopyFrom(c)
        two[0].CopyFrom(a)

    return edit(b, k, swap), "replay", k


@mutation("the seed")
def _seed() -> Expected:
    out = clone(hexa().resp)
    out.seed = bytes(32)
    return out, "seed", 1


@mutation("re-signed: the seed everywhere")
def _seed_everywhere() -> Expected:
    b = hexa()
    out = edit(b, b.last, lambda e: setattr(e.seed_revealed, "seed", bytes(32)))
    out.seed = out.match.seed = bytes(32)
    return out, "seed", 1


@mutation("re-signed: another seed with its own commitment everywhere")
def _forged_seed() -> Expected:
    b, other = hexa(), bytes(range(1, 33))
    events = b.events()
    events[0].match_started.seed_commitment = seed_commitment(other)
    events[-1].seed_revealed.seed = other
    out = forge(b, events)
    out.seed = out.match.seed = other
    out.match.seed_commitment = seed_commitment(other)
    first_chance = min(b.seqs("dealt") + b.seqs("trump_drawn"))
    return out, "replay", first_chance


@mutation("re-signed: the commitment in MatchStarted")
def _commitment() -> Expected:
    b = hexa()
    return edit(b, 1, lambda e: setattr(e.match_started, "seed_commitment", "0" * 64)), "seed", 1


@mutation("MatchInfo's commitment")
def _info_commitment() -> Expected:
    out = clone(hexa().resp)
    out.match.seed_commitment = "f" * 64
    return out, "seed", 1


@mutation("MatchInfo's seed")
def _info_seed() -> Expected:
    out = clone(hexa().resp)
    out.match.seed = bytes(32)
    return out, "seed", None


@mutation("a 31-byte seed")
def _short_seed() -> Expected:
    out = clone(hexa().resp)
    out.seed = SEED[:31]
    return out, "seed", None


@mutation("re-signed: SeedRevealed reveals another seed")
def _revealed() -> Expected:
    b = hexa()
    return edit(b, b.last, lambda e: setattr(e.seed_revealed, "seed", bytes(32))), "reveal", b.last


@mutation("SeedRevealed dropped, MatchInfo fixed")
def _no_reveal() -> Expected:
    b = hexa()
    out = clone(b.resp)
    del out.entries[-1]
    out.match.last_seq, out.match.last_hash = b.last - 1, out.entries[-1].hash
    return out, "reveal", b.last


@mutation("re-signed: drop an action")
def _drop_signed() -> Expected:
    b, k = hexa(), a_play(hexa())
    events = b.events()
    del events[k - 1]
    return forge(b, events), "replay", k


@mutation("re-signed: duplicate an action")
def _duplicate_signed() -> Expected:
    b, k = hexa(), a_play(hexa())
    events = b.events()
    events.insert(k, pb.Event.FromString(events[k - 1].SerializeToString()))
    return forge(b, events), "replay", k + 1


@mutation("re-signed: swap two plays")
def _swap_signed() -> Expected:
    b, k = hexa(), a_play(hexa(), 12)  # the first play of a trick, then the second
    events = b.events()
    events[k - 1], events[k] = events[k], events[k - 1]
    return forge(b, events), "replay", k


@mutation("re-signed: cut mid-match and reveal")
def _cut_signed() -> Expected:
    b, k = hexa(), a_play(hexa(), 12)
    events = b.events()
    return forge(b, [*events[:k], events[-1]]), "replay", k + 1


@mutation("re-signed: a time-out before a choice that is not the default")
def _timeout_not_default() -> Expected:
    b = hexa()
    events = b.events()
    for k, match in positions(b):
        decoded = codec.event_from_pb(events[k - 1])
        chosen = action_of(decoded) if decoded is not None else None
        assert chosen is not None
        if chosen[1] != match.default_action() and events[k - 2].WhichOneof("kind") != "timed_out":
            events.insert(k - 1, pb.Event(timed_out=pb.TimedOut(seat=chosen[0])))
            return forge(b, events), "server", k + 1
    raise AssertionError("every choice was the default")


@mutation("re-signed: a time-out of the wrong seat")
def _timeout_seat() -> Expected:
    b = hexa()
    k = b.seqs("timed_out")[0]
    return (
        edit(b, k, lambda e: setattr(e.timed_out, "seat", (e.timed_out.seat + 1) % 4)),
        "server",
        k,
    )


@mutation("re-signed: a time-out in a match without a clock")
def _timeout_no_clock() -> Expected:
    b = hexa()
    out = edit(b, 1, lambda e: setattr(e.match_started, "move_ms", 0))
    out.match.time_control.move_ms = 0
    return out, "server", b.seqs("timed_out")[0]


@mutation("re-signed: MatchStarted's clock")
def _started_clock() -> Expected:
    return edit(hexa(), 1, lambda e: setattr(e.match_started, "move_ms", 60_000)), "start", 1


@mutation("re-signed: MatchStarted's seat reservations")
def _started_reserved() -> Expected:
    return (
        edit(hexa(), 1, lambda e: e.match_started.reserved_seats.__setitem__(2, True)),
        "start",
        1,
    )


@mutation("re-signed: MatchStarted's reservations for too few seats")
def _started_reserved_short() -> Expected:
    return edit(hexa(), 1, lambda e: e.match_started.reserved_seats.pop()), "start", 1


@mutation("re-signed: a seat's name")
def _seat_name() -> Expected:
    b = hexa()
    k = b.seqs("seat_joined")[2]
    return edit(b, k, lambda e: setattr(e.seat_joined, "name", "mallory")), "start", k


@mutation("re-signed: a seat joins after play starts")
def _late_join() -> Expected:
    b = hexa()
    events = b.events()
    k = b.seqs("seat_joined")[-1]
    late = events.pop(k - 1)
    events.insert(k, late)  # after the first action
    return forge(b, events), "server", k


@mutation("re-signed: a seat joins twice")
def _joins_twice() -> Expected:
    b = hexa()
    k = b.seqs("seat_joined")[0]
    events = b.events()
    events.insert(k, pb.Event.FromString(events[k - 1].SerializeToString()))
    return forge(b, events), "server", k + 1


@mutation("re-signed: MatchStarted names another match")
def _started_id() -> Expected:
    b = hexa()
    return edit(b, 1, lambda e: setattr(e.match_started, "match_id", "other")), "start", 1


@mutation("MatchInfo names another match")
def _info_id() -> Expected:
    out = clone(hexa().resp)
    out.match.match_id = "other"
    return out, "chain", 1


def more_points(options: struct_pb2.Struct) -> None:
    options.fields["queens"].struct_value.fields["points_per_queen"].number_value = 5


@mutation("re-signed: MatchStarted's options")
def _options() -> Expected:
    b = hexa()

    def more_per_queen(e: pb.Event) -> None:
        more_points(e.match_started.options)

    return edit(b, 1, more_per_queen), "start", 1


@mutation("re-signed: the options, in MatchStarted and MatchInfo alike")
def _options_both() -> Expected:
    b = hexa()

    def more_per_queen(e: pb.Event) -> None:
        more_points(e.match_started.options)

    out = edit(b, 1, more_per_queen)
    more_points(out.match.options)
    queens = b.seqs("round_started", lambda e: e.round_started.kind == "queens")[0]
    return out, "replay", next(s for s in b.seqs("round_scored") if s > queens)


@mutation("re-signed: the game, in MatchStarted and MatchInfo alike")
def _game_both() -> Expected:
    # (Another Norwegian preset would not do: the normalised options spell out every round,
    # so "heptathlon" with Hexathlon's rounds is the very same game under another name.)
    b = hexa()
    out = edit(b, 1, lambda e: setattr(e.match_started, "game", "crazy_sixes"))
    out.match.game = "crazy_sixes"
    return out, "replay", 1


@mutation("re-signed: a round's kind")
def _round_kind() -> Expected:
    b = hexa()
    k = b.seqs("round_started")[1]
    return edit(b, k, lambda e: setattr(e.round_started, "kind", "queens")), "replay", k


@mutation("re-signed: a forced pass recorded as chosen")
def _pass_reason() -> Expected:
    b = hexa()
    k = b.seqs("passed", lambda e: e.passed.reason == pb.PASS_REASON_FORCED)[0]
    return edit(b, k, lambda e: setattr(e.passed, "reason", pb.PASS_REASON_CHOSEN)), "replay", k


@mutation("re-signed: a trump draw")
def _trump_draw() -> Expected:
    b = hexa()
    k = b.seqs("trump_drawn")[0]
    return (
        edit(b, k, lambda e: setattr(e.trump_drawn, "suit", e.trump_drawn.suit % 4 + 1)),
        "replay",
        k,
    )


@mutation("re-signed: a card code that disagrees with its card")
def _card_code() -> Expected:
    b, k = hexa(), a_play(hexa())
    return edit(b, k, lambda e: setattr(e.card_played.card, "code", "QC!")), "decode", k


@mutation("re-signed: a field the protocol does not define")
def _unknown_field() -> Expected:
    b, k = hexa(), a_play(hexa())
    return edit_raw(b, k, lambda raw: raw + b"\xf8\x07\x01"), "decode", k


@mutation("re-signed: a non-canonical encoding of the same event")
def _non_canonical() -> Expected:
    b, k = hexa(), a_play(hexa())
    return edit_raw(b, k, lambda raw: raw + bytes([0x08, k])), "decode", k  # seq again


@mutation("re-signed: an event that says another seq")
def _inner_seq() -> Expected:
    b, k = hexa(), a_play(hexa())
    return edit(b, k, lambda e: setattr(e, "seq", k + 1)), "sequence", k


@mutation("an entry's seq")
def _entry_seq() -> Expected:
    b, k = hexa(), a_play(hexa())
    out = clone(b.resp)
    out.entries[k - 1].seq = 999
    return out, "sequence", k


@mutation("no entries")
def _empty() -> Expected:
    out = clone(hexa().resp)
    del out.entries[:]
    return out, "decode", 1


@mutation("re-signed: MatchStarted removed")
def _no_start() -> Expected:
    b = hexa()
    return forge(b, b.events()[1:]), "start", 1


@mutation("MatchInfo's status")
def _status() -> Expected:
    out = clone(hexa().resp)
    out.match.status = spb.MATCH_STATUS_RUNNING
    return out, "start", hexa().last


@mutation("re-signed: dead cards (Crazy Sixes)")
def _dead_cards() -> Expected:
    b = base("crazy_sixes", 4)
    k = b.seqs("cards_dead")[0]
    return (
        edit(b, k, lambda e: setattr(e.cards_dead, "seat", (e.cards_dead.seat + 1) % 4)),
        "replay",
        k,
    )


@mutation("re-signed: a Crazy Sixes play")
def _sixes_play() -> Expected:
    b = base("crazy_sixes", 3)
    k = b.seqs("card_played")[4]
    first = b.events()[b.seqs("card_played")[0] - 1].card_played.card
    return edit(b, k, lambda e: e.card_played.card.CopyFrom(first)), "replay", k


@mutation("re-signed: the trump choice (Triathlon)")
def _trump_choice() -> Expected:
    b = base("triathlon", 3)
    k = b.seqs("trump_chosen")[0]
    excluded = b.events()[b.seqs("suit_excluded")[0] - 1].suit_excluded.suit
    return edit(b, k, lambda e: setattr(e.trump_chosen, "suit", excluded)), "replay", k


@mutation("re-signed: feats (Triathlon)")
def _feats() -> Expected:
    b = base("triathlon", 3)
    k = b.seqs("feats_earned")[0]
    return edit(b, k, lambda e: e.feats_earned.seats[0].feats.append("last")), "replay", k


@mutation("re-signed: the dealer draw")
def _dealer_draw() -> Expected:
    b = base("pentathlon", 3, first_dealer="random")
    k = b.seqs("dealer_drawn")[0]
    return (
        edit(b, k, lambda e: setattr(e.dealer_drawn, "seat", (e.dealer_drawn.seat + 1) % 3)),
        "replay",
        k,
    )


# -- the tests ---------------------------------------------------------------------------------

GAME_COUNTS = [(g, p) for g in GAMES for p in GAMES[g].players]


@pytest.mark.parametrize(("game", "players"), GAME_COUNTS)
def test_a_clean_log_of_every_game_passes_every_check(game: str, players: int) -> None:
    b = base(game, players)
    report = audit_log(b.resp)
    assert report.ok, report.failure
    assert report.passed == [name for name, _ in CHECKS]
    assert report.totals == [str(t) for t in b.match.totals]
    assert report.winners == list(b.match.winners)
    assert b.seqs("timed_out"), "the log should exercise the time-out check"


def test_a_log_without_time_outs_or_clock_passes() -> None:
    b = base("crazy_sixes", 3)
    events = [e for e in b.events() if e.WhichOneof("kind") != "timed_out"]
    events[0].match_started.move_ms = 0
    out = forge(b, events)
    out.match.time_control.move_ms = 0
    for seat in out.match.seats:  # no time-out, no fault
        seat.faults = 0
    assert audit_log(out).ok


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_every_mutation_is_caught_at_the_right_seq(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mutated, check, seq = MUTATIONS[name]()
    report = audit_log(mutated)
    assert report.failure is not None, f"{name}: not caught"
    checks = {check} if isinstance(check, str) else check
    assert report.failure.check in checks, report.failure
    assert report.failure.seq == seq, report.failure
    # The command says the same, with exit code 1, from a file of either format.
    path = tmp_path / "mutated.pb"
    save_log(mutated, path)
    assert main(["audit", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False
    assert out["failure"] == {
        "check": report.failure.check,
        "seq": seq,
        "reason": report.failure.reason,
    }


# -- MatchInfo, field by field ---------------------------------------------------------------

InfoEdit = tuple[Callable[[spb.MatchInfo], object], str, Callable[[Base], int | None], str]


def _loser(b: Base) -> int:
    return next(s for s in range(b.match.players) if s not in b.match.winners)


def _set(name: str, value: object) -> Callable[[object], None]:
    return lambda message: setattr(message, name, value)


def _seat(n: int, name: str, value: object) -> Callable[[spb.MatchInfo], None]:
    return lambda info: setattr(next(s for s in info.seats if s.seat == n), name, value)


# field edited: (the edit, the check that must fail, at which seq, what the reason names)
INFO_EDITS: dict[str, InfoEdit] = {
    "match_id": (_set("match_id", "other"), "chain", lambda b: 1, "does not chain"),
    "game": (_set("game", "triathlon"), "start", lambda b: 1, "MatchInfo.game is 'triathlon'"),
    "players": (_set("players", 5), "start", lambda b: 1, "MatchInfo.players is 5"),
    "options": (
        lambda info: more_points(info.options),
        "start",
        lambda b: 1,
        "MatchInfo.options.queens.points_per_queen is 5",
    ),
    "status": (
        _set("status", spb.MATCH_STATUS_RUNNING),
        "start",
        lambda b: b.last,
        "MatchInfo.status is MATCH_STATUS_RUNNING",
    ),
    "seats": (lambda info: info.seats.pop(), "start", lambda b: 1, "MatchInfo.seats is seats"),
    "seats.seat": (_seat(1, "seat", 9), "start", lambda b: 1, "MatchInfo.seats is seats"),
    "seats.taken": (
        _seat(2, "taken", False),
        "start",
        lambda b: b.seqs("seat_joined")[2],
        "MatchInfo.seats[2].taken is False",
    ),
    "seats.name": (
        _seat(0, "name", "mallory"),
        "start",
        lambda b: b.seqs("seat_joined")[0],
        "MatchInfo.seats[0].name is 'mallory', the log says 'ann'",
    ),
    "seats.reserved": (
        _seat(3, "reserved", True),
        "start",
        lambda b: 1,
        "MatchInfo.seats[3].reserved is True, the log says False",
    ),
    "seed_commitment": (
        _set("seed_commitment", "f" * 64),
        "seed",
        lambda b: 1,
        "MatchInfo.seed_commitment is ffff",
    ),
    "last_seq": (
        lambda info: setattr(info, "last_seq", info.last_seq - 1),
        "sequence",
        lambda b: b.last,
        "MatchInfo's last seq",
    ),
    "time_control": (
        lambda info: setattr(info.time_control, "move_ms", 501),
        "start",
        lambda b: 1,
        "MatchInfo.time_control.move_ms is 501, the log says 500",
    ),
    "time_control (none)": (
        lambda info: info.ClearField("time_control"),
        "start",
        lambda b: 1,
        "MatchInfo.time_control.move_ms is 0, the log says 500",
    ),
    "totals": (
        lambda info: setattr(info.totals[0], "numerator", info.totals[0].numerator + 1),
        "result",
        lambda b: b.seqs("match_ended")[0],
        "MatchInfo.totals is",
    ),
    "winners": (
        lambda info: info.winners.append(0 if 0 not in info.winners else 3),
        "result",
        lambda b: b.seqs("match_ended")[0],
        "MatchInfo.winners is",
    ),
    "seed": (_set("seed", bytes(32)), "seed", lambda b: None, "MatchInfo.seed is 0000"),
    "last_hash": (
        lambda info: setattr(info, "last_hash", flip(info.last_hash, 0)),
        "chain",
        lambda b: b.last,
        "MatchInfo.last_hash is",
    ),
    "last_hash (empty)": (
        _set("last_hash", b""),
        "chain",
        lambda b: b.last,
        "MatchInfo.last_hash is empty",
    ),
    "cancelled": (
        _set("cancelled", True),
        "start",
        lambda b: None,
        "MatchInfo.cancelled is True, the log says False",
    ),
    "tournament_id": (
        _set("tournament_id", "cup"),
        "start",
        lambda b: 1,
        "MatchInfo.tournament_id is 'cup', the log says '' (none)",
    ),
    "seats.faults": (
        lambda info: setattr(info.seats[1], "faults", info.seats[1].faults + 1),
        "faults",
        lambda b: b.seqs("timed_out", lambda e: e.timed_out.seat == 1)[-1],
        "MatchInfo.seats[1].faults is",
    ),
    "seats.forfeited": (
        _seat(2, "forfeited", True),
        "faults",
        lambda b: None,
        "MatchInfo.seats[2].forfeited is True, the log says False",
    ),
}


def test_every_field_of_match_info_has_an_edit_or_is_named_as_not_in_the_log() -> None:
    edited = {name.split(" ")[0] for name in INFO_EDITS}
    fields = {f.name for f in spb.MatchInfo.DESCRIPTOR.fields}
    assert {n for n in edited if "." not in n} == fields - NOT_IN_LOG
    seat_fields = {f.name for f in spb.SeatInfo.DESCRIPTOR.fields}
    assert {n.split(".")[1] for n in edited if n.startswith("seats.")} == seat_fields
    assert {"created_unix_ms"} == NOT_IN_LOG


@pytest.mark.parametrize("name", list(INFO_EDITS))
def test_an_edited_match_info_field_fails_even_against_a_trusted_head(name: str) -> None:
    b = hexa()
    change, check, seq_of, says = INFO_EDITS[name]
    out = clone(b.resp)
    change(out.match)
    seq = seq_of(b)
    for head in (None, b.resp.entries[-1].hash):  # the head vouches for the log, not MatchInfo
        report = audit_log(out, head=head)
        assert report.failure is not None, f"{name}: not caught"
        assert (report.failure.check, report.failure.seq) == (check, seq), report.failure
        assert says in report.failure.reason, report.failure


def test_created_unix_ms_is_not_in_the_log_and_not_checked() -> None:
    out = clone(hexa().resp)
    out.match.created_unix_ms = 1_234_567
    assert audit_log(out).ok


@pytest.mark.parametrize("field", ["last_hash", "time_control"])
def test_the_command_with_a_trusted_head_fails_an_edited_match_info(
    field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's two gaps: each edit used to pass ``audit --head``."""
    b = hexa()
    out = clone(b.resp)
    INFO_EDITS[field][0](out.match)
    path = tmp_path / "edited.json"
    save_log(out, path)
    assert main(["audit", str(path), "--head", b.resp.entries[-1].hash.hex()]) == 1
    assert f"MatchInfo.{field}" in capsys.readouterr().out


def test_a_re_signed_clock_passes_only_without_a_trusted_head() -> None:
    """MatchStarted carries the clock: changing it there and in MatchInfo alike re-signs the
    chain, which the head gives away."""
    b = hexa()
    out = edit(b, 1, lambda e: setattr(e.match_started, "move_ms", 60_000))
    out.match.time_control.move_ms = 60_000
    assert audit_log(out).ok
    report = audit_log(out, head=b.resp.entries[-1].hash)
    assert report.failure is not None
    assert (report.failure.check, report.failure.seq) == ("chain", b.last)


def test_a_log_from_before_the_settings_audits_clean_as_what_it_says() -> None:
    """No move_ms and no reserved_seats in MatchStarted: no clock, no seat reserved."""
    old = log_from_engine(base_one_deal().match, SEED, "old", reserved=(), move_ms=0)
    started = pb.Event.FromString(old.entries[0].event).match_started
    assert started.move_ms == 0 and not started.reserved_seats
    report = audit_log(old)
    assert report.ok, report.failure
    clocked = clone(old)
    clocked.match.time_control.move_ms = 500
    report = audit_log(clocked)
    assert report.failure is not None and (report.failure.check, report.failure.seq) == ("start", 1)
    assert "predates clocks" in report.failure.reason
    reserved = clone(old)
    reserved.match.seats[0].reserved = True
    report = audit_log(reserved)
    assert report.failure is not None and (report.failure.check, report.failure.seq) == ("start", 1)


# -- cancelled matches -------------------------------------------------------------------------

CANCELLED = "cancelled by the operator: the room closes"


@cache
def cancelled_base(actions: int = 60) -> Base:
    """A Hexathlon cancelled after ``actions`` actions (every 11th a time-out), two seats
    reserved."""
    match = new_match("hexathlon", players=4, seed=SEED)
    rng = random.Random("cancelled")
    timed_out: list[int] = []
    for _ in range(actions):
        seat = match.to_act
        assert seat is not None
        if len(match.log) % 11 == 0:
            timed_out.append(len(match.log))
            match.apply(seat, match.default_action())
        else:
            match.apply(seat, rng.choice(match.legal_actions()))
    resp = log_from_engine(
        match,
        SEED,
        "cancelled",
        names=NAMES[:4],
        timed_out=timed_out,
        move_ms=500,
        reserved=[True, False, False, True],
        cancelled=CANCELLED,
    )
    return Base(match, resp)


def test_a_cancelled_match_audits_clean() -> None:
    b = cancelled_base()
    assert [e.WhichOneof("kind") for e in b.events()[-2:]] == ["match_cancelled", "seed_revealed"]
    assert not b.seqs("match_ended") and b.seqs("timed_out")
    report = audit_log(b.resp, head=b.resp.entries[-1].hash)
    assert report.ok, report.failure
    assert report.passed == [name for name, _ in CHECKS]
    assert report.totals == [str(t) for t in b.match.totals] and report.winners == []
    assert any(t != 0 for t in b.match.totals), "cancelled after some rounds were scored"


def test_a_match_cancelled_while_waiting_for_seats_audits_clean() -> None:
    match = new_match("triathlon", seed=SEED)
    resp = log_from_engine(
        match, SEED, "expired", seated={1}, cancelled="expired: seats still free after 3600 s"
    )
    assert [(s.taken, s.name) for s in resp.match.seats] == [
        (False, ""),
        (True, "seat 1"),
        (False, ""),
    ]
    report = audit_log(resp)
    assert report.ok, report.failure
    taken = clone(resp)
    taken.match.seats[0].taken = True
    report = audit_log(taken)
    assert report.failure is not None and (report.failure.check, report.failure.seq) == (
        "start",
        None,
    )
    assert "MatchInfo.seats[0].taken is True, the log says False" in report.failure.reason


def _kind_seqs(events: list[pb.Event], kind: str) -> list[int]:
    return [n for n, e in enumerate(events, start=1) if e.WhichOneof("kind") == kind]


def _cancel_followed_by_play() -> tuple[spb.GetMatchLogResponse, int]:
    b = cancelled_base()
    events = b.events()
    events[-3], events[-2] = events[-2], events[-3]  # the last event after the cancellation
    return forge(b, events), len(events) - 2


def _cancel_unrevealed() -> tuple[spb.GetMatchLogResponse, int]:
    b = cancelled_base()
    out = forge(b, b.events()[:-1])  # MatchInfo fixed to end at the cancellation
    return out, b.last - 1


def _cancel_twice() -> tuple[spb.GetMatchLogResponse, int]:
    b = cancelled_base()
    events = b.events()
    events.insert(-1, pb.Event.FromString(events[-2].SerializeToString()))
    return forge(b, events), len(events) - 1


def _cancel_after_the_end() -> tuple[spb.GetMatchLogResponse, int]:
    b = hexa()
    events = b.events()
    events.insert(-1, pb.Event(match_cancelled=pb.MatchCancelled(reason=CANCELLED)))
    out = forge(b, events)
    out.match.cancelled = True
    return out, len(events) - 1


def _cancel_before_the_end() -> tuple[spb.GetMatchLogResponse, int]:
    b = hexa()
    events = b.events()
    events.insert(-2, pb.Event(match_cancelled=pb.MatchCancelled(reason=CANCELLED)))
    out = forge(b, events)
    out.match.cancelled = True
    return out, len(events) - 2


@pytest.mark.parametrize(
    "build",
    [
        _cancel_followed_by_play,
        _cancel_unrevealed,
        _cancel_twice,
        _cancel_after_the_end,
        _cancel_before_the_end,
    ],
    ids=["followed by a play", "not revealed", "twice", "after MatchEnded", "before MatchEnded"],
)
def test_a_misplaced_match_cancelled_fails_at_its_seq(
    build: Callable[[], tuple[spb.GetMatchLogResponse, int]],
) -> None:
    out, seq = build()
    assert pb.Event.FromString(out.entries[seq - 1].event).WhichOneof("kind") == "match_cancelled"
    report = audit_log(out)
    assert report.failure is not None
    assert (report.failure.check, report.failure.seq) == ("reveal", seq), report.failure
    assert "MatchCancelled" in report.failure.reason


def test_a_cancellation_amid_an_action_s_consequences_fails_the_replay() -> None:
    b = hexa()
    events = b.events()
    k = b.seqs("trick_won")[5]  # the trick's last card is played, its winner not yet recorded
    cut = [*events[: k - 1], pb.Event(match_cancelled=pb.MatchCancelled()), events[-1]]
    out = forge(b, cut)
    out.match.cancelled = True
    report = audit_log(out)
    assert report.failure is not None
    assert (report.failure.check, report.failure.seq) == ("replay", k), report.failure


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("winners", lambda info: info.winners.append(0)),
        ("totals", lambda info: setattr(info.totals[1], "numerator", 999)),
        ("cancelled", lambda info: setattr(info, "cancelled", False)),
    ],
)
def test_a_cancelled_match_s_match_info_is_checked_too(
    field: str, change: Callable[[spb.MatchInfo], object]
) -> None:
    b = cancelled_base()
    out = clone(b.resp)
    change(out.match)
    report = audit_log(out)
    assert report.failure is not None
    check = "start" if field == "cancelled" else "result"
    assert (report.failure.check, report.failure.seq) == (check, b.last - 1), report.failure
    assert f"MatchInfo.{field} is" in report.failure.reason


def test_a_re_signed_alternative_history_is_caught_by_a_trusted_head() -> None:
    """Triathlon's first exclusion can often change without consequence: a forger who
    re-signs the chain leaves nothing for the rules to find, but the head hash moves."""
    b = base("triathlon", 3)
    k = b.seqs("suit_excluded")[0]
    trump = b.events()[b.seqs("trump_chosen")[0] - 1].trump_chosen.suit
    second = b.events()[k].suit_excluded.suit
    spare = next(
        s for s in range(1, 5) if s not in (trump, second, b.events()[k - 1].suit_excluded.suit)
    )
    forged = edit(b, k, lambda e: setattr(e.suit_excluded, "suit", spare))
    assert audit_log(forged).ok  # consistent with the rules: no auditor can tell
    report = audit_log(forged, head=b.resp.entries[-1].hash)
    assert report.failure is not None
    assert (report.failure.check, report.failure.seq) == ("chain", b.last)
    assert audit_log(b.resp, head=b.resp.entries[-1].hash).ok


def flips(b: Base, masks: tuple[int, ...], *, every_entry: bool) -> list[tuple[int, int, int]]:
    """The single-byte flips, re-signed, that the audit does NOT catch: in every entry, or in
    the first entry of each kind."""
    missed = []
    kinds: set[str | None] = set()
    for k, entry in enumerate(b.resp.entries, start=1):
        kind = pb.Event.FromString(entry.event).WhichOneof("kind")
        if not every_entry and kind in kinds:
            continue
        kinds.add(kind)
        for at in range(len(entry.event)):
            for mask in masks:
                forged = edit_raw(b, k, lambda raw: flip(raw, at, mask))  # noqa: B023
                if audit_log(forged).ok:
                    missed.append((k, at, mask))
    return missed


def consequence_free(b: Base, missed: list[tuple[int, int, int]]) -> bool:
    """Each uncaught flip turned one Triathlon exclusion into another legal one, and a
    trusted head hash catches it."""
    for k, at, mask in missed:
        forged = edit_raw(b, k, lambda raw: flip(raw, at, mask))  # noqa: B023
        if pb.Event.FromString(forged.entries[k - 1].event).WhichOneof("kind") != "suit_excluded":
            return False
        if audit_log(forged, head=b.resp.entries[-1].hash).ok:
            return False
    return True


def test_every_byte_flip_in_each_kind_of_event_of_a_re_signed_log_is_caught() -> None:
    b = base_one_deal()
    missed = flips(b, (0x01, 0x80), every_entry=False)
    assert consequence_free(b, missed), missed


@pytest.mark.slow
def test_every_byte_flip_of_a_re_signed_log_is_caught() -> None:
    b = base_one_deal()
    missed = flips(b, (0x01, 0xFF), every_entry=True)
    assert consequence_free(b, missed), missed


@cache
def base_one_deal() -> Base:
    match = new_match("triathlon", seed=SEED, options={"max_deals": 1})
    play_out(match, rng_seed=1)
    return Base(match, log_from_engine(match, SEED, "one-deal", timed_out=(), move_ms=0))


def test_the_replay_reason_names_cards_by_code() -> None:
    mutated, _, seq = MUTATIONS["re-signed: a trick winner"]()
    report = audit_log(mutated)
    assert report.failure is not None and report.failure.seq == seq
    assert "the log records: trick" in report.failure.reason
    assert "the rules give: trick" in report.failure.reason
    assert "won by seat" in report.failure.reason


def test_auditing_as_another_match_breaks_the_chain_at_seq_1() -> None:
    report = audit_log(hexa().resp, match_id="another")
    assert report.failure is not None
    assert (report.failure.check, report.failure.seq) == ("chain", 1)


# -- the log file and the command ------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".pb", ".json", ".log"])
def test_a_log_file_round_trips_exactly(suffix: str, tmp_path: Path) -> None:
    path = tmp_path / f"match{suffix}"
    save_log(hexa().resp, path)
    assert load_log(path) == hexa().resp


def test_log_from_engine_refuses_what_a_server_would_not_write() -> None:
    match = new_match("triathlon", seed=SEED)
    with pytest.raises(ValueError, match="has not ended"):
        log_from_engine(match, SEED, "m")
    done = base("triathlon", 3).match
    with pytest.raises(ValueError, match="not an action"):
        log_from_engine(done, SEED, "m", timed_out=[0])
    with pytest.raises(ValueError, match="names for 3 seats"):
        log_from_engine(done, SEED, "m", names=["a"])


def test_the_command_reports_a_clean_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hexathlon.json"
    save_log(hexa().resp, path)
    assert main(["audit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "hexathlon, 4 players" in out
    assert "seats    0: ann, 1: bob, 2: cy, 3: di" in out
    totals = ", ".join(f"{n} {t}" for n, t in zip(NAMES, hexa().match.totals, strict=False))
    assert f"totals   {totals}" in out
    assert out.count("[ok  ]") == len(CHECKS)
    assert out.rstrip().endswith("CLEAN: every check passed")


def test_the_command_reports_the_first_discrepancy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mutated, _, seq = MUTATIONS["re-signed: a trick winner"]()
    path = tmp_path / "forged.json"
    save_log(mutated, path)
    assert main(["audit", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"FAILED at seq {seq}: the log records: trick" in out
    assert "[FAIL] replay" in out and "[--  ] server" in out and out.count("[ok  ]") == 6
    assert main(["audit", str(path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [c["status"] for c in report["checks"]] == ["passed"] * 6 + [
        "failed",
        "skipped",
        "skipped",
        "skipped",
    ]
    assert report["failure"]["seq"] == seq and report["failure"]["check"] == "replay"


def test_the_command_checks_a_trusted_head(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.pb"
    save_log(hexa().resp, path)
    assert main(["audit", str(path), "--head", hexa().resp.entries[-1].hash.hex()]) == 0
    assert main(["audit", str(path), "--head", "00" * 32]) == 1
    assert "not at the trusted head" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.pb", None, "no such file"),
        ("garbage.pb", b"\xff\xff\xff\xff", "not a match log"),
        ("empty.pb", b"", "not a match log"),
        ("broken.json", b'{"match": ', "bad JSON"),
        ("other.json", b'{"games": []}', "not a match log"),
        ("binary.json", b"\x80\x81", "bad JSON"),
    ],
)
def test_unreadable_input_exits_2_with_a_clear_message(
    name: str,
    content: bytes | None,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    assert main(["audit", str(path)]) == 2
    assert message in capsys.readouterr().err
    with pytest.raises(LogUnavailable, match=message):
        load_log(path)
    assert main(["audit", str(path), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["ok"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give LOGFILE, or both --server"),
        (["x.pb", "--server", "h:1", "--match", "m"], "not both"),
        (["--server", "127.0.0.1:1"], "give LOGFILE, or both --server"),
        (["x.pb", "--head", "abc"], "64 hex digits"),
    ],
)
def test_misuse_exits_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["audit", *args])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_an_unreachable_server_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--server", "127.0.0.1:1", "--match", "m"]) == 2
    err = capsys.readouterr().err
    assert "cannot fetch the log of match 'm'" in err and "UNAVAILABLE" in err


def test_report_fields_are_in_check_order() -> None:
    assert [name for name, _ in CHECKS] == [
        "decode", "sequence", "chain", "start", "seed", "reveal", "replay", "server", "faults",
        "result",
    ]  # fmt: skip
    assert isinstance(audit_log(hexa().resp), AuditReport)


# -- a real server ---------------------------------------------------------------------------


@pytest.mark.integration
def test_real_server_logs_audit_clean_from_the_wire_and_from_a_file(
    tmp_path: Path, server_process: ServerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    """A match played through the API, and one played by the clock alone (every move a
    time-out), both audit clean; the server's refusals exit 2."""
    import asyncio

    import grpc

    from cardarena.clients.logs import fetch_log

    from .. import calls
    from ..calls import Table, stub

    async def create(api: Any, game: str, move_ms: int, **options: Any) -> tuple[str, list[str]]:
        struct = struct_pb2.Struct()
        struct.update(options)
        request = spb.CreateMatchRequest(
            game=game, players=3, options=struct, time_control=spb.TimeControl(move_ms=move_ms)
        )
        match_id = (await api.CreateMatch(request, timeout=10)).match.match_id
        joins = [spb.JoinMatchRequest(match_id=match_id, name=f"bot{s}") for s in range(3)]
        return match_id, [(await api.JoinMatch(j, timeout=10)).token for j in joins]

    async def scenario(address: str) -> tuple[str, str, str]:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            played, tokens = await create(api, "pentathlon", 0, rounds=["pass", "fan_tan"])
            await calls.play_out(api, Table(played, tokens))
            clocked, _ = await create(api, "triathlon", 30, max_deals=1)
            running, _ = await create(api, "crazy_sixes", 0)

            async def clock_finished() -> bool:
                info = await api.GetMatch(spb.GetMatchRequest(match_id=clocked), timeout=10)
                return info.match.status == spb.MATCH_STATUS_ENDED

            await eventually(clock_finished, within=60, what="the clock to finish the match")
            return played, clocked, running

    played, clocked, running = asyncio.run(scenario(server_process.address))
    for match_id in (played, clocked):
        assert main(["audit", "--server", server_process.address, "--match", match_id]) == 0
        assert "CLEAN: every check passed" in capsys.readouterr().out
    resp = asyncio.run(fetch_log(server_process.address, clocked))
    kinds = [pb.Event.FromString(e.event).WhichOneof("kind") for e in resp.entries]
    assert kinds.count("timed_out") >= 42, "every move of the clocked match timed out"
    path = tmp_path / "clocked.json"
    save_log(resp, path)
    assert main(["audit", str(path)]) == 0
    assert main(["replay", "--server", server_process.address, "--match", played]) == 0
    assert "audit: clean" in capsys.readouterr().out
    assert main(["audit", "--server", server_process.address, "--match", running]) == 2
    assert "FAILED_PRECONDITION" in capsys.readouterr().err
    assert main(["audit", "--server", server_process.address, "--match", "nope"]) == 2
    assert "NOT_FOUND" in capsys.readouterr().err


@pytest.mark.integration
def test_real_server_cancelled_matches_audit_clean(server_process: ServerProcess) -> None:
    """A match cancelled by its creator while waiting (one seat reserved, one free) and one
    cancelled mid-play, with a clock: both logs end MatchCancelled, SeedRevealed and audit
    clean against the last hash the server reported, every MatchInfo field checked."""
    import asyncio

    import grpc

    from cardarena.clients.logs import fetch_log

    from ..calls import Table, act_times, auth, stub

    creator, joiner = "c" * 40, "j" * 40

    async def create(api: Any, game: str, move_ms: int) -> str:
        request = spb.CreateMatchRequest(
            game=game,
            players=3,
            time_control=spb.TimeControl(move_ms=move_ms),
            reserved_seats=[spb.SeatReservation(seat=1, join_secret=joiner)],
            creator_secret=creator,
        )
        return str((await api.CreateMatch(request, timeout=10)).match.match_id)

    async def scenario(address: str) -> list[tuple[str, bytes]]:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            waiting = await create(api, "triathlon", 0)
            await api.JoinMatch(spb.JoinMatchRequest(match_id=waiting, name="ann"), timeout=10)
            playing = await create(api, "pentathlon", 60_000)
            tokens = []
            for seat in range(3):
                join = spb.JoinMatchRequest(
                    match_id=playing,
                    seat=seat,
                    name=f"bot{seat}",
                    join_secret=joiner if seat == 1 else "",
                )
                tokens.append((await api.JoinMatch(join, timeout=10)).token)
            await act_times(api, Table(playing, tokens), 12)
            heads = []
            for match_id in (waiting, playing):
                cancel = spb.CancelMatchRequest(match_id=match_id, reason="rain")
                done = await api.CancelMatch(cancel, metadata=auth(creator), timeout=10)
                assert done.match.cancelled and done.match.status == spb.MATCH_STATUS_ENDED
                heads.append((match_id, done.match.last_hash))
            return heads

    for match_id, head in asyncio.run(scenario(server_process.address)):
        resp = asyncio.run(fetch_log(server_process.address, match_id))
        kinds = [pb.Event.FromString(e.event).WhichOneof("kind") for e in resp.entries]
        assert kinds[-2:] == ["match_cancelled", "seed_revealed"] and "match_ended" not in kinds
        started = pb.Event.FromString(resp.entries[0].event).match_started
        assert list(started.reserved_seats) == [False, True, False]
        report = audit_log(resp, match_id=match_id, head=head)
        assert report.ok, report.failure
        assert report.winners == []
