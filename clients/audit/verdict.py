"""One verdict per match log for the main job and the tournament tests.

Why a module of one function: they only need "clean, or the first problem", and this is the
one place that decides which auditor gives it (the full audit of :mod:`.auditor`: the hash
chain, the seed against its commitment, every deal, action and result).
"""

from __future__ import annotations

from cardarena.v1 import service_pb2 as spb

from .auditor import audit_log


def audit_response(
    resp: spb.GetMatchLogResponse, match_id: str, *, head: bytes = b""
) -> str | None:
    """``None`` when ``match_id``'s log audits clean, else its first discrepancy.

    ``head``: the last hash recorded when the match ended, if known; the log must end there.
    """
    report = audit_log(resp, match_id=match_id, head=head or None)
    failure = report.failure
    if failure is None:
        return None
    where = f"at seq {failure.seq}" if failure.seq is not None else "in MatchInfo or the seed"
    return f"{failure.check} check failed {where}: {failure.reason}"
