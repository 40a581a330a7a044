"""Signing keys and checkpoints in the store, SQLite and PostgreSQL alike: a key published
twice is kept once, another key under the same id is refused, keys list newest first, and a
match's first checkpoint stands (a second signer gets the stored one back)."""

from __future__ import annotations

import pytest

from cardarena.server.store import CheckpointRecord, EventStore, PublicKeyRecord, StoreConflict
from tests.stores import with_store


def test_public_keys_are_published_once_and_listed_newest_first(url: str) -> None:
    async def body(store: EventStore) -> None:
        old = PublicKeyRecord("aaaa", b"\x01" * 32, 1_000)
        new = PublicKeyRecord("bbbb", b"\x02" * 32, 2_000)
        assert await store.add_public_key(old) == old
        assert await store.add_public_key(new) == new
        # Published again by a restart or another replica: the first record stands.
        assert await store.add_public_key(PublicKeyRecord("aaaa", b"\x01" * 32, 3_000)) == old
        with pytest.raises(StoreConflict, match="another public key has the id aaaa"):
            await store.add_public_key(PublicKeyRecord("aaaa", b"\x03" * 32, 4_000))
        assert await store.public_keys() == [new, old]

    with_store(url, body)


def test_a_matchs_first_checkpoint_stands(url: str) -> None:
    async def body(store: EventStore) -> None:
        assert await store.get_checkpoint("m1") is None
        first = CheckpointRecord("m1", 40, b"\x05" * 32, "aaaa", b"\x06" * 64)
        assert await store.save_checkpoint(first) == first
        other = CheckpointRecord("m1", 40, b"\x05" * 32, "bbbb", b"\x07" * 64)
        assert await store.save_checkpoint(other) == first
        assert await store.get_checkpoint("m1") == first
        assert await store.get_checkpoint("m2") is None

    with_store(url, body)
