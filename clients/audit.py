"""``cardarena audit``: check a match log and report the first discrepancy, if any.

Exit codes are for scripts: 0 the log is clean, 1 it has a discrepancy, 2 it could not be
read at all (or the command was misused), so "tampered" and "missing" are never confused.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from .auditing import CHECKS, AuditReport, audit_log
from .eventtext import seat_names
from .logfile import LogUnavailable
from .logsource import add_source_arguments, read_source

EXIT_CLEAN, EXIT_DISCREPANCY, EXIT_UNREADABLE = 0, 1, 2


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    add_source_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--head",
        type=hash_hex,
        metavar="HEX",
        help="a last hash you trust (from an earlier copy): catches a re-signed chain",
    )

    def run(args: argparse.Namespace) -> int:
        try:
            resp, match_id = read_source(args, parser)
        except LogUnavailable as error:
            if args.json:
                print(json.dumps({"ok": False, "error": str(error)}))
            print(f"cardarena audit: {error}", file=sys.stderr)
            return EXIT_UNREADABLE
        report = audit_log(resp, match_id=match_id, head=args.head)
        source = args.logfile or f"{args.server} match {args.match}"
        print(
            json.dumps(report_json(report, source), indent=2)
            if args.json
            else report_text(report, source)
        )
        return EXIT_CLEAN if report.ok else EXIT_DISCREPANCY

    return run


def hash_hex(text: str) -> bytes:
    try:
        value = bytes.fromhex(text)
    except ValueError:
        value = b""
    if len(value) != 32:
        raise argparse.ArgumentTypeError(f"a hash is 64 hex digits, got {text!r}")
    return value


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
    lines.append("CLEAN: every check passed" if report.ok else failure_text(report))
    return "\n".join(lines)


def report_json(report: AuditReport, source: str) -> dict[str, Any]:
    failure = report.failure
    return {
        "ok": report.ok,
        "source": source,
        "match_id": report.match_id,
        "game": report.game,
        "players": report.players,
        "seats": report.seats,
        "totals": report.totals,
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
            for name, what in CHECKS
        ],
        "failure": None
        if failure is None
        else {"check": failure.check, "seq": failure.seq, "reason": failure.reason},
    }
