"""Translation between the engine's values and the cardarena.v1 messages, both ways.

Decoding is strict: anything a client sends that does not name a real card, suit or action
raises :class:`ValueError` with a message fit for an INVALID_ARGUMENT status.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

from google.protobuf import json_format, struct_pb2

from cardarena.engine import PASS, CardSet, TableView, card_code, choose_trump, exclude
from cardarena.engine import events as ev
from cardarena.engine.actions import CHOOSE_TRUMP, EXCLUDE
from cardarena.engine.cards import JOKERS, cards_of, french, rank_of, spanish, suit_of
from cardarena.engine.jokers import NO_NAMES
from cardarena.engine.views import SPECTATOR, Viewer, can_see, sees_pass_reason
from cardarena.v1 import game_pb2 as pb

JOKER_PB = pb.SUIT_JOKER

SERVER_KINDS: Final = frozenset(
    {
        "seat_joined",
        "timed_out",
        "seed_revealed",
        "match_cancelled",
        "seat_faulted",
        "seat_forfeited",
    }
)
"""The Event kinds the server writes on its own account (seats, clocks, the reveal, a
cancellation, faults and forfeits): the rules know nothing of them, so :func:`event_from_pb`
gives ``None``."""


def suit_to_pb(suit: int) -> pb.Suit.ValueType:
    return pb.Suit.ValueType(suit + 1)


def suit_from_pb(suit: int, *, french_only: bool = False) -> int:
    last = pb.SUIT_SPADES if french_only else pb.SUIT_BASTOS
    if not pb.SUIT_CLUBS <= suit <= last:
        allowed = "clubs, diamonds, hearts or spades" if french_only else "a suit of either deck"
        raise ValueError(f"suit {suit} is not {allowed}")
    return suit - 1


_CARD_FIELDS: dict[int, tuple[pb.Suit.ValueType, int, str]] = {}
"""Each card's (suit, rank, code) once worked out: a log or a stream encodes the same few
dozen cards over and over, and the arithmetic cost as much as building the message."""


def card_to_pb(card: int) -> pb.Card:
    fields = _CARD_FIELDS.get(card)
    if fields is None:
        if card in JOKERS:  # the three Jokers are told apart by rank 1..3 so deals stay exact
            fields = (JOKER_PB, card - JOKERS[0] + 1, "JK")
        else:
            fields = (suit_to_pb(suit_of(card)), rank_of(card), card_code(card))
        _CARD_FIELDS[card] = fields
    suit, rank, code = fields
    return pb.Card(suit=suit, rank=rank, code=code)


def card_from_pb(card: pb.Card) -> int:
    """The engine id of a card message; the ``code`` field is informative and not read."""
    suit, rank = card.suit, card.rank
    known = _CARD_IDS.get((suit, rank))
    if known is not None:
        return known
    if suit == JOKER_PB and rank <= len(JOKERS):
        known = JOKERS[max(rank, 1) - 1]
    elif pb.SUIT_CLUBS <= suit <= pb.SUIT_SPADES and 2 <= rank <= 14:
        known = french(suit - 1, rank)
    elif pb.SUIT_OROS <= suit <= pb.SUIT_BASTOS and 1 <= rank <= 12:
        known = spanish(suit - 1, rank)
    else:
        raise ValueError(f"no card has suit {suit} and rank {rank}")
    _CARD_IDS[(suit, rank)] = known
    return known


_CARD_IDS: dict[tuple[int, int], int] = {}
"""Each (suit, rank) of a card once worked out (only valid ones are kept)."""


def cards_to_pb(mask: int) -> list[pb.Card]:
    return [card_to_pb(c) for c in cards_of(mask)]


def action_to_pb(action: int) -> pb.Action:
    if action == PASS:
        out = pb.Action()
        getattr(out, "pass").SetInParent()  # `pass` is a Python keyword
        return out
    if EXCLUDE <= action < CHOOSE_TRUMP:
        return pb.Action(exclude_suit=suit_to_pb(action - EXCLUDE))
    if action >= CHOOSE_TRUMP:
        return pb.Action(choose_trump=suit_to_pb(action - CHOOSE_TRUMP))
    return pb.Action(play=card_to_pb(action))


def action_from_pb(action: pb.Action) -> int:
    kind = action.WhichOneof("kind")
    if kind == "play":
        return card_from_pb(action.play)
    if kind == "pass":
        return PASS
    if kind == "exclude_suit":
        return exclude(suit_from_pb(action.exclude_suit, french_only=True))
    if kind == "choose_trump":
        return choose_trump(suit_from_pb(action.choose_trump, french_only=True))
    raise ValueError("the action is empty: set one of play, pass, exclude_suit, choose_trump")


def score_to_pb(score: int | Fraction) -> pb.Score:
    value = Fraction(score)
    return pb.Score(numerator=value.numerator, denominator=value.denominator)


def score_from_pb(score: pb.Score) -> int | Fraction:
    value = Fraction(score.numerator, score.denominator or 1)
    return value.numerator if value.denominator == 1 else value


def struct_of(value: Mapping[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(dict(value))
    return out


def dict_of(value: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as plain JSON values, whole numbers as ``int``: a Struct carries every number
    as a double, and options are whole numbers (so a bot reads ``"first_dealer": 0``, not
    ``0.0``)."""
    plain: dict[str, Any] = _whole(json_format.MessageToDict(value), 2**53)
    return plain


