"""A match's timeline as plain text, round by round, for a terminal.

The audit's verdict comes in as a line of text and is shown under the title, so that a
rendering of a log that does not hold never looks as trustworthy as any other. The server's
time-outs, faults and forfeits are ``note`` lines before the step they precede.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

from cardarena.engine.cards import suit_code

from ..logs.text import cards_text
from .timeline import Step, Timeline

WIDTH = 100


def render_text(timeline: Timeline, verdict: str) -> str:
    return "\n".join(_lines(timeline, verdict))


def _lines(timeline: Timeline, verdict: str) -> Iterator[str]:
    names = timeline.names
    width = max(len(n) for n in names)
    yield f"{timeline.game}, {timeline.players} players, match {timeline.match_id}"
    yield "seats: " + ", ".join(n if n == f"seat {s}" else f"{s} {n}" for s, n in enumerate(names))
    if timeline.policy:
        yield f"policy: {timeline.policy}"
    yield f"audit: {verdict}"
    turns: list[str] = []  # a solitaire round's plays and a trump call, each shown as one text
    calls: list[str] = []
    for step in timeline.steps:
        if (step.what != "turn" or step.notes) and turns:
            yield from _wrapped("  plays  ", ", ".join(turns))
            turns = []
        if (step.what != "call" or step.notes) and calls:
            yield from _wrapped("  trump  ", "; ".join(calls))
            calls = []
        yield from (f"  note   {note}" for note in step.notes)
        if step.what == "deal":
            yield ""
            yield _round_title(step, names)
            for seat, hand in enumerate(step.hands):
                yield f"  {names[seat]:{width}}  {cards_text(hand)}"
        elif step.what == "call":
            calls.extend(_own(step))
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
            yield from _own(step)
            yield "totals at cancellation: " + ", ".join(
                f"{n} {t}" for n, t in zip(names, step.totals, strict=True)
            )
            yield "no winners"


def _own(step: Step) -> list[str]:
    """The step's lines but its notes (shown on lines of their own)."""
    return [line for line in step.lines if line not in step.notes]


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
