"""``cardarena audit``: check a match log and report the first discrepancy, if any.

Exit codes are for scripts: 0 the log is clean, 1 it has a discrepancy, 2 it could not be
read at all (or the command was misused), so "tampered" and "missing" are never confused.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable

import grpc

from ..audit import audit_log, report_json, report_text
from ..audit.tournament import TournamentAudit, audit_tournament
from ..client import ArenaClient
from ..logs import LogUnavailable, save_log
from .argtypes import hash_hex, output_dir, output_file
from .logsource import add_source_arguments, read_source

EXIT_CLEAN, EXIT_DISCREPANCY, EXIT_UNREADABLE = 0, 1, 2


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """check a match log: hash chain, seed commitment, deals, every action and result"""
    add_source_arguments(parser)
    parser.add_argument(
        "--tournament",
        metavar="ID",
        help="audit a whole hosted tournament (with --server): every log pinned to the hash it"
        " published, the schedule its revealed seed plans, the standings recomputed",
    )
    parser.add_argument(
        "--save",
        type=output_file,
        metavar="FILE",
        help="keep the log fetched with --server/--match (.json, else binary protobuf), to audit"
        " or replay later without the server",
    )
    parser.add_argument(
        "--save-dir",
        type=output_dir,
        metavar="DIR",
        help="with --tournament: keep every match log there, as MATCH_ID.pb",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--head",
        type=hash_hex,
        metavar="HEX",
        help="a last hash you trust (from an earlier copy): catches a re-signed chain",
    )

    def run(args: argparse.Namespace) -> int:
        if args.tournament is not None:
            return _tournament(args, parser)
        if args.save_dir is not None:
            parser.error("--save-dir keeps a tournament's logs: give --tournament ID")
        try:
            resp, match_id = read_source(args, parser)
        except LogUnavailable as error:
            if args.json:
                print(json.dumps({"ok": False, "error": str(error)}))
            print(f"cardarena audit: {error}", file=sys.stderr)
            return EXIT_UNREADABLE
        if args.save is not None:
            if match_id is None:
                parser.error("--save keeps a log fetched from a server: give --server and --match")
            save_log(resp, args.save)
        report = audit_log(resp, match_id=match_id, head=args.head)
        source = args.logfile or f"{args.server} match {args.match}"
        print(
            json.dumps(report_json(report, source), indent=2)
            if args.json
            else report_text(report, source)
        )
        return EXIT_CLEAN if report.ok else EXIT_DISCREPANCY

    return run


def _tournament(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.save is not None:
        parser.error("--save keeps one match's log; for a tournament's, use --save-dir DIR")
    if args.server is None or args.logfile is not None or args.match is not None:
        parser.error("--tournament ID needs --server HOST:PORT and neither LOGFILE nor --match")

    async def audit() -> TournamentAudit:
        async with ArenaClient(args.server) as client:
            return await audit_tournament(client, args.tournament, save_dir=args.save_dir)

    try:
        report = asyncio.run(audit())
    except grpc.aio.AioRpcError as error:
        print(f"cardarena audit: {error.code().name}: {error.details()}", file=sys.stderr)
        return EXIT_UNREADABLE
    if args.json:
        print(
            json.dumps(
                {
                    "tournament": report.tournament_id,
                    "ok": report.ok,
                    "matches": report.matches,
                    "audited": report.audited,
                    "findings": report.count,
                    "first_findings": report.findings,
                },
                indent=2,
            )
        )
    else:
        verdict = "all clean" if report.ok else f"{report.count} FINDINGS"
        print(
            f"tournament {report.tournament_id}: {report.audited} of {report.matches} match"
            f" logs audited, the schedule and the standings recomputed: {verdict}"
        )
        for finding in report.findings:
            print(f"  {finding}")
    return EXIT_CLEAN if report.ok else EXIT_DISCREPANCY