def _whole(value: Any, below: float) -> Any:
    """``value`` with each whole float of magnitude under ``below`` as an ``int``, through its
    dicts and lists. From ``2**53`` on every double is whole, so :func:`dict_of` keeps those
    as sent; a MatchStarted's options are the engine's own, all ints (``below=math.inf``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < below:
        return int(value)
    if isinstance(value, dict):
        return {key: _whole(item, below) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole(item, below) for item in value]
    return value


def _hand_to_pb(hand: CardSet | None, size: int) -> pb.Hand:
    if hand is None:
        return pb.Hand(hidden=True, size=size)
    return pb.Hand(size=len(hand), cards=[card_to_pb(c) for c in hand])


def _pass_reason(forced: bool | None) -> pb.PassReason.ValueType:
    if forced is None:
        return pb.PASS_REASON_HIDDEN
    return pb.PASS_REASON_FORCED if forced else pb.PASS_REASON_CHOSEN


_PLAYED: dict[tuple[int, int], pb.CardPlayed] = {}
"""Each seat's play of each card as a message, made once per process (a few hundred at most)
and only ever copied into an entry: most of a match's entries are plays."""

_CARD_MESSAGES: dict[int, pb.Card] = {}
"""Each card as a message, made once per process and only ever copied into another."""


def _card_message(card: int) -> pb.Card:
    made = _CARD_MESSAGES.get(card)
    if made is None:
        made = _CARD_MESSAGES[card] = card_to_pb(card)
    return made


def event_to_pb(
    event: ev.Event,
    seq: int,
    match_id: str,
    *,
    move_ms: int = 0,
    reserved_seats: Sequence[bool] = (),
    forfeit_after: int = 0,
    tournament_id: str = "",
    clocks: Mapping[str, int] | None = None,
) -> pb.Event:
    """One engine event as a log entry at ``seq``.

    ``move_ms``, ``reserved_seats``, ``forfeit_after``, ``tournament_id`` and ``clocks``
    (``bank_ms``, ``increment_ms``, ``round_ms``) are the match's settings that the rules do
    not know (the clock, which seats were reserved, the fault policy, the tournament): only a
    MatchStarted carries them, so that they are hashed with the log; every other event
    ignores them.

    The two entries of nearly every action, a play and a trick's close, are made from
    messages made once (a quarter of the time of building each afresh); the same fields, so
    the same bytes (``tests/proto/test_codec.py`` compares them with :func:`_event_to_pb`).
    """
    if type(event) is ev.CardPlayed:
        key = (event.seat, event.card)
        message = _PLAYED.get(key)
        if message is None:
            message = _PLAYED[key] = pb.CardPlayed(seat=event.seat, card=_card_message(event.card))
        out = pb.Event(seq=seq)
        out.card_played.MergeFrom(message)
        return out
    if type(event) is ev.TrickWon:
        out = pb.Event(seq=seq)
        trick = out.trick_won
        trick.trick, trick.leader, trick.seat = event.trick, event.leader, event.seat
        trick.cards.extend([_card_message(c) for c in event.cards])
        return out
    return _event_to_pb(
        event,
        seq,
        match_id,
        move_ms=move_ms,
        reserved_seats=reserved_seats,
        forfeit_after=forfeit_after,
        tournament_id=tournament_id,
        clocks=clocks,
    )


