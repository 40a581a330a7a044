"""The fast forms of dealing and of Crazy Sixes' legal cards equal the general ones.

:func:`fairdeal.shuffled` shuffles a fresh stream's first words without its queue, and sends
any shuffle that a rejection could touch the general way (:meth:`RandomStream.shuffle`);
:func:`sixes.spanish_cards` is ``cards_of`` as a tuple for Spanish masks.
"""

from __future__ import annotations

import hashlib
import random

import pytest

from cardarena.engine.cards import cards_of
from cardarena.engine.decks import FRENCH_52, TRIATHLON_39, deck_bits, spanish_deck
from cardarena.engine.fairdeal import _SAFE, RandomStream, shuffled
from cardarena.engine.sixes import spanish_cards

DECKS = [FRENCH_52, TRIATHLON_39, spanish_deck(48), spanish_deck(40)]


def first_words(seed: bytes, label: str, count: int) -> list[int]:
    stream = RandomStream(seed, label)
    return [stream.word() for _ in range(count)]


@pytest.mark.parametrize("deck", DECKS)
def test_shuffled_equals_the_stream_shuffle(deck: tuple[int, ...]) -> None:
    bits = deck_bits(deck)[0]
    for n in range(300):
        seed = hashlib.sha256(b"shuffled" + n.to_bytes(2, "big")).digest()
        label = f"deal/{n % 7}"
        assert shuffled(seed, label, deck) == RandomStream(seed, label).shuffle(deck)
        assert shuffled(seed, label, bits) == RandomStream(seed, label).shuffle(bits)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 8, 9, 17, 300])
def test_shuffled_of_any_size(size: int) -> None:
    items = list(range(size))
    for n in range(20):
        seed = hashlib.sha256(bytes([n, size % 256])).digest()
        assert shuffled(seed, "deal/0", items) == RandomStream(seed, "deal/0").shuffle(items)


def test_shuffled_where_a_word_could_be_rejected() -> None:
    """Seeds whose shuffle reads a word at or above _SAFE (which some ``uniform`` may reject)
    are found, and shuffled the same; so are those whose blocks merely hold two 0xFF bytes."""
    deck = spanish_deck(48)
    high = 0
    for n in range(40_000):
        seed = hashlib.sha256(b"high" + n.to_bytes(4, "big")).digest()
        if max(first_words(seed, "deal/0", len(deck) - 1)) >= _SAFE:
            high += 1
            assert shuffled(seed, "deal/0", deck) == RandomStream(seed, "deal/0").shuffle(deck)
        if high == 5:
            break
    assert high == 5


def test_spanish_cards_are_cards_of() -> None:
    rng = random.Random(7)
    masks = [0, sum(1 << c for c in spanish_deck(48))]
    masks += [sum(1 << c for c in rng.sample(spanish_deck(48), k)) for k in range(49)]
    masks += [sum(1 << c for c in spanish_deck(48) if rng.random() < 0.2) for _ in range(500)]
    for mask in masks:
        assert list(spanish_cards(mask)) == cards_of(mask)
