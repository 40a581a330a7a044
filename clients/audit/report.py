"""An audit's report for people (one line per check) and for programs (JSON).

Why apart from the checks: the same report is printed by ``cardarena audit``, and its
verdict line (:func:`failure_text`) is shown by ``cardarena replay`` above a rendering.
"""

from __future__ import annotations

from typing import Any

from ..logs.text import seat_names, totals_json
from .auditor import AuditReport
from .checks import CHECKS
from .signature import SIGNATURE_CHECK


def failure_text(report: AuditReport) -> str:
    """``FAILED at seq N: reason`` (or ``FAILED (MatchInfo): …`` for a fault outside the entries)."""
    failure = report.failure
    assert failure is not None
    where = f"at seq {failure.seq}" if failure.seq is not None else "(MatchInfo or seed)"
    return f"FAILED {where}: {failure.reason}"


def report_text(report: AuditReport, source: str) -> str:
    names = seat_names(report.seats, report.players)
    lines = [
        f"audit of {source}",
        f"  match    {report.match_id or '?'}: {report.game or '?'}, {report.players} players, "
        f"{report.entries} entries",
        "  seats    " + ", ".join(f"{s}: {n}" for s, n in enumerate(names)),
        "  totals   "
        + (
            ", ".join(
                f"{names[s] if s < len(names) else s} {t}" for s, t in enumerate(report.totals)
            )
            or "-"
        ),
        "  winners  "
        + (", ".join(names[w] if w < len(names) else f"seat {w}" for w in report.winners) or "-"),
        "  checks",
    ]
    failed = report.failure.check if report.failure is not None else None
    for name, what in CHECKS:
        mark = "ok" if name in report.passed else ("FAIL" if name == failed else "--")
        lines.append(f"    [{mark:4}] {name:9} {what}")
    name, what = SIGNATURE_CHECK
    if report.keyed:
        mark = "ok" if name in report.passed else ("FAIL" if name == failed else "--")
        lines.append(f"    [{mark:4}] {name:9} {what}")
    else:
        lines.append(
            f"    [{'--':4}] {name:9} not checked: give --key with the server's public key"
        )
    lines.append("CLEAN: every check passed" if report.ok else failure_text(report))
    return "\n".join(lines)


def report_json(report: AuditReport, source: str) -> dict[str, Any]:
    """``cardarena audit --json``: every number a JSON number (the totals as
    :func:`~..logs.text.totals_json` writes them, exact beside)."""
    failure = report.failure
    return {
        "ok": report.ok,
        "source": source,
        "match_id": report.match_id,
        "game": report.game,
        "players": report.players,
        "seats": report.seats,
        **totals_json(report.scores),
        "winners": report.winners,
        "entries": report.entries,
        "checks": [
            {
                "name": name,
                "what": what,
                "status": "passed"
                if name in report.passed
                else ("failed" if failure is not None and name == failure.check else "skipped"),
            }
            for name, what in (*CHECKS, SIGNATURE_CHECK)
            if report.keyed or name != SIGNATURE_CHECK[0]
        ],
        "signature_checked": report.keyed,
        "failure": None
        if failure is None
        else {"check": failure.check, "seq": failure.seq, "reason": failure.reason},
    }