def _event_to_pb(
    event: ev.Event,
    seq: int,
    match_id: str,
    *,
    move_ms: int,
    reserved_seats: Sequence[bool],
    forfeit_after: int,
    tournament_id: str,
    clocks: Mapping[str, int] | None,
) -> pb.Event:
    """:func:`event_to_pb`, every kind built afresh."""
    out = pb.Event(seq=seq)
    match event:
        case ev.MatchStarted():
            out.match_started.CopyFrom(
                pb.MatchStarted(
                    match_id=match_id,
                    game=event.game,
                    players=event.players,
                    options=struct_of(event.options),
                    seed_commitment=event.commitment,
                    move_ms=move_ms,
                    reserved_seats=list(reserved_seats),
                    forfeit_after=forfeit_after,
                    tournament_id=tournament_id,
                    **(clocks or {}),
                )
            )
        case ev.DealerDrawn():
            out.dealer_drawn.seat = event.seat
        case ev.RoundStarted():
            out.round_started.CopyFrom(
                pb.RoundStarted(
                    round=event.round,
                    kind=event.kind,
                    dealer=event.dealer,
                    trump=suit_to_pb(event.trump)
                    if event.trump is not None
                    else pb.SUIT_UNSPECIFIED,
                    multiplier=event.multiplier,
                    voluntary_pass=event.voluntary_pass,
                )
            )
        case ev.TrumpDrawn():
            out.trump_drawn.CopyFrom(pb.TrumpDrawn(round=event.round, suit=suit_to_pb(event.suit)))
        case ev.Dealt():
            hands = [_hand_to_pb(h, s) for h, s in zip(event.hands, event.hand_sizes, strict=True)]
            out.dealt.CopyFrom(pb.Dealt(round=event.round, hands=hands))
        case ev.SuitExcluded():
            out.suit_excluded.CopyFrom(
                pb.SuitExcluded(seat=event.seat, suit=suit_to_pb(event.suit))
            )
        case ev.TrumpChosen():
            out.trump_chosen.CopyFrom(pb.TrumpChosen(seat=event.seat, suit=suit_to_pb(event.suit)))
        case ev.CardPlayed():
            out.card_played.CopyFrom(pb.CardPlayed(seat=event.seat, card=card_to_pb(event.card)))
        case ev.Passed():
            out.passed.CopyFrom(pb.Passed(seat=event.seat, reason=_pass_reason(event.forced)))
        case ev.TrickWon():
            out.trick_won.CopyFrom(
                pb.TrickWon(
                    trick=event.trick,
                    leader=event.leader,
                    cards=[card_to_pb(c) for c in event.cards],
                    seat=event.seat,
                )
            )
        case ev.CardsDead():
            out.cards_dead.CopyFrom(
                pb.CardsDead(seat=event.seat, cards=cards_to_pb(event.cards.mask))
            )
        case ev.FeatsEarned():
            seats = [pb.SeatFeats(feats=list(f)) for f in event.feats]
            out.feats_earned.CopyFrom(pb.FeatsEarned(round=event.round, seats=seats))
        case ev.RoundScored():
            out.round_scored.CopyFrom(
                pb.RoundScored(
                    round=event.round,
                    scores=[score_to_pb(s) for s in event.scores],
                    totals=[score_to_pb(t) for t in event.totals],
                )
            )
        case ev.MatchEnded():
            out.match_ended.CopyFrom(
                pb.MatchEnded(
                    totals=[score_to_pb(t) for t in event.totals], winners=list(event.winners)
                )
            )
    return out


