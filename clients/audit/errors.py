"""A discrepancy, the one thing every check raises, and the words of a MatchInfo mismatch.

Apart from :mod:`.checks` so that the check modules beside it (:mod:`.faults`) raise the
same exception without importing the checks that call them.
"""

from __future__ import annotations


class Discrepancy(Exception):
    """A check failed at ``seq``: the entry at fault, or the entry a MatchInfo field disagrees
    with (``None`` when there is none: the seed field, or a seat that never joined)."""

    def __init__(self, seq: int | None, reason: str) -> None:
        super().__init__(reason)
        self.seq = seq
        self.reason = reason


def mismatch(name: str, info_says: object, log_says: object, seq: int | None) -> Discrepancy:
    """A MatchInfo field that disagrees with the log, in the words every such failure uses."""
    return Discrepancy(seq, f"MatchInfo.{name} is {info_says}, the log says {log_says}")
