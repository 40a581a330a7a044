"""Signing keys and checkpoints: the public keys a server has signed with, and each ended
match's signed checkpoint.

Why the public keys live in the store: replicas sharing a database must agree on which keys
exist, and a log signed before a rotation must stay verifiable after it, so every key ever
used is kept here (the private halves never are: each stays in its process's key file).
Why checkpoints are rows and not log events: an event would change the chain it vouches
for, and every hash a tournament recorded would then point one entry short of the end.
Both are written once: the first writer wins, later ones get what is stored.
"""

from __future__ import annotations

from .errors import StoreConflict
from .records import CheckpointRecord, PublicKeyRecord
from .schema import Connection
from .threads import StoreThreads


class SignatureQueries(StoreThreads):
    """The signing half of the store."""

    async def add_public_key(self, record: PublicKeyRecord) -> PublicKeyRecord:
        """Publish a key (a no-op if it is there); the stored record. :class:`StoreConflict`
        if another key has the same id."""

        def work(conn: Connection) -> PublicKeyRecord:
            conn.execute(
                "INSERT INTO signing_keys (key_id, public_key, created_ms) VALUES (?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                (record.key_id, record.public_key, record.created_ms),
            )
            row = conn.execute(
                "SELECT key_id, public_key, created_ms FROM signing_keys WHERE key_id = ?",
                (record.key_id,),
            ).fetchone()
            stored = PublicKeyRecord(row[0], bytes(row[1]), row[2])
            if stored.public_key != record.public_key:
                raise StoreConflict(f"another public key has the id {record.key_id}")
            return stored

        return await self._submit(work)

    async def public_keys(self) -> list[PublicKeyRecord]:
        """Every published key, newest first."""

        def work(conn: Connection) -> list[PublicKeyRecord]:
            rows = conn.execute(
                "SELECT key_id, public_key, created_ms FROM signing_keys"
                " ORDER BY created_ms DESC, key_id"
            ).fetchall()
            return [PublicKeyRecord(r[0], bytes(r[1]), r[2]) for r in rows]

        return await self._read(work)

    async def save_checkpoint(self, record: CheckpointRecord) -> CheckpointRecord:
        """Keep a match's checkpoint unless it has one; the one stored (the first)."""

        def work(conn: Connection) -> CheckpointRecord:
            conn.execute(
                "INSERT INTO checkpoints (match_id, last_seq, last_hash, key_id, signature)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    record.match_id,
                    record.last_seq,
                    record.last_hash,
                    record.key_id,
                    record.signature,
                ),
            )
            found = _checkpoint(conn, record.match_id)
            assert found is not None  # just written, or there before
            return found

        return await self._submit(work)

    async def get_checkpoint(self, match_id: str) -> CheckpointRecord | None:
        return await self._read(lambda conn: _checkpoint(conn, match_id))


def _checkpoint(conn: Connection, match_id: str) -> CheckpointRecord | None:
    row = conn.execute(
        "SELECT match_id, last_seq, last_hash, key_id, signature FROM checkpoints"
        " WHERE match_id = ?",
        (match_id,),
    ).fetchone()
    if row is None:
        return None
    return CheckpointRecord(row[0], row[1], bytes(row[2]), row[3], bytes(row[4]))
