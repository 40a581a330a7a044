"""Answers that never change again, kept as the bytes sent.

Why: an ended match's log, seed and signed checkpoint, and its line in a list of matches,
are final, yet each read rebuilt them on the event loop the players wait for: a message per
event and the whole log serialized (3-8 ms a ``GetMatchLog`` of a Hexathlon match, and a
match no longer in memory replayed through the engine first), a ``MatchInfo`` copied twice
and serialized per listed match (2.4 ms a page of 100). Readers of a finished competition ask
for the same ones again and again. Kept here, a read is a dictionary lookup and the bytes go
out as they are (the handlers' serializer passes bytes through: ``wire._as_bytes``; a page is
its lines joined: ``info.page_bytes``). Only what is final is kept, which the keeper
vouches for: ended, released by its group (the embargo only ever lifts), and, for a log,
signed. Bounded in bytes, the least recently read dropped first.
"""

from __future__ import annotations

from ..kept import LARGEST_SHARE, KeptBytes

__all__ = ["ENDED_LOG_BYTES", "LARGEST_SHARE", "LISTED_BYTES", "KeptBytes"]

ENDED_LOG_BYTES = 32 << 20
"""``GetMatchLog``'s answers kept at most, in bytes, every log's together."""

LISTED_BYTES = 8 << 20
"""``ListMatches``' lines of final matches kept at most, in bytes (a few hundred each)."""