def _mask(cards: Any) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card_from_pb(card)
    return mask


def _suit_or_none(suit: int) -> int | None:
    return None if suit == pb.SUIT_UNSPECIFIED else suit_from_pb(suit)


def event_from_pb(event: pb.Event) -> ev.Event | None:
    """The engine event a log entry records; ``None`` for the server's own entries
    (:data:`SERVER_KINDS`: seats joining, time-outs, the seed reveal, a cancellation).
    A MatchStarted's ``move_ms`` and ``reserved_seats`` are not part of the engine's event:
    read them from the message. Raises ``ValueError`` on nonsense."""
    kind = event.WhichOneof("kind")
    if kind == "match_started":
        m = event.match_started
        return ev.MatchStarted(
            m.game,
            m.players,
            _whole(json_format.MessageToDict(m.options), math.inf),
            m.seed_commitment,
        )
    if kind == "dealer_drawn":
        return ev.DealerDrawn(event.dealer_drawn.seat)
    if kind == "round_started":
        r = event.round_started
        return ev.RoundStarted(
            r.round, r.kind, r.dealer, _suit_or_none(r.trump), r.multiplier, r.voluntary_pass
        )
    if kind == "trump_drawn":
        return ev.TrumpDrawn(event.trump_drawn.round, suit_from_pb(event.trump_drawn.suit))
    if kind == "dealt":
        d = event.dealt
        hands = tuple(None if h.hidden else CardSet(_mask(h.cards)) for h in d.hands)
        return ev.Dealt(d.round, hands, tuple(h.size for h in d.hands))
    if kind == "suit_excluded":
        return ev.SuitExcluded(event.suit_excluded.seat, suit_from_pb(event.suit_excluded.suit))
    if kind == "trump_chosen":
        return ev.TrumpChosen(event.trump_chosen.seat, suit_from_pb(event.trump_chosen.suit))
    if kind == "card_played":
        return ev.CardPlayed(event.card_played.seat, card_from_pb(event.card_played.card))
    if kind == "passed":
        reason = event.passed.reason
        forced = None if reason == pb.PASS_REASON_HIDDEN else reason == pb.PASS_REASON_FORCED
        return ev.Passed(event.passed.seat, forced)
    if kind == "trick_won":
        t = event.trick_won
        return ev.TrickWon(t.trick, t.leader, tuple(card_from_pb(c) for c in t.cards), t.seat)
    if kind == "cards_dead":
        return ev.CardsDead(event.cards_dead.seat, CardSet(_mask(event.cards_dead.cards)))
    if kind == "feats_earned":
        f = event.feats_earned
        return ev.FeatsEarned(f.round, tuple(tuple(s.feats) for s in f.seats))
    if kind == "round_scored":
        scored = event.round_scored
        return ev.RoundScored(
            scored.round,
            tuple(score_from_pb(s) for s in scored.scores),
            tuple(score_from_pb(s) for s in scored.totals),
        )
    if kind == "match_ended":
        ended = event.match_ended
        return ev.MatchEnded(tuple(score_from_pb(s) for s in ended.totals), tuple(ended.winners))
    if kind in SERVER_KINDS:
        return None
    raise ValueError(f"event {event.seq} has no kind")


