"""Canonical payloads put together from their pieces and read back piece by piece.

The payloads a log has most of that never repeat (a trick, a deal, a round's scores, dead
cards, the end; a card played, the first time) have canonical bytes that are a concatenation
of pieces in a fixed order: :func:`put_together` writes them from the cards' and scores' own
encodings (pinned to the codec by tests), and :func:`assemble` reads exactly that
concatenation back, with no protobuf parse, conversion or re-encoding; bytes in any other
layout decline, and the audit's full check (:mod:`.canonical`) gives the verdict.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any, Final

from google.protobuf.message import DecodeError

from cardarena.engine import CardSet
from cardarena.engine import events as ev
from cardarena.engine.cards import MAX_CARD, is_card
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

_PIECES_MAX: Final = 100_000
"""Score pieces remembered at most (a forger's log cannot grow the memo without bound)."""


def forget() -> None:
    """Empty the memo of score pieces (the cards' are fixed, worked out once)."""
    _SCORE_PIECES.clear()


def seq_prefix(seq: int) -> bytes:
    """The canonical encoding of ``seq`` as field 1 of an Event: tag 0x08, then its varint."""
    if seq < len(PREFIXES):
        return PREFIXES[seq]
    return b"\x08" + _varint(seq)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _card_field(card: int, tag: int = 0x1A) -> bytes:
    """A field (field 3 by default) holding ``card``'s canonical Card message: its tag,
    length and bytes."""
    known = _CARDS.get((tag, card))
    if known is None:
        encoded = codec.card_to_pb(card).SerializeToString(deterministic=True)
        known = _CARDS[(tag, card)] = bytes([tag]) + _varint(len(encoded)) + encoded
    return known


_CARDS: dict[tuple[int, int], bytes] = {}
PREFIXES: Final = [b"\x08" + _varint(seq) for seq in range(1 << 14)]
"""The seq prefixes of the first 16384 entries (a long match has a few thousand)."""


def _cards(cards: Iterable[int], tag: int = 0x1A) -> bytes:
    """A repeated field of Card messages: field 3 as TrickWon and Hand hold them, or another."""
    return b"".join(_card_field(card, tag) for card in cards)


def _scalar(tag: int, value: int) -> bytes:
    return bytes([tag]) + _varint(value) if value else b""


def _score_field(tag: bytes, score: int | Fraction) -> bytes:
    """A Score message as field ``tag``: numerator 1 (int64, two's complement when below 0,
    not written when 0), denominator 2."""
    known = _SCORES.get((tag, score))
    if known is None:
        value = Fraction(score)
        body = _scalar(0x08, value.numerator & _INT64) + _scalar(0x10, value.denominator)
        known = _SCORES[(tag, score)] = tag + _varint(len(body)) + body
    return known


_SCORES: dict[tuple[bytes, int | Fraction], bytes] = {}
_INT64: Final = (1 << 64) - 1


Assembled = ev.TrickWon | ev.Dealt | ev.RoundScored | ev.CardsDead | ev.MatchEnded | ev.CardPlayed
"""The kinds :func:`put_together` encodes."""


def put_together(seq: int, event: Assembled) -> bytes:
    """The canonical encoding of ``event`` at ``seq`` (> 0), put together from its cards' own:
    the payloads a log has most of that never repeat (a test pins this to the codec). Field
    numbers of game.proto: Event.seq 1, Event.dealt 15, Event.card_played 18, Event.trick_won
    20, Event.cards_dead 21, Event.round_scored 23, Event.match_ended 24; TrickWon.trick 1,
    leader 2, cards 3, seat 4; Dealt.round 1, hands 2; Hand.hidden 1, size 2, cards 3;
    CardsDead.seat 1, cards 2; RoundScored.round 1, scores 2, totals 3; MatchEnded.totals 1,
    winners 2 (packed: one length, then each varint); CardPlayed.seat 1, card 2. A scalar that
    is 0 (false) is not written, nor an empty packed field; a message field is, even when
    empty."""
    if isinstance(event, ev.CardPlayed):
        body = _scalar(0x08, event.seat) + _card_field(event.card, 0x12)
        tag = b"\x92\x01"
    elif isinstance(event, ev.TrickWon):
        body = (
            _scalar(0x08, event.trick)
            + _scalar(0x10, event.leader)
            + _cards(event.cards)
            + _scalar(0x20, event.seat)
        )
        tag = b"\xa2\x01"
    elif isinstance(event, ev.RoundScored):
        body = (
            _scalar(0x08, event.round)
            + b"".join(_score_field(b"\x12", score) for score in event.scores)
            + b"".join(_score_field(b"\x1a", total) for total in event.totals)
        )
        tag = b"\xba\x01"
    elif isinstance(event, ev.CardsDead):
        body = _scalar(0x08, event.seat) + _cards(event.cards, 0x12)
        tag = b"\xaa\x01"
    elif isinstance(event, ev.MatchEnded):
        body = b"".join(_score_field(b"\x0a", total) for total in event.totals)
        if event.winners:
            packed = b"".join(_varint(winner) for winner in event.winners)
            body += b"\x12" + _varint(len(packed)) + packed
        tag = b"\xc2\x01"
    else:
        body = _scalar(0x08, event.round)
        for hand, size in zip(event.hands, event.hand_sizes, strict=True):
            held = (
                b"\x08\x01" + _scalar(0x10, size)
                if hand is None
                else _scalar(0x10, len(hand)) + _cards(hand)
            )
            body += b"\x12" + _varint(len(held)) + held
        tag = b"\x7a"
    return seq_prefix(seq) + tag + _varint(len(body)) + body


class _Decline(Exception):
    """Not the one layout :func:`assemble` reads (not canonical, or not simply so)."""


def assemble(raw: bytes, at: int) -> tuple[str, Assembled] | None:
    """What ``raw`` holds if from ``at`` (just after its seq's canonical prefix) it is exactly
    the canonical payload of one of the :data:`Assembled` kinds; ``None`` for any other
    bytes, which then take the full check.

    The inverse of :func:`put_together`, read piece by piece without a protobuf parse: each
    field must come in put_together's order and in its form (a scalar only when not 0, in
    one byte; a length as its shortest varint, up to where its message ends; cards of a set
    in ascending order; a hand's size its number of cards), and each card or score must be a
    piece :func:`put_together` writes (:func:`_piece`), so the bytes read are exactly those
    put_together writes for the event returned, every byte accounted for. Anything else
    declines (a forger's bytes are never guessed at), and the full check says what is wrong.
    A test holds this to put_together and to the full check over mutated payloads."""
    try:
        tag = raw[at]
        if tag == 0x7A:
            return "dealt", _dealt(raw, at + 1)
        if raw[at + 1] != 0x01:
            return None
        if tag == 0xA2:
            return "trick_won", _trick_won(raw, at + 2)
        if tag == 0x92:
            return "card_played", _card_played(raw, at + 2)
        if tag == 0xC2:
            return "match_ended", _match_ended(raw, at + 2)
        if tag == 0xBA:
            return "round_scored", _round_scored(raw, at + 2)
        if tag == 0xAA:
            return "cards_dead", _cards_dead(raw, at + 2)
    except (_Decline, IndexError):
        return None
    return None


def _body(raw: bytes, i: int) -> tuple[int, int]:
    """Where the payload's message starts and ends: its length at ``i`` must run to the end
    of the entry."""
    i, end = _length(raw, i, len(raw))
    if end != len(raw):
        raise _Decline
    return i, end


def _field(raw: bytes, i: int, end: int, tag: int) -> tuple[int, int]:
    """A small scalar field ``tag`` at ``i``, if there (0, the default, is not written): its
    value and where the next field starts."""
    if i < end and raw[i] == tag:
        return _small(raw, i + 1), i + 2
    return 0, i


def _length(raw: bytes, i: int, end: int) -> tuple[int, int]:
    """A length at ``i`` in its shortest varint (one or two bytes) that stays within ``end``:
    where the message it opens starts and ends."""
    low = raw[i]
    if low < 0x80:
        start, size = i + 1, low
    else:
        high = raw[i + 1]
        if not 0 < high < 0x80:
            raise _Decline
        start, size = i + 2, (low & 0x7F) | high << 7
    if start + size > end:
        raise _Decline
    return start, start + size


def _small(raw: bytes, i: int) -> int:
    """A scalar's value at ``i``: one byte, not 0 (a 0 is not written)."""
    value = raw[i]
    if not 0 < value < 0x80:
        raise _Decline
    return value


def _piece(raw: bytes, i: int, end: int, pieces: dict[bytes, Any]) -> tuple[Any, int]:
    """The card or score whose field starts at ``i``: a piece put together before, or one
    learnt now (only if put_together writes exactly these bytes for it)."""
    size = raw[i + 1]
    j = i + 2 + size
    if size >= 0x80 or j > end:
        raise _Decline
    piece = raw[i:j]
    value = pieces.get(piece, _NONE)
    if value is _NONE:
        value = _learn(piece, pieces)
    return value, j


def _learn(piece: bytes, pieces: dict[bytes, Any]) -> Any:
    body = piece[2:]
    try:
        if pieces is _CARD_PIECES:
            value: Any = codec.card_from_pb(pb.Card.FromString(body))
            canonical = _card_field(value, piece[0])
        else:
            value = codec.score_from_pb(pb.Score.FromString(body))
            canonical = _score_field(piece[:1], value)
    except (DecodeError, ValueError, ArithmeticError):
        raise _Decline from None
    if canonical != piece:
        raise _Decline
    if len(pieces) >= _PIECES_MAX:
        pieces.clear()
    pieces[piece] = value
    return value


_CARD_PIECES: dict[bytes, Any] = {
    _card_field(card, tag): card
    for tag in (0x12, 0x1A)  # CardsDead.cards and CardPlayed.card; TrickWon.cards, Hand.cards
    for card in range(MAX_CARD + 1)
    if is_card(card)
}
"""Each card's field (tag, length, canonical Card) as put_together writes it, and the card:
every card of every deck, worked out once (it is the codec's, not anything a log taught)."""
_SCORE_PIECES: dict[bytes, Any] = {}
"""A score's field as put_together writes it, and the score."""
_NONE: Final = object()


def _trick_won(raw: bytes, i: int) -> ev.TrickWon:
    i, end = _body(raw, i)
    trick, i = _field(raw, i, end, 0x08)
    leader, i = _field(raw, i, end, 0x10)
    cards = []
    known = _CARD_PIECES.get
    while i < end and raw[i] == 0x1A:
        j = i + 2 + raw[i + 1]
        card = known(raw[i:j])  # a piece as put_together writes it (a run past ``end`` fails)
        if card is None:
            card, j = _piece(raw, i, end, _CARD_PIECES)
        cards.append(card)
        i = j
    seat, i = _field(raw, i, end, 0x20)
    if i != end:
        raise _Decline
    return ev.TrickWon(trick, leader, tuple(cards), seat)


def _card_set(raw: bytes, i: int, end: int, tag: int) -> tuple[int, int, int]:
    """Cards of a set from ``i`` to ``end`` as ``tag`` fields, in ascending order: the
    set's mask, how many and where they stop."""
    mask = 0
    known = _CARD_PIECES.get
    while i < end and raw[i] == tag:
        j = i + 2 + raw[i + 1]
        card = known(raw[i:j])  # a piece as put_together writes it (a run past ``end`` fails)
        if card is None:
            card, j = _piece(raw, i, end, _CARD_PIECES)
        if mask >> card:
            raise _Decline  # not the ascending order of a set (or a card twice)
        mask |= 1 << card
        i = j
    if i > end:
        raise _Decline
    return mask, mask.bit_count(), i


def _dealt(raw: bytes, i: int) -> ev.Dealt:
    i, end = _body(raw, i)
    round_, i = _field(raw, i, end, 0x08)
    hands: list[CardSet | None] = []
    sizes = []
    while i < end:
        if raw[i] != 0x12:
            raise _Decline
        i, hand_end = _length(raw, i + 1, end)
        if i < hand_end and raw[i] == 0x08:  # hidden: its size and nothing else
            if raw[i + 1] != 0x01:
                raise _Decline
            size, i = _field(raw, i + 2, hand_end, 0x10)
            hands.append(None)
        else:
            size, i = _field(raw, i, hand_end, 0x10)
            mask, count, i = _card_set(raw, i, hand_end, 0x1A)
            if count != size:
                raise _Decline  # a shown hand's size is its number of cards
            hands.append(CardSet(mask))
        if i != hand_end:
            raise _Decline
        sizes.append(size)
    return ev.Dealt(round_, tuple(hands), tuple(sizes))


def _cards_dead(raw: bytes, i: int) -> ev.CardsDead:
    i, end = _body(raw, i)
    seat, i = _field(raw, i, end, 0x08)
    mask, _, i = _card_set(raw, i, end, 0x12)
    if i != end:
        raise _Decline
    return ev.CardsDead(seat, CardSet(mask))


def _card_played(raw: bytes, i: int) -> ev.CardPlayed:
    i, end = _body(raw, i)
    seat, i = _field(raw, i, end, 0x08)
    if i == end or raw[i] != 0x12:
        raise _Decline  # the card is always written
    card, i = _piece(raw, i, end, _CARD_PIECES)
    if i != end:
        raise _Decline
    return ev.CardPlayed(seat, card)


def _match_ended(raw: bytes, i: int) -> ev.MatchEnded:
    i, end = _body(raw, i)
    totals = []
    while i < end and raw[i] == 0x0A:
        total, i = _piece(raw, i, end, _SCORE_PIECES)
        totals.append(total)
    winners: tuple[int, ...] = ()
    if i < end and raw[i] == 0x12:
        i, packed_end = _length(raw, i + 1, end)
        winners = tuple(raw[i:packed_end])  # each a one-byte varint
        if not winners or max(winners) >= 0x80:
            raise _Decline
        i = packed_end
    if i != end:
        raise _Decline
    return ev.MatchEnded(tuple(totals), winners)


def _round_scored(raw: bytes, i: int) -> ev.RoundScored:
    i, end = _body(raw, i)
    round_, i = _field(raw, i, end, 0x08)
    scores, totals = [], []
    while i < end and raw[i] == 0x12:
        score, i = _piece(raw, i, end, _SCORE_PIECES)
        scores.append(score)
    while i < end and raw[i] == 0x1A:
        total, i = _piece(raw, i, end, _SCORE_PIECES)
        totals.append(total)
    if i != end:
        raise _Decline
    return ev.RoundScored(round_, tuple(scores), tuple(totals))
