"""Mutations of the log as bytes and as a sequence: flipped, dropped, duplicated, swapped,
truncated or junk entries, raw and re-signed; encodings and seqs that disagree; no start.
"""

from __future__ import annotations

from typing import Any

from cardarena.v1 import game_pb2 as pb

from .audit_support import (
    Expected,
    a_play,
    clone,
    edit,
    edit_nth,
    edit_raw,
    flip,
    forge,
    hexa,
    mutation,
)


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


# Encodings a lenient reader takes for the same deal, trick or score: only the decode check
# can tell (the payloads the decoder reads piece by piece, clients/audit/canonical.py).


def _swap_first_two(cards: Any) -> None:
    first, second = pb.Card(), pb.Card()
    first.CopyFrom(cards[0])
    second.CopyFrom(cards[1])
    rest = [pb.Card() for _ in cards[2:]]
    for copy, card in zip(rest, cards[2:], strict=True):
        copy.CopyFrom(card)
    del cards[:]
    cards.extend([second, first, *rest])


@mutation("re-signed: a dealt hand's cards out of their order")
def _hand_order() -> Expected:
    return edit_nth("dealt", 0, lambda e: _swap_first_two(e.dealt.hands[1].cards), "decode")


@mutation("re-signed: a dealt hand's size that is not its number of cards")
def _hand_size() -> Expected:
    return edit_nth("dealt", 0, lambda e: setattr(e.dealt.hands[2], "size", 12), "decode")


@mutation("re-signed: a card twice in a dealt hand")
def _hand_twice() -> Expected:
    b = hexa()
    k = b.seqs("dealt")[0]

    def twice(event: pb.Event) -> None:
        hand = event.dealt.hands[0]
        hand.cards.add().CopyFrom(hand.cards[-1])
        hand.size += 1

    return edit(b, k, twice), "decode", k


@mutation("re-signed: a trick's card with a code that disagrees with it")
def _trick_code() -> Expected:
    return edit_nth(
        "trick_won", 3, lambda e: setattr(e.trick_won.cards[1], "code", "QC!"), "decode"
    )


@mutation("re-signed: a trick's 0 written out")
def _trick_zero() -> Expected:
    b = hexa()
    k = b.seqs("trick_won", lambda e: e.trick_won.seat == 0)[0]

    def zero_seat(raw: bytes) -> bytes:  # seat 0, which the canonical form leaves out
        at = (2 if k < 128 else 3) + 2  # after the seq's field and TrickWon's tag
        assert raw[at] < 0x7E
        return raw[:at] + bytes([raw[at] + 2]) + raw[at + 1 :] + b"\x20\x00"

    return edit_raw(b, k, zero_seat), "decode", k


@mutation("re-signed: a score without its denominator")
def _score_denominator() -> Expected:
    return edit_nth(
        "round_scored", 0, lambda e: e.round_scored.scores[0].ClearField("denominator"), "decode"
    )


@mutation("re-signed: a trick's cards in a padded length")
def _trick_padded() -> Expected:
    b = hexa()
    k = b.seqs("trick_won")[5]

    def padded(raw: bytes) -> bytes:
        prefix = 2 if k < 128 else 3  # the seq's field
        size = raw[prefix + 2]
        assert size < 0x80
        return raw[: prefix + 2] + bytes([size | 0x80, 0x00]) + raw[prefix + 3 :]

    return edit_raw(b, k, padded), "decode", k


@mutation("re-signed: MatchEnded's winners not packed")
def _winners_unpacked() -> Expected:
    b = hexa()
    k = b.seqs("match_ended")[0]

    def unpacked(raw: bytes) -> bytes:  # one varint field per winner: the same to a reader
        event = pb.Event.FromString(raw)
        winners = list(event.match_ended.winners)
        event.match_ended.ClearField("winners")
        head = event.SerializeToString(deterministic=True)
        extra = b"".join(bytes([0x10, w]) for w in winners)
        at = head.index(b"\xc2\x01") + 2
        assert head[at] + len(extra) < 0x80
        return head[:at] + bytes([head[at] + len(extra)]) + head[at + 1 :] + extra

    return edit_raw(b, k, unpacked), "decode", k
