"""``cardarena audit``: check a match log and report the first discrepancy, if any.

Exit codes are for scripts: 0 the log is clean, 1 it has a discrepancy, 2 it could not be
read at all (or the command was misused), so "tampered" and "missing" are never confused.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from ..audit import audit_log, report_json, report_text
from ..logs import LogUnavailable
from .argtypes import hash_hex
from .logsource import add_source_arguments, read_source

EXIT_CLEAN, EXIT_DISCREPANCY, EXIT_UNREADABLE = 0, 1, 2


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """check a match log: hash chain, seed commitment, deals, every action and result"""
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
