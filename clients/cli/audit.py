"""``cardarena audit``: check a match log, or a whole tournament, and report the first
discrepancy of each log.

Exit codes are for scripts: 0 the log is clean, 1 it has a discrepancy, 2 it could not be
read at all (or the command was misused), so "tampered" and "missing" are never confused.
With ``--key``, the server's signatures are checked too: a log signed by another key is a
discrepancy (1), a key that is not a key is a usage error (2).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from cardarena.v1 import ladder_pb2 as lpb

from ..audit import audit_log, report_json, report_text
from ..audit.ladder import audit_snapshot
from ..audit.parallel import default_workers
from ..audit.signature import BadKey, TrustedKey, parse_keys
from ..audit.tournament import TournamentAudit, audit_results, audit_tournament
from ..client import ArenaClient
from ..logs import LogUnavailable, save_log
from ..logs.bundle import fetch_logs, read_logs
from ..logs.results import load_results, once_each
from ..tournament.hosted_report import hosted_json
from ..tournament.terminal import print_error
from .argtypes import MAX_WORKERS, hash_hex, output_dir, output_file, whole, writing
from .ladder import snapshot_of, totals
from .logsource import add_source_arguments, read_source, unavailable_as

EXIT_CLEAN, EXIT_DISCREPANCY, EXIT_UNREADABLE = 0, 1, 2


def public_keys(text: str) -> list[TrustedKey]:
    """``--key``'s type: the keys in a key string or a key file, or a usage error."""
    try:
        return parse_keys(text)
    except BadKey as error:
        raise argparse.ArgumentTypeError(str(error)) from None


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
        "--ladder",
        type=Path,
        metavar="FILE",
        help="audit a ladder's snapshot (cardarena ladder snapshot --out FILE): its signature"
        " (with --key), every counted match's log pinned to the hash it records, fetched from"
        " --server (default the file's server), and the board recomputed from the logs",
    )
    parser.add_argument(
        "--results",
        type=Path,
        metavar="FILE",
        help="audit the tournament of a results file (cardarena tournament --json): every"
        " log pinned to the hash the file records, fetched from --server (default the file's"
        " server) or read from --logs DIR",
    )
    parser.add_argument(
        "--logs",
        type=Path,
        metavar="DIR",
        help="with --results: the logs as cardarena log fetch wrote them (MATCH_ID.pb|json)",
    )
    parser.add_argument(
        "--key",
        type=public_keys,
        action="append",
        metavar="PUBKEY",
        help="a public key you trust (ed25519:HEX as serve --print-public-key prints it, or a"
        " file of such lines); the log's checkpoint (and a tournament's results) must be signed"
        " by one of them. Repeat it for the keys of earlier rotations",
    )
    parser.add_argument(
        "--head",
        type=hash_hex,
        metavar="HEX",
        help="a last hash you trust (from an earlier copy): catches a re-signed chain",
    )
    parser.add_argument(
        "--workers",
        type=whole(1, MAX_WORKERS),
        default=None,
        metavar="N",
        help=f"processes auditing a tournament's logs, 1..{MAX_WORKERS} (default: one per CPU)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
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

    def run(args: argparse.Namespace) -> int:
        keys = None if args.key is None else [k for given in args.key for k in given]
        if args.ladder is not None:
            return _ladder(args, parser, keys)
        if args.tournament is not None or args.results is not None:
            return _tournament(args, parser, keys)
        if args.save_dir is not None:
            parser.error("--save-dir keeps a tournament's logs: give --tournament ID")
        if args.logs is not None:
            parser.error("--logs DIR holds a tournament's logs: give --results FILE")
        try:
            resp, match_id = read_source(args, parser)
        except LogUnavailable as error:
            if args.json:
                print(json.dumps({"ok": False, "error": str(error)}))
            print_error("cardarena audit", str(error))
            return EXIT_UNREADABLE
        if args.save is not None:
            if match_id is None:
                parser.error("--save keeps a log fetched from a server: give --server and --match")
            with writing(args.save):
                save_log(resp, args.save)
        report = audit_log(resp, match_id=match_id, head=args.head, keys=keys)
        source = args.logfile or f"{args.server} match {args.match}"
        print(
            json.dumps(report_json(report, source), indent=2)
            if args.json
            else report_text(report, source)
        )
        return EXIT_CLEAN if report.ok else EXIT_DISCREPANCY

    return run


def _tournament(
    args: argparse.Namespace, parser: argparse.ArgumentParser, keys: list[TrustedKey] | None
) -> int:
    if args.tournament is not None and args.results is not None:
        parser.error("give --tournament ID or --results FILE, not both")
    if args.save is not None:
        parser.error("--save keeps one match's log; for a tournament's, use --save-dir DIR")
    if args.logfile is not None or args.match is not None:
        parser.error("a tournament is audited as a whole: give neither LOGFILE nor --match")
    if args.tournament is not None and args.server is None:
        parser.error("--tournament ID needs --server HOST:PORT")
    if args.results is not None and args.save_dir is not None:
        parser.error("--save-dir is for --tournament; fetch a results file's logs with log fetch")
    workers = args.workers or default_workers()

    async def audit() -> TournamentAudit:
        if args.tournament is not None:
            async with ArenaClient(args.server) as client:
                await client.connected()
                return await audit_tournament(
                    client, args.tournament, save_dir=args.save_dir, keys=keys, workers=workers
                )
        results = load_results(args.results)
        logs = None
        if args.logs is not None:
            if results.info is None:
                raise LogUnavailable(f"{args.results} holds no TournamentInfo: give --server")
            logs = read_logs(args.logs, [m.match_id for m in results.info.matches if m.match_id])
        server = args.server or results.server or None
        if logs is not None and results.info is not None:
            return await audit_results(
                results, logs, None, keys=keys, workers=workers, written=hosted_json
            )
        if server is None:
            raise LogUnavailable(f"{args.results} names no server: give --server or --logs")
        async with ArenaClient(server) as client:
            await client.connected()
            return await audit_results(
                results, logs, client, keys=keys, workers=workers, written=hosted_json
            )

    def audited() -> int:
        report = asyncio.run(audit())
        if args.json:
            print(json.dumps(report.as_json(), indent=2))
        else:
            print(_summary(report))
            for finding in report.findings:
                print(f"  {finding}")
        return EXIT_CLEAN if report.ok else EXIT_DISCREPANCY

    return unavailable_as("cardarena audit", EXIT_UNREADABLE, audited)


def _ladder(
    args: argparse.Namespace, parser: argparse.ArgumentParser, keys: list[TrustedKey] | None
) -> int:
    if args.tournament is not None or args.results is not None or args.match is not None:
        parser.error("--ladder FILE is audited alone: give no --tournament, --results or --match")
    try:
        data = json.loads(args.ladder.read_text(), object_pairs_hook=once_each)
        taken = snapshot_of(data)
    except (OSError, ValueError) as error:
        print_error("cardarena audit", f"{args.ladder}: {error}")
        return EXIT_UNREADABLE
    server = args.server or data.get("server")
    if not server:
        parser.error(f"{args.ladder} names no server: give --server HOST:PORT")
    if not isinstance(server, str):
        print_error("cardarena audit", f"{args.ladder}: its server is {server!r}, not HOST:PORT")
        return EXIT_UNREADABLE
    workers = args.workers or default_workers()

    async def audit() -> TournamentAudit:
        async with ArenaClient(server) as client:
            await client.connected()
            logs = await fetch_logs(client, [m.match_id for m in taken.matches])
        return audit_snapshot(taken, dict(logs), keys=keys, workers=workers)

    def audited() -> int:
        report = asyncio.run(audit())
        if args.json:
            print(json.dumps(report.as_json(), indent=2))
        else:
            print(_ladder_summary(report, taken.snapshot.ladder))
            for finding in report.findings:
                print(f"  {finding}")
        return EXIT_CLEAN if report.ok else EXIT_DISCREPANCY

    return unavailable_as("cardarena audit", EXIT_UNREADABLE, audited)


SIGNED = {
    "verified": "signatures verified",
    "not checked": "signatures not checked (no --key)",
    "FAILED": "signatures FAILED",
}
"""A report's ``signature``, in words."""


def _verdict(report: TournamentAudit) -> str:
    return "all clean" if report.ok else f"{report.count} FINDINGS"


def _summary(report: TournamentAudit) -> str:
    trusted = ""
    if report.on_its_word and report.signature != "verified":
        trusted = f" ({report.on_its_word} on the file's word)"
    return (
        f"tournament {report.tournament_id}: {report.audited} of {report.matches} match logs"
        f" audited, {SIGNED[report.signature]}, the schedule and the standings"
        f" recomputed{trusted}: {_verdict(report)}"
    )


def _ladder_summary(report: TournamentAudit, ladder: lpb.LadderInfo) -> str:
    """The audit of a snapshot in two lines: the totals of the board it recomputed, then what
    was checked and the verdict. Two of the totals no log records (which players are retired,
    and entrants who never played): without a verified signature, the line says so."""
    trusted = "" if report.signature == "verified" else " (retired and entrants on its word)"
    return (
        f"ladder {report.tournament_id}: {totals(ladder)}\n"
        f"{report.audited} of {report.matches} match logs audited, {SIGNED[report.signature]},"
        f" the board recomputed{trusted}: {_verdict(report)}"
    )