def project_pb(
    event: pb.Event,
    seat: int | None,
    *,
    voluntary_pass: bool,
    names: Mapping[int, int] = NO_NAMES,
) -> pb.Event:
    """``event`` as ``seat`` (``None``: a spectator) may see it, by the engine's own rules
    (``views.can_see``, ``views.sees_pass_reason``): other hands hidden, and the
    reason of a pass hidden where voluntary passes make it private, and a refused action
    shown only to the seat that sent it (that an action was refused says something about the
    hand that sent it); the Jokers it shows under the reader's ``names`` for them
    (``cardarena.engine.jokers``). Every other event (a MatchStarted's settings, a
    MatchCancelled's reason included) is public, and returned as it is."""
    viewer: Viewer = SPECTATOR if seat is None else seat
    kind = event.WhichOneof("kind")
    if kind == "dealt":
        out = pb.Event()
        out.CopyFrom(event)
        for index, hand in enumerate(out.dealt.hands):
            if not can_see(viewer, index):
                hand.hidden = True
                del hand.cards[:]
            elif names:
                _rename(hand.cards, names)
        return out
    if names and kind in ("card_played", "trick_won"):
        return _renamed(event, kind, names)
    if (
        kind == "passed"
        and not sees_pass_reason(viewer, voluntary_pass)
        and event.passed.reason != pb.PASS_REASON_HIDDEN
    ):
        out = pb.Event()
        out.CopyFrom(event)
        out.passed.reason = pb.PASS_REASON_HIDDEN
        return out
    if kind == "seat_faulted" and event.seat_faulted.seat != seat:
        fault = event.seat_faulted
        if fault.HasField("action") or fault.detail:
            return pb.Event(
                seq=event.seq, seat_faulted=pb.SeatFaulted(seat=fault.seat, kind=fault.kind)
            )
    return event


def _renamed(event: pb.Event, kind: str, names: Mapping[int, int]) -> pb.Event:
    """A CardPlayed or TrickWon with its Jokers renamed; itself if that changes nothing."""
    cards = [event.card_played.card] if kind == "card_played" else event.trick_won.cards
    if all(c.suit != JOKER_PB or names.get(k := card_from_pb(c), k) == k for c in cards):
        return event
    out = pb.Event()
    out.CopyFrom(event)
    _rename([out.card_played.card] if kind == "card_played" else out.trick_won.cards, names)
    return out


def _rename(cards: Any, names: Mapping[int, int]) -> None:
    """Rename the Jokers among ``cards`` (a repeated Card field) in place."""
    for card in cards:
        if card.suit == JOKER_PB:
            known = card_from_pb(card)
            card.CopyFrom(card_to_pb(names.get(known, known)))


def snapshot_to_pb(
    view: TableView, *, match_id: str, seq: int, commitment: str, deadline_ms: int
) -> pb.Snapshot:
    snap = pb.Snapshot(
        match_id=match_id,
        game=view.game,
        players=view.players,
        seq=seq,
        round=max(view.round, 0),
        round_kind=view.kind or "",
        dealer=view.dealer,
        trump=suit_to_pb(view.trump) if view.trump is not None else pb.SUIT_UNSPECIFIED,
        hands=[_hand_to_pb(h, s) for h, s in zip(view.hands, view.hand_sizes, strict=True)],
        legal_actions=[action_to_pb(a) for a in view.legal_actions],
        totals=[score_to_pb(t) for t in view.totals],
        over=view.over,
        winners=list(view.winners),
        tricks_won=list(view.tricks_won),
        taken=[pb.CardList(cards=cards_to_pb(t.mask)) for t in view.taken],
        excluded_suits=[suit_to_pb(s) for s in view.excluded_suits],
        table=cards_to_pb(view.table.mask),
        passes=list(view.passes),
        dead=[pb.CardList(cards=cards_to_pb(d.mask)) for d in view.dead],
        placed=list(view.placed),
        seed_commitment=commitment,
        deadline_unix_ms=deadline_ms,
    )
    if isinstance(view.viewer, int):
        snap.viewer_seat = view.viewer
    if view.to_act is not None:
        snap.to_act = view.to_act
    if view.trick_leader is not None:
        snap.trick.CopyFrom(
            pb.Trick(leader=view.trick_leader, cards=[card_to_pb(c) for c in view.trick])
        )
    return snap
