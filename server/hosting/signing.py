"""The server's signing key: where it comes from, and what it signs.

Why a signature at all: the hash chain proves a log is self-consistent, not who wrote it.
A checkpoint signed at the end of each match ("the log of M ends at seq N with hash H") lets
anyone show a third party that this log is the one this server published; a tournament's
results are signed the same way. The byte strings signed are :mod:`cardarena.v1.signed`'s.

Where the key comes from: ``--signing-key FILE`` (PEM, PKCS #8, as ``openssl genpkey
-algorithm ed25519`` writes it), else ``signing-key.pem`` in the data directory, generated on
first start with mode 0600 (created under a temporary name and linked into place, so two
replicas sharing a directory end up with the same key). A key file that others may read is
refused, as ssh refuses one. The private key is never logged, served or put in a ``repr``;
its public half is published in the store (:mod:`..store.signatures`), so replicas agree on
every key and a log signed before a rotation stays verifiable.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Final

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from google.protobuf.message import Message

from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1.signed import checkpoint_message, key_id, ladder_message, results_message

from ..store import CheckpointRecord, EventStore, PublicKeyRecord

KEY_FILE: Final = "signing-key.pem"
PUBLIC_PREFIX: Final = "ed25519:"


class SigningKeyError(Exception):
    """The signing key cannot be read or made; the message says why and where."""


class Signer:
    """One Ed25519 key: its public half, its id, and the statements it signs."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        self.public_key = private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.key_id = key_id(self.public_key)

    def __repr__(self) -> str:
        return f"Signer(key_id={self.key_id!r})"

    @property
    def public_text(self) -> str:
        """The form ``serve --print-public-key`` prints and ``audit --key`` reads."""
        return PUBLIC_PREFIX + self.public_key.hex()

    def checkpoint(self, match_id: str, last_seq: int, last_hash: bytes) -> CheckpointRecord:
        message = checkpoint_message(match_id, last_seq, last_hash, self.key_id)
        return CheckpointRecord(
            match_id, last_seq, last_hash, self.key_id, self._private.sign(message)
        )

    def sign_results(self, info: tpb.TournamentInfo) -> spb.ResultsSignature:
        """The signature of ``info``'s results; ``info`` must hold every match."""
        signature = self._private.sign(results_message(info, self.key_id))
        return spb.ResultsSignature(key_id=self.key_id, signature=signature)

    def sign_ladder(self, snapshot: Message) -> spb.ResultsSignature:
        """The signature of a ladder's snapshot (``LadderSnapshot``)."""
        signature = self._private.sign(ladder_message(snapshot, self.key_id))
        return spb.ResultsSignature(key_id=self.key_id, signature=signature)

    async def publish(self, store: EventStore) -> None:
        await store.add_public_key(
            PublicKeyRecord(self.key_id, self.public_key, int(time.time() * 1000))
        )


def checkpoint_pb(record: CheckpointRecord) -> spb.Checkpoint:
    return spb.Checkpoint(
        match_id=record.match_id,
        last_seq=record.last_seq,
        last_hash=record.last_hash,
        key_id=record.key_id,
        signature=record.signature,
    )


async def public_keys(store: EventStore, current: Signer | None) -> list[spb.PublicKey]:
    """Every published key, ``current`` first, then newest first."""
    records = await store.public_keys()
    records.sort(key=lambda r: current is None or r.key_id != current.key_id)
    return [
        spb.PublicKey(key_id=r.key_id, public_key=r.public_key, created_unix_ms=r.created_ms)
        for r in records
    ]


def load_signer(path: Path) -> Signer:
    """The key in ``path`` (PEM, PKCS #8, Ed25519), refused with a reason when it is not one."""
    try:
        mode = path.stat().st_mode
        data = path.read_bytes()
    except FileNotFoundError:
        raise SigningKeyError(f"signing key {path}: no such file") from None
    except OSError as error:
        raise SigningKeyError(f"signing key {path}: {error.strerror or error}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SigningKeyError(
            f"signing key {path}: others may read it (mode {stat.S_IMODE(mode):o}):"
            f" chmod 600 {path}"
        )
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise SigningKeyError(
            f"signing key {path}: not an unencrypted PEM private key"
            " (make one with: openssl genpkey -algorithm ed25519)"
        ) from None
    if not isinstance(private, Ed25519PrivateKey):
        raise SigningKeyError(f"signing key {path}: not an Ed25519 key")
    return Signer(private)


def signer_in(data_dir: Path) -> Signer:
    """The data directory's key, generated there on first use."""
    path = data_dir / KEY_FILE
    if not path.exists():
        _generate(path)
    return load_signer(path)


def _generate(path: Path) -> None:
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as out:
                out.write(pem)
                out.flush()
                os.fsync(out.fileno())
            # Fails if another process made one first: then that one is the key.
            with contextlib.suppress(FileExistsError):
                os.link(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
    except OSError as error:
        raise SigningKeyError(
            f"cannot create signing key {path}: {error.strerror or error}"
        ) from None


async def checkpoint_for(store: EventStore, signer: Signer, match_id: str) -> CheckpointRecord:
    """The match's checkpoint: the stored one, else one signed now over its last entry (the
    caller knows the log is final: the match has ended and its seed is revealed)."""
    stored = await store.get_checkpoint(match_id)
    if stored is not None:
        return stored
    tail = await store.read_tail(match_id, 1)
    if not tail:
        raise ValueError(f"match {match_id!r} has no log to sign")
    last = tail[-1]
    return await store.save_checkpoint(signer.checkpoint(match_id, last.seq, last.hash))


async def log_checkpoint(
    store: EventStore, signer: Signer | None, match_id: str
) -> spb.Checkpoint | None:
    """The checkpoint GetMatchLog returns with a final log (``None`` only when this server
    has no key and none was stored)."""
    if signer is not None:
        return checkpoint_pb(await checkpoint_for(store, signer, match_id))
    stored = await store.get_checkpoint(match_id)
    return None if stored is None else checkpoint_pb(stored)
