"""``cardarena replay``: a match log as text, round by round, or as a self-contained HTML page.

The log is audited first and the verdict is shown with it, because a rendering of a log that
does not hold would otherwise look as trustworthy as any other. Exit codes: 0 shown and
clean, 1 shown but the audit failed, 2 unreadable input.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

from cardarena.engine.cards import suit_code

from .audit import failure_text
from .auditing import AuditReport, audit_log
from .eventtext import cards_text
from .htmlpage import html_page
from .logfile import LogUnavailable
from .logsource import add_source_arguments, read_source
from .timeline import Step, Timeline, build_timeline

WIDTH = 100


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    add_source_arguments(parser)
    parser.add_argument(
        "--html", metavar="OUT.html", type=Path, help="write a self-contained HTML replay here"
    )

    def run(args: argparse.Namespace) -> int:
        try:
            resp, match_id = read_source(args, parser)
        except LogUnavailable as error:
            print(f"cardarena replay: {error}", file=sys.stderr)
            return 2
        report = audit_log(resp, match_id=match_id)
        timeline = build_timeline(resp)
        if args.html is not None:
            args.html.write_text(html_page(timeline, verdict(report)), encoding="utf-8")
            print(f"wrote {args.html}: {len(timeline.steps)} steps; audit {verdict(report)}")
        else:
            print(render_text(timeline, report))
        return 0 if report.ok else 1

    return run


def verdict(report: AuditReport) -> str:
    return "clean" if report.ok else failure_text(report)


def render_text(timeline: Timeline, report: AuditReport) -> str:
    return "\n".join(_lines(timeline, report))


def _lines(timeline: Timeline, report: AuditReport) -> Iterator[str]:
    names = timeline.names
    width = max(len(n) for n in names)
    yield f"{timeline.game}, {timeline.players} players, match {timeline.match_id}"
    yield "seats: " + ", ".join(n if n == f"seat {s}" else f"{s} {n}" for s, n in enumerate(names))
    yield f"audit: {verdict(report)}"
    turns: list[str] = []  # a solitaire round's plays and a trump call, each shown as one text
    calls: list[str] = []
    for step in timeline.steps:
        if step.what != "turn" and turns:
            yield from _wrapped("  plays  ", ", ".join(turns))
            turns = []
        if step.what != "call" and calls:
            yield from _wrapped("  trump  ", "; ".join(calls))
            calls = []
        if step.what == "deal":
            yield ""
            yield _round_title(step, names)
            for seat, hand in enumerate(step.hands):
                yield f"  {names[seat]:{width}}  {cards_text(hand)}"
        elif step.what == "call":
            calls.extend(step.lines)
        elif step.what == "trick" and step.trick is not None:
            trick = step.trick
            plays = ", ".join(f"{names[s]} {code}" for s, code in step.plays)
            won = names[trick.winner] if trick.winner is not None else "?"
            yield f"  trick {trick.number:2}  led by {names[trick.leader]}: {plays} -> {won}"
        elif step.what == "turn":
            turns.extend(_turns(step, names))
        elif step.what == "scores":
            yield from (f"  {line}" for line in step.lines if line.startswith("feats"))
            scores = ", ".join(
                f"{n} {s}" for n, s in zip(names, step.round_scores or [], strict=False)
            )
            yield f"  scores {scores}"
            yield "  totals " + ", ".join(
                f"{n} {t}" for n, t in zip(names, step.totals, strict=True)
            )
        elif step.what == "end":
            yield ""
            yield "final totals: " + ", ".join(
                f"{n} {t}" for n, t in zip(names, step.totals, strict=True)
            )
            yield "won by " + ", ".join(names[w] for w in step.winners)
        elif step.what == "cancelled":
            yield ""
            yield from step.lines
            yield "totals at cancellation: " + ", ".join(
                f"{n} {t}" for n, t in zip(names, step.totals, strict=True)
            )
            yield "no winners"


def _round_title(step: Step, names: list[str]) -> str:
    trump = f", trump {suit_code(step.trump)}" if step.trump is not None else ""
    return f"Round {step.round + 1}: {step.kind}, dealer {names[step.dealer]}{trump}"


def _turns(step: Step, names: list[str]) -> Iterator[str]:
    for seat, code in step.plays:
        yield f"{names[seat]} {code}"
    for line in step.lines:
        if " lays dead " in line:
            yield f"({line})"


def _wrapped(prefix: str, text: str) -> Iterator[str]:
    yield from textwrap.wrap(
        text, WIDTH, initial_indent=prefix, subsequent_indent=" " * len(prefix)
    )
