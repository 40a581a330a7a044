"""How secrets are kept (hashes only) and compared, and how ids are made."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from cardarena.engine.cards import is_joker


def token_hash(token: str) -> bytes:
    return hashlib.sha256(b"cardarena-token-v1" + token.encode()).digest()


def secret_hash(secret: str) -> bytes:
    """How a join secret or a creator secret is kept: never the secret itself."""
    return hashlib.sha256(b"cardarena-secret-v1" + secret.encode()).digest()


def is_secret(digest_hex: str | None, secret: str) -> bool:
    """Whether ``secret`` is the one kept as ``digest_hex`` (constant time; ``None``: none)."""
    return digest_hex is not None and hmac.compare_digest(
        bytes.fromhex(digest_hex), secret_hash(secret)
    )


def request_key(seat: int, request_id: str) -> str:
    """The store's key of a seat's request id: ids are scoped to (match, seat), so one seat
    can neither answer nor block another's requests by guessing its ids."""
    return f"{seat}:{request_id}"


def same_action(a: int, b: int) -> bool:
    """Whether a retry asks for the action the first request made; the three Triathlon
    Jokers are one action (any Joker id plays the lowest held)."""
    return a == b or (is_joker(a) and is_joker(b))


def new_match_id() -> str:
    return secrets.token_hex(8)
