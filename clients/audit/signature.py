"""The signature check: a key the auditor trusts signed this log's checkpoint (docs/signatures.md).

Why a check of its own, run only with keys: every other check needs nothing but the log and
the rules, while a signature means something only against a key the auditor got from
somewhere it trusts (the operator, ``cardarena serve --print-public-key``), never from the log
itself or from the server that sent it. With several keys (a rotation) any of them may have
signed; a log signed by a key that is none of them fails, saying whose it is.

The bytes checked are rebuilt here from the log (the match id asked for, the last entry's seq
and hash): the checkpoint's own fields must be those, so a checkpoint moved from another
match, or left over from a longer log that was cut, is caught before its signature is even
tried. Tournament results are checked the same way (:func:`results_finding`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1.signed import (
    PUBLIC_KEY_SIZE,
    SIGNATURE_SIZE,
    checkpoint_message,
    key_id,
    results_message,
    unknown_fields_in,
)

from .errors import Discrepancy

SIGNATURE_CHECK: Final = (
    "signature",
    "a trusted key signed the checkpoint of this very log (match, last seq, last hash)",
)
KEY_FORM: Final = "ed25519:<64 hex digits> (what cardarena serve --print-public-key prints)"
_KEY_TEXT: Final = re.compile(r"(?:ed25519:)?([0-9a-fA-F]{64})")


class BadKey(ValueError):
    """A key given to the auditor is not a public key it can use."""


@dataclass(frozen=True)
class TrustedKey:
    """A public key the auditor was given (never one a log or its server offered), with the
    id a checkpoint names its signer by."""

    key_id: str
    public_key: bytes

    @classmethod
    def of(cls, public_key: bytes) -> TrustedKey:
        return cls(key_id(public_key), public_key)


def parse_keys(text: str) -> list[TrustedKey]:
    """``ed25519:HEX`` (or the bare hex), or a file holding such lines or a PEM public key."""
    stripped = text.strip()
    match = _KEY_TEXT.fullmatch(stripped)
    if match is not None:
        return [TrustedKey.of(bytes.fromhex(match.group(1)))]
    path = Path(text)
    if not path.is_file():
        raise BadKey(f"expected {KEY_FORM}, or a file holding one; got {text!r}")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise BadKey(f"{path}: cannot read: {error.strerror or error}") from None
    if b"-----BEGIN" in data:
        return [_pem_key(path, data)]
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines()]
    keys = []
    for number, line in enumerate(lines, start=1):
        if not line or line.startswith("#"):
            continue
        found = _KEY_TEXT.fullmatch(line.split()[0])
        if found is None:
            raise BadKey(f"{path}:{number}: expected {KEY_FORM}, got {line[:80]!r}")
        keys.append(TrustedKey.of(bytes.fromhex(found.group(1))))
    if not keys:
        raise BadKey(f"{path}: no key in it (expected {KEY_FORM})")
    return keys


def _pem_key(path: Path, data: bytes) -> TrustedKey:
    if b"PRIVATE KEY" in data:
        raise BadKey(f"{path} holds a private key: give its public half (serve --print-public-key)")
    try:
        loaded = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm):
        raise BadKey(f"{path}: not a PEM public key") from None
    if not isinstance(loaded, Ed25519PublicKey):
        raise BadKey(f"{path}: not an Ed25519 public key")
    return TrustedKey.of(
        loaded.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    )


def _signed_by(
    keys: list[TrustedKey], signer: str, signature: bytes, message: bytes, what: str
) -> str | None:
    """Why ``signature`` over ``message`` is not a trusted key's, or ``None`` if it is."""
    trusted = next((k for k in keys if k.key_id == signer), None)
    if trusted is None:
        given = ", ".join(k.key_id for k in keys)
        return (
            f"{what} signed by key {signer or '(none named)'}, which is none of the keys"
            f" given ({given})"
        )
    if len(signature) != SIGNATURE_SIZE or len(trusted.public_key) != PUBLIC_KEY_SIZE:
        return f"{what} signature is {len(signature)} bytes, not {SIGNATURE_SIZE}"
    try:
        Ed25519PublicKey.from_public_bytes(trusted.public_key).verify(signature, message)
    except InvalidSignature:
        return (
            f"{what} signature does not verify with key {signer}: the signed fields were"
            " changed, or that key never signed them"
        )
    return None


def check_signature(resp: spb.GetMatchLogResponse, match_id: str, keys: list[TrustedKey]) -> None:
    """Raise :class:`Discrepancy` unless a key of ``keys`` signed this log's checkpoint."""
    if not resp.HasField("checkpoint"):
        raise Discrepancy(None, "the log carries no checkpoint: no signature vouches for it")
    point = resp.checkpoint
    last = resp.entries[-1] if resp.entries else None
    last_seq, last_hash = (last.seq, bytes(last.hash)) if last is not None else (0, b"")
    if point.match_id != match_id:
        raise Discrepancy(None, f"the checkpoint is for match {point.match_id!r}, not {match_id!r}")
    if point.last_seq != last_seq:
        cut = "cut short" if point.last_seq > last_seq else "extended"
        raise Discrepancy(
            last_seq,
            f"the checkpoint vouches for a log ending at seq {point.last_seq}, this one ends at"
            f" seq {last_seq}: it was {cut}",
        )
    if point.last_hash != last_hash:
        raise Discrepancy(
            last_seq,
            f"the checkpoint vouches for last hash {point.last_hash.hex()}, the log ends at"
            f" {last_hash.hex()}",
        )
    message = checkpoint_message(match_id, last_seq, last_hash, point.key_id)
    problem = _signed_by(keys, point.key_id, bytes(point.signature), message, "the checkpoint:")
    if problem is not None:
        raise Discrepancy(None, problem)


def results_finding(info: tpb.TournamentInfo, keys: list[TrustedKey]) -> str | None:
    """Why ``info``'s results are not signed by a key of ``keys``, or ``None`` if they are."""
    if not info.HasField("results_signature"):
        return "the results carry no signature"
    if unknown_fields_in(info):
        return (
            "the results hold fields this auditor does not know (a newer server wrote them):"
            " their signature cannot be checked here; use a newer cardarena"
        )
    signed = info.results_signature
    message = results_message(info, signed.key_id)
    return _signed_by(keys, signed.key_id, bytes(signed.signature), message, "the results:")
