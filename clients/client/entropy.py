"""The entropy a client contributes to a deal seed (docs/rules.md §4.8, §4.9).

One rule for every call that takes a contribution (``JoinMatch``, ``Enter``): by default 32
fresh random bytes, drawn here, so that with one honest client at the table nobody chose the
cards; or 32 bytes of the caller's own (a replayable run); or none at all.
"""

from __future__ import annotations

import secrets
from typing import Literal

Contribution = bytes | Literal["fresh"] | None
"""``"fresh"``: 32 random bytes drawn now; ``bytes``: these; ``None``: no contribution."""


def contributed(contribution: Contribution) -> bytes:
    """The bytes to send (empty: none)."""
    if contribution == "fresh":
        return secrets.token_bytes(32)
    return contribution or b""
