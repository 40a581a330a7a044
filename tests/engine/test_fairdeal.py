"""RULES.md §4: the fair-deal stream, bit for bit, with its published test vectors."""

from __future__ import annotations

import hashlib

import pytest

from cardarena.engine.cards import CardSet, card_code
from cardarena.engine.decks import (
    FRENCH_52,
    TRIATHLON_39,
    deal,
    hand_sizes,
    spanish_deck,
    trick_deck,
)
from cardarena.engine.events import MatchStarted
from cardarena.engine.fairdeal import RandomStream, commitment, mix_seed
from cardarena.engine.match import new_match, setup

ZERO = bytes(32)
SHUFFLED_DEAL_0 = (
    "10S 2D 9C 7S 3C 2S QH 3S AC 2C AS 9H JS QC 4D 8H 7H 4C KD 10C 7C 6C KS QS 4S QD 5C KC 6D AD "
    "6H 9S 2H 10D 9D JD 6S KH AH 3D 5S 8S 4H 7D JH 5H 3H 8D JC 5D 8C 10H"
)


def test_first_block_of_deal_0() -> None:
    block = RandomStream(ZERO, "deal/0").block(0)
    assert block.hex() == "73adbcb2363a1be0a3b77418827e3748be615f63b827c5e10e14db4fb732f2be"
    assert block == hashlib.sha256(ZERO + b"deal/0" + b"\x00" + (0).to_bytes(8, "big")).digest()


def test_first_uniform_52_is_34() -> None:
    assert RandomStream(ZERO, "deal/0").uniform(52) == 34


def test_shuffled_canonical_deck() -> None:
    shuffled = RandomStream(ZERO, "deal/0").shuffle(FRENCH_52)
    assert " ".join(card_code(c) for c in shuffled) == SHUFFLED_DEAL_0


def test_commitment() -> None:
    assert commitment(ZERO) == "bf8625706adf742f54e9bbf92a444269b9eead69eb8dd940f7fec72a26b7301d"


def test_stream_crosses_block_boundaries() -> None:
    stream = RandomStream(ZERO, "x")
    joined = stream.read(20) + stream.read(20) + stream.read(32)
    expected = b"".join(RandomStream(ZERO, "x").block(i) for i in range(3))[:72]
    assert joined == expected


def test_rejection_sampling_rereads() -> None:
    # k = 3 * 2**30 rejects x >= 3 * 2**30; find a label whose first word is rejected.
    k = 3 * 2**30
    for n in range(1000):
        label = f"probe/{n}"
        first = int.from_bytes(RandomStream(ZERO, label).read(4), "big")
        if first >= k:
            stream = RandomStream(ZERO, label)
            second = int.from_bytes(RandomStream(ZERO, label).read(8)[4:], "big")
            if second < k:
                assert stream.uniform(k) == second % k
                return
    pytest.fail("no probe label exercised rejection")


def test_full_deal_of_a_seeded_hexathlon() -> None:
    """A full deal: round 0 of a 4-player match with dealer 0 deals card k to seat (1 + k) mod 4."""
    match = new_match("hexathlon", players=4, seed=ZERO)
    codes = SHUFFLED_DEAL_0.split()
    expected = [CardSet.parse(" ".join(codes[(seat - 1) % 4 :: 4])) for seat in range(4)]
    assert match.round is not None
    assert [CardSet(h) for h in match.hands] == expected
    assert [str(h) for h in expected] == [
        "10C KC 3D 7D 8D JD 8H 9H 10H 3S 7S 9S QS",
        "3C 7C JC AC 6D 2H 7H JH 4S 5S 6S 10S JS",
        "2C 4C 6C QC 2D 5D 10D QD AD 5H KH 2S 8S",
        "5C 8C 9C 4D 9D KD 3H 4H 6H QH AH KS AS",
    ]


def test_seat_after_dealer_gets_first_card_and_extras() -> None:
    hands = deal(list(range(52)), dealer=2, players=5)
    assert hands[3] & 1  # card 0 goes to the seat after the dealer
    assert hand_sizes(52, 2, 5) == (10, 10, 10, 11, 11)
    assert [h.bit_count() for h in hands] == [10, 10, 10, 11, 11]


def test_canonical_decks() -> None:
    assert [card_code(c) for c in FRENCH_52[:3]] == ["2C", "3C", "4C"]
    assert card_code(FRENCH_52[-1]) == "AS"
    assert "2D" not in [card_code(c) for c in trick_deck(3)]
    assert len(trick_deck(3)) == 51 and len(trick_deck(4)) == 52 and len(trick_deck(5)) == 50
    assert {"2D", "2H"}.isdisjoint(card_code(c) for c in trick_deck(5))
    assert [card_code(c) for c in TRIATHLON_39[:2]] == ["6C", "7C"]
    assert [card_code(c) for c in TRIATHLON_39[-4:]] == ["AS", "JK", "JK", "JK"]
    assert [card_code(c) for c in spanish_deck(48)[:2]] == ["1O", "2O"]
    forty = [card_code(c) for c in spanish_deck(40)]
    assert len(forty) == 40 and forty[6:8] == ["7O", "10O"] and forty[-1] == "12B"


@pytest.mark.parametrize("bad", [b"", bytes(31), bytes(33)])
def test_seed_must_be_32_bytes(bad: bytes) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        RandomStream(bad, "deal/0")


MIXED = "f820caae3c19c56432d510ef51f621cf43f4131811e25206356cefca6a26694b"
"""RULES.md §4's mixing vector: seat 0 gives 00 01 … 1f, seat 2 gives 32 ff, seats 1, 3 none."""


def test_mixing_vector() -> None:
    mixed = mix_seed(ZERO, [bytes(range(32)), None, b"\xff" * 32, None])
    assert mixed.hex() == MIXED
    shuffled = RandomStream(mixed, "deal/0").shuffle(FRENCH_52)
    assert " ".join(card_code(c) for c in shuffled[:8]) == "10D 2H KD 5C 2S 7D 10C 9C"


def test_without_contributions_the_deal_seed_is_the_seed() -> None:
    seed = bytes(range(1, 33))
    assert mix_seed(seed, [None, None, None, None]) == seed
    # A contribution of 32 zero bytes is a contribution: the seed is mixed.
    assert mix_seed(seed, [bytes(32), None, None, None]) != seed


@pytest.mark.parametrize("bad", [b"", b"\x01" * 31, b"\x01" * 33])
def test_a_contribution_is_exactly_32_bytes(bad: bytes) -> None:
    with pytest.raises(ValueError, match="contribution 1 has"):
        mix_seed(ZERO, [None, bad])


def test_a_match_started_without_its_deal_seed_waits_then_deals_from_it() -> None:
    """The host's path: committed to the seed, dealt from the mixed seed once seats joined."""
    mixed = bytes.fromhex(MIXED)
    waiting = setup("hexathlon", players=4).start(ZERO, dealing=False)
    assert (waiting.dealing, waiting.to_act, waiting.hands) == (False, None, (0,) * 4)
    started = waiting.log[0]
    assert isinstance(started, MatchStarted)
    assert started.commitment == commitment(ZERO)  # the server's seed, not the mix
    dealt = waiting.deal_from(mixed)
    assert dealt and dealt == waiting.log[-len(dealt) :]
    assert waiting.dealing
    direct = setup("hexathlon", players=4).start(mixed)
    assert waiting.hands == direct.hands and waiting.to_act == direct.to_act
    with pytest.raises(ValueError, match="already has its deal seed"):
        waiting.deal_from(mixed)
