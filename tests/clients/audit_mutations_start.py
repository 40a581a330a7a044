"""Mutations of what a match starts from and commits to: the dealt hands, the seed, its
commitment and reveal; MatchStarted's clock, seats, names, match id, options and game.
"""

from __future__ import annotations

from google.protobuf import struct_pb2

from cardarena.clients.audit import seed_commitment
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from .audit_support import SEED, Expected, clone, edit, edit_nth, forge, hexa, mutation


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
    return edit_nth("seat_joined", 2, lambda e: setattr(e.seat_joined, "name", "mallory"), "start")


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


@mutation("MatchInfo's status")
def _status() -> Expected:
    out = clone(hexa().resp)
    out.match.status = spb.MATCH_STATUS_RUNNING
    return out, "start", hexa().last
