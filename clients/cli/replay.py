"""``cardarena replay``: a match log as text, round by round, or as a self-contained HTML page.

The log is audited first and the verdict is shown with it, because a rendering of a log that
does not hold would otherwise look as trustworthy as any other. Exit codes: 0 shown and
clean, 1 shown but the audit failed, 2 unreadable input.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ..audit import AuditReport, audit_log, failure_text
from ..logs import LogUnavailable
from ..replay import build_timeline, html_page, render_text
from ..tournament.terminal import print_error
from .argtypes import output_file, writing
from .logsource import add_source_arguments, read_source


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """show a match log round by round, or write a self-contained HTML replay"""
    add_source_arguments(parser)
    parser.add_argument(
        "--html",
        metavar="OUT.html",
        type=output_file,
        help="write a self-contained HTML replay here",
    )

    def run(args: argparse.Namespace) -> int:
        try:
            resp, match_id = read_source(args, parser)
        except LogUnavailable as error:
            print_error("cardarena replay", str(error))
            return 2
        report = audit_log(resp, match_id=match_id)
        timeline = build_timeline(resp)
        if args.html is not None:
            with writing(args.html):
                args.html.write_text(html_page(timeline, verdict(report)), encoding="utf-8")
            print(f"wrote {args.html}: {len(timeline.steps)} steps; audit {verdict(report)}")
        else:
            print(render_text(timeline, verdict(report)))
        return 0 if report.ok else 1

    return run


def verdict(report: AuditReport) -> str:
    return "clean" if report.ok else failure_text(report)
