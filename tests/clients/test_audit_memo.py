"""The decoder's memo of payloads shown canonical (clients/audit/canonical.py) changes no
verdict: a payload seen canonical is accepted again only behind its seq's canonical prefix,
and any other byte (an unknown field, a padded seq varint) still takes the full check."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest

from cardarena.clients.audit import canonical, pieces
from cardarena.clients.audit.canonical import NotCanonical, decode_entry
from cardarena.clients.audit.pieces import put_together
from cardarena.engine import events as ev
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from .audit_support import base_one_deal


def card_play() -> tuple[pb.Event, bytes]:
    for entry in base_one_deal().resp.entries:
        event = pb.Event.FromString(entry.event)
        if event.WhichOneof("kind") == "card_played":
            return event, bytes(entry.event)
    raise AssertionError("no card played")


def test_a_payload_shown_canonical_is_accepted_at_another_seq_and_nothing_else() -> None:
    canonical.forget()
    event, raw = card_play()
    first = decode_entry(event, raw)
    moved = pb.Event()
    moved.CopyFrom(event)
    moved.seq = event.seq + 1000  # the same payload later in a log: a memo hit
    again = moved.SerializeToString(deterministic=True)
    assert decode_entry(pb.Event.FromString(again), again) is first
    padded = b"\x08" + bytes([0x80 | (event.seq & 0x7F), event.seq >> 7]) + raw[2:]
    assert pb.Event.FromString(padded).seq == event.seq and padded != raw
    with pytest.raises(NotCanonical, match="bytes are not its canonical encoding"):
        decode_entry(pb.Event.FromString(padded), padded)
    unknown = raw + b"\xa8\x1f\x01"  # field 501, a varint this protocol does not define
    with pytest.raises(NotCanonical, match="fields this protocol does not define"):
        decode_entry(pb.Event.FromString(unknown), unknown)


def test_tricks_deals_and_scores_are_put_together_as_the_codec_encodes_them() -> None:
    from cardarena.engine import CardSet, new_match

    from ..helpers import play_out

    found: dict[type, int] = {
        ev.TrickWon: 0,
        ev.Dealt: 0,
        ev.RoundScored: 0,
        ev.CardsDead: 0,
        ev.MatchEnded: 0,
        ev.CardPlayed: 0,
    }
    games = (("hexathlon", 4), ("triathlon", 3), ("pentathlon", 5), ("crazy_sixes", 3))
    for game, players in games:
        match = new_match(game, players=players, seed=bytes(32))
        play_out(match, rng_seed=3)
        hidden = ev.Dealt(2, (None, CardSet(0b1011), None), (13, 3, 0))
        scored = ev.RoundScored(0, (Fraction(-35, 2), 0, -(1 << 40)), (Fraction(7, 3), 5, -1))
        ended = ev.MatchEnded((Fraction(-1, 3), 0, 7), (0, 2))
        nobody = ev.MatchEnded((), ())
        for seq, event in enumerate([*match.log, hidden, scored, ended, nobody], start=1):
            if isinstance(event, pieces.Assembled):
                encoded = codec.event_to_pb(event, seq * 97, "m")
                assert put_together(seq * 97, event) == encoded.SerializeToString(
                    deterministic=True
                ), event
                found[type(event)] += 1
    assert found[ev.TrickWon] > 100 and found[ev.Dealt] > 10 and found[ev.RoundScored] > 10
    assert found[ev.CardsDead] > 5 and found[ev.MatchEnded] > 5 and found[ev.CardPlayed] > 100


def test_options_seen_canonical_spare_nothing_else_of_a_match_started() -> None:
    canonical.forget()
    log = base_one_deal().resp
    raw = bytes(log.entries[0].event)
    event = pb.Event.FromString(raw)
    first = decode_entry(event, raw)
    assert isinstance(first, ev.MatchStarted)
    other = pb.Event()
    other.CopyFrom(event)
    other.match_started.match_id = "another"  # same options, another match: the memo serves
    again = other.SerializeToString(deterministic=True)
    decoded = decode_entry(pb.Event.FromString(again), again)
    assert decoded == first and decoded is not first
    unknown = raw + b"\xa8\x1f\x01"  # a field this protocol does not define, beside the options
    with pytest.raises(NotCanonical, match="fields this protocol does not define"):
        decode_entry(pb.Event.FromString(unknown), unknown)
    changed = pb.Event()
    changed.CopyFrom(event)
    changed.match_started.options["rounds"] = 1.5  # other options: decoded for themselves
    odd = changed.SerializeToString(deterministic=True)
    renewed = decode_entry(pb.Event.FromString(odd), odd)
    assert isinstance(renewed, ev.MatchStarted) and renewed.options["rounds"] == 1.5
    assert "rounds" not in first.options


def _assembled_payloads() -> list[tuple[int, pieces.Assembled]]:
    """Every trick, deal, score and dead-card event of a match of each game, and a hidden
    hand and odd scores besides, each with a seq (short and long prefixes both)."""
    from cardarena.engine import CardSet, new_match

    from ..helpers import play_out

    out: list[tuple[int, ev.Event]] = []
    games = (("hexathlon", 4), ("triathlon", 3), ("pentathlon", 5), ("crazy_sixes", 3))
    for game, players in games:
        match = new_match(game, players=players, seed=bytes(32))
        play_out(match, rng_seed=5)
        out += [(seq * 37, e) for seq, e in enumerate(match.log, start=1)]
    out.append((9, ev.Dealt(2, (None, CardSet(0b1011), None, CardSet(0)), (13, 3, 0, 0))))
    out.append((300, ev.RoundScored(0, (Fraction(-35, 2), 0, -(1 << 40)), (Fraction(7, 3), 5))))
    out.append((7, ev.TrickWon(0, 0, (), 0)))
    out.append((20_000, ev.MatchEnded((Fraction(-1, 3), 0, 7), (0, 2))))
    out.append((1, ev.MatchEnded((), ())))
    return [(s, e) for s, e in out if isinstance(e, pieces.Assembled)]


def test_a_trick_deal_or_score_read_piece_by_piece_is_the_codecs_decoding() -> None:
    canonical.forget()
    kinds: set[str] = set()
    for seq, event in _assembled_payloads():
        raw = codec.event_to_pb(event, seq, "m").SerializeToString(deterministic=True)
        assert put_together(seq, event) == raw
        read = pieces.assemble(raw, len(pieces.seq_prefix(seq)))
        assert read is not None, event
        assert read == (pb.Event.FromString(raw).WhichOneof("kind"), event), event
        assert read[1] == codec.event_from_pb(pb.Event.FromString(raw))
        kinds.add(read[0])
    assert kinds == {
        "trick_won",
        "dealt",
        "round_scored",
        "cards_dead",
        "match_ended",
        "card_played",
    }


def _mutants(raw: bytes, start: int) -> list[bytes]:
    """Every byte after ``start`` flipped (several ways), dropped, doubled, and a byte or a
    field appended: most are no event at all, some another event, some the same event in a
    non-canonical encoding."""
    out = [raw + b"\x00", raw + b"\x20\x00", raw + b"\xf8\x07\x01"]
    at = start + (1 if raw[start] < 0x80 else 2)  # the payload message's length
    if raw[at] < 0x7C:  # bytes inside the message, its length made to fit
        for extra in (b"\x00", b"\x08\x00", b"\x20\x00", b"\xf8\x07\x01"):
            out.append(raw[:at] + bytes([raw[at] + len(extra)]) + raw[at + 1 :] + extra)
    for at in range(start, len(raw)):
        for mask in (0x01, 0x02, 0x08, 0x10, 0x80, 0xFF):
            out.append(raw[:at] + bytes([raw[at] ^ mask]) + raw[at + 1 :])
        out.append(raw[:at] + raw[at + 1 :])
        out.append(raw[:at] + raw[at : at + 1] + raw[at:])
    return out


def test_the_piece_by_piece_reader_takes_only_the_canonical_encoding() -> None:
    """Over every mutant of every payload: what the reader takes is exactly the canonical
    encoding of the event it returns, and the full check agrees (the same event); anything
    else it declines, and the full check then gives the verdict."""
    canonical.forget()
    taken = declined = 0
    payloads, sample, per_kind = _assembled_payloads(), [], Counter[type]()
    for n, (seq, event) in enumerate(payloads):  # a few of each kind, every 7th, the odd ones
        per_kind[type(event)] += 1
        if per_kind[type(event)] <= 3 or n % 7 == 0 or n >= len(payloads) - 5:
            sample.append((seq, event))
    for seq, event in sample:
        raw = codec.event_to_pb(event, seq, "m").SerializeToString(deterministic=True)
        start = len(pieces.seq_prefix(seq))
        for mutant in _mutants(raw, start):
            read = pieces.assemble(mutant, start)
            if read is None:
                declined += 1
                continue
            taken += 1
            assert put_together(seq, read[1]) == mutant
            checked = canonical._decode_checked(pb.Event.FromString(mutant), mutant)
            assert checked == read[1]
    assert taken > 100 and declined > 10 * taken


def test_every_card_of_every_deck_is_a_piece_the_reader_knows() -> None:
    from cardarena.engine.cards import MAX_CARD, is_card

    cards = [card for card in range(MAX_CARD + 1) if is_card(card)]
    assert len(cards) == 52 + 3 + 48
    for card in cards:
        for tag in (0x12, 0x1A):
            piece = pieces._card_field(card, tag)
            assert pieces._CARD_PIECES[piece] == card
            assert codec.card_from_pb(pb.Card.FromString(piece[2:])) == card
            assert piece[2:] == codec.card_to_pb(card).SerializeToString(deterministic=True)
    assert len(pieces._CARD_PIECES) == 2 * len(cards)


def test_the_decode_pass_notes_every_entry_the_checks_look_for_by_seq() -> None:
    """Cold (every entry parsed) and warm (most known from the memo, not parsed), the seqs
    the checks get for a kind are those a scan of every message finds."""
    from cardarena.clients.audit.checks import Checks
    from cardarena.clients.audit.form import NOTED

    from .audit_support import hexa

    resp = hexa().resp
    scanned: dict[str, list[int]] = {kind: [] for kind in NOTED}
    for n, entry in enumerate(resp.entries, start=1):
        found = pb.Event.FromString(entry.event).WhichOneof("kind")
        if found in scanned:
            scanned[found].append(n)
    assert scanned["timed_out"] and scanned["seat_joined"] and scanned["seed_revealed"]
    canonical.forget()
    for _ in ("cold", "warm"):
        state = Checks(resp, resp.match.match_id, None)
        state.check_decode()
        for noted in NOTED:
            assert state._seqs_of(noted) == scanned[noted], noted
        with pytest.raises(ValueError, match="does not note"):
            state._seqs_of("card_played")
