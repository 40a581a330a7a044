"""Mutations of the play and its results, re-signed so that only the rules can tell: cards,
tricks, scores, totals and winners, time-outs, round kinds and trump, each game's own events.
"""

from __future__ import annotations

from collections.abc import Callable

from cardarena.engine import AUDITOR, view
from cardarena.engine.match import action_of
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from .audit_support import (
    Expected,
    a_play,
    base,
    clone,
    edit,
    edit_nth,
    forge,
    hexa,
    mutation,
    positions,
)


def _next_seat(kind: str) -> Callable[[pb.Event], None]:
    """The change of an event of ``kind`` to the next seat of four."""

    def change(event: pb.Event) -> None:
        part = getattr(event, kind)
        part.seat = (part.seat + 1) % 4

    return change


def _numerator(kind: str, scores: str, seat: int, numerator: int) -> Callable[[pb.Event], None]:
    """The change of ``seat``'s score in the list ``scores`` of an event of ``kind``."""

    def change(event: pb.Event) -> None:
        getattr(getattr(event, kind), scores)[seat].numerator = numerator

    return change


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
    return edit_nth("trick_won", 3, _next_seat("trick_won"), "replay")


@mutation("re-signed: a round score")
def _round_score() -> Expected:
    return edit_nth("round_scored", 1, _numerator("round_scored", "scores", 0, 99), "replay")


@mutation("re-signed: a running total")
def _running_total() -> Expected:
    return edit_nth("round_scored", 2, _numerator("round_scored", "totals", 1, -7), "replay")


@mutation("re-signed: a final total")
def _final_total() -> Expected:
    return edit_nth("match_ended", 0, _numerator("match_ended", "totals", 2, 0), "replay")


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


@mutation("re-signed: a time-out of the wrong seat")
def _timeout_seat() -> Expected:
    return edit_nth("timed_out", 0, _next_seat("timed_out"), "server")


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


@mutation("re-signed: a time-out in a match without a clock")
def _timeout_no_clock() -> Expected:
    b = hexa()
    out = edit(b, 1, lambda e: setattr(e.match_started, "move_ms", 0))
    out.match.time_control.move_ms = 0
    return out, "server", b.seqs("timed_out")[0]


@mutation("re-signed: a round's kind")
def _round_kind() -> Expected:
    return edit_nth(
        "round_started", 1, lambda e: setattr(e.round_started, "kind", "queens"), "replay"
    )


@mutation("re-signed: a forced pass recorded as chosen")
def _pass_reason() -> Expected:
    b = hexa()
    k = b.seqs("passed", lambda e: e.passed.reason == pb.PASS_REASON_FORCED)[0]
    return edit(b, k, lambda e: setattr(e.passed, "reason", pb.PASS_REASON_CHOSEN)), "replay", k


@mutation("re-signed: a trump draw")
def _trump_draw() -> Expected:
    return edit_nth(
        "trump_drawn",
        0,
        lambda e: setattr(e.trump_drawn, "suit", e.trump_drawn.suit % 4 + 1),
        "replay",
    )


@mutation("re-signed: dead cards (Crazy Sixes)")
def _dead_cards() -> Expected:
    b = base("crazy_sixes", 4)
    k = b.seqs("cards_dead")[0]
    return edit(b, k, _next_seat("cards_dead")), "replay", k


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
