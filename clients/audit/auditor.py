"""The audit of a match log: every check an outsider can make, in a fixed order.

Why a fixed order and the first discrepancy only: each check relies on the ones before it
(the chain is only meaningful over entries that decode, the replay only over a chain that
holds), so the first failure is the one that explains the others. Every check works on the
log alone plus the published rules; nothing here trusts the server that wrote it.

MatchInfo is the server's summary, not part of the hashed log, so every field of it is
checked against the log (where it first can be: the settings and seats against MatchStarted
and SeatJoined, the last hash against the chain, the totals against the replay), and a
mismatch names the field, what MatchInfo says and what the log says. The one exception is
``created_unix_ms``: the log records no time, so nothing can vouch for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb

from ..logs.text import score_text
from .checks import CHECKS, Checks
from .errors import Discrepancy
from .signature import SIGNATURE_CHECK, TrustedKey, check_signature


@dataclass(frozen=True)
class Failure:
    check: str
    seq: int | None
    reason: str


@dataclass
class AuditReport:
    """What was audited, which checks passed, and the first discrepancy if any."""

    match_id: str
    game: str
    players: int
    seats: list[str]
    scores: list[int | Fraction]
    """MatchInfo's totals, exact (a ``Fraction`` where Crazy Sixes shares a pool)."""
    winners: list[int]
    entries: int
    passed: list[str] = field(default_factory=list)
    failure: Failure | None = None
    keyed: bool = False
    """Whether keys were given, so that the signature check ran (else it is not asked)."""

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def totals(self) -> list[str]:
        """The totals as people read them (``7/2``); JSON takes :attr:`scores` as numbers."""
        return [score_text(s) for s in self.scores]


def audit_log(
    resp: spb.GetMatchLogResponse,
    *,
    match_id: str | None = None,
    head: bytes | None = None,
    keys: list[TrustedKey] | None = None,
) -> AuditReport:
    """Run every check of :data:`CHECKS` in order; stop at the first discrepancy.

    ``match_id`` is the match the caller asked for (a server fetch); by default the log is
    audited as the match its MatchInfo names. ``head`` is a last hash the caller trusts
    (from an earlier copy of the log): without one, whoever holds a log can re-sign a
    consistent alternative history, which only the consequences of a change give away.
    ``keys``: public keys the caller trusts; one of them must have signed the log's
    checkpoint (the signature check, last, run only when keys are given).
    """
    info = resp.match
    report = AuditReport(
        match_id=info.match_id,
        game=info.game,
        players=info.players,
        seats=[s.name for s in sorted(info.seats, key=lambda s: s.seat)],
        scores=[codec.score_from_pb(t) for t in info.totals],
        winners=list(info.winners),
        entries=len(resp.entries),
        keyed=keys is not None,
    )
    audited = match_id if match_id is not None else info.match_id
    state = Checks(resp, audited, head)
    for name, _ in CHECKS:
        try:
            getattr(state, f"check_{name}")()
        except Discrepancy as found:
            report.failure = Failure(name, found.seq, found.reason)
            return report
        report.passed.append(name)
    if keys is not None:
        try:
            check_signature(resp, audited, keys)
        except Discrepancy as found:
            report.failure = Failure(SIGNATURE_CHECK[0], found.seq, found.reason)
            return report
        report.passed.append(SIGNATURE_CHECK[0])
    return report
