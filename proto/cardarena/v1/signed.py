"""The byte strings a server signs (docs/signatures.md), shared by the server and every auditor.

Why documented byte strings and not a signed protobuf message: protobuf serialisation is not
canonical, so a verifier in another language could not rebuild the exact bytes; these are a
fixed, length-prefixed layout anyone can write in a few lines. Each starts with its own
domain string and a NUL, so a signature over one kind of statement can never be passed off as
another (a checkpoint as results, or either as anything else signed with the same key).

The Ed25519 operations themselves are the server's (signing) and the auditor's (verifying);
this module has no cryptography beyond SHA-256, so the protocol package stays dependency-free.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Final

from . import service_pb2 as spb
from . import tournament_pb2 as tpb

CHECKPOINT_DOMAIN: Final = b"cardarena-checkpoint-v1\x00"
RESULTS_DOMAIN: Final = b"cardarena-results-v1\x00"
PUBLIC_KEY_SIZE: Final = 32
SIGNATURE_SIZE: Final = 64
KEY_ID_HEX: Final = 16


def key_id(public_key: bytes) -> str:
    """A key's short name: the first 16 hex digits of SHA-256(raw public key)."""
    return hashlib.sha256(public_key).hexdigest()[:KEY_ID_HEX]


def _text(value: str) -> bytes:
    return _blob(value.encode("utf-8"))


def _blob(value: bytes) -> bytes:
    return struct.pack(">I", len(value)) + value


def _u32(value: int) -> bytes:
    return struct.pack(">I", value)


def _f64(value: float) -> bytes:
    return struct.pack(">d", value)


def checkpoint_message(match_id: str, last_seq: int, last_hash: bytes, signer: str) -> bytes:
    """What a checkpoint's signature covers: "the log of ``match_id`` ends at ``last_seq``
    with ``last_hash``", by the key named ``signer``."""
    return (
        CHECKPOINT_DOMAIN
        + _text(match_id)
        + struct.pack(">Q", last_seq)
        + _blob(last_hash)
        + _text(signer)
    )


def checkpoint_of(checkpoint: spb.Checkpoint) -> bytes:
    return checkpoint_message(
        checkpoint.match_id, checkpoint.last_seq, checkpoint.last_hash, checkpoint.key_id
    )


def results_message(info: tpb.TournamentInfo, signer: str) -> bytes:
    """What a tournament's results signature covers: its id, game, seed (commitment and the
    revealed seed), how it ended, every match (index, group, id, status, cancelled, last hash)
    and every standings row, by the key named ``signer``. The totals of each match are pinned
    by its last hash (they are in its log); the standings are what the matches give."""
    parts = [
        RESULTS_DOMAIN,
        _text(info.tournament_id),
        _text(info.game),
        _u32(info.players),
        _text(info.seed_commitment),
        _blob(info.seed),
        _u32(info.status),
        _u32(int(info.cancelled)),
        _text(info.end_reason),
        _u32(info.planned),
        _u32(len(info.entrants)),
        *(_text(name) for name in info.entrants),
        _u32(len(info.matches)),
    ]
    for match in info.matches:
        parts += [
            _u32(match.index),
            _u32(match.group),
            _text(match.match_id),
            _u32(match.status),
            _u32(int(match.cancelled)),
            _blob(match.last_hash),
        ]
    parts.append(_u32(len(info.standings)))
    for row in info.standings:
        parts += [
            _text(row.entrant),
            _u32(row.matches),
            _u32(row.groups),
            _u32(int(row.has_mean)),
            _f64(row.mean),
            _u32(int(row.has_interval)),
            _f64(row.ci_low),
            _f64(row.ci_high),
            _f64(row.wins),
            _f64(row.mu),
            _f64(row.sigma),
            _u32(row.faults),
            _u32(row.forfeits),
        ]
    parts.append(_text(signer))
    return b"".join(parts)
