"""The HTML replay: one self-contained page (inline CSS and JavaScript, no network at all).

Why self-contained: a match page is attached to a tournament report, mailed, or opened from
an archive years later; it must show the same thing offline and cannot load anything that a
third party could change. The timeline is embedded as JSON and drawn by a small script.

Stable hooks for tests and tools: ``#step`` (``data-step``, 1-based, and ``data-steps``),
``#prev``/``#next``/``#first``/``#last``, ``.hand[data-seat]`` holding ``.card[data-card]``,
``#trick`` (``data-leader``, ``data-winner``), ``#table``, ``#scores`` with ``#totals
td[data-seat]``, ``#winners``, ``#lines`` (a step's lines, the server's time-outs, faults and
forfeits among them), ``#policy`` (a tournament's fault policy, if any). The start step can be
given as ``?step=N``.
"""

from __future__ import annotations

import html
import json
from typing import Any

from cardarena.engine.cards import suit_code, suit_of

from ..logs.text import cards_text
from .assets import SCRIPT, STYLE, shared_cards, shared_style
from .timeline import Step, Timeline


def html_page(timeline: Timeline, verdict: str) -> str:
    data = {
        "game": timeline.game,
        "spanish": timeline.spanish,
        "players": timeline.players,
        "names": timeline.names,
        "verdict": verdict,
        "policy": timeline.policy,
        "steps": [_step_json(i, s) for i, s in enumerate(timeline.steps)],
    }
    embedded = (
        json.dumps(data, separators=(",", ":"))
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )
    title = html.escape(f"{timeline.game}, {timeline.players} players, match {timeline.match_id}")
    seats = "\n".join(
        f'<div class="seat" data-seat="{s}"><h3>{html.escape(n)}</h3>'
        f'<div class="hand" data-seat="{s}"></div><div class="stats" data-seat="{s}"></div></div>'
        for s, n in enumerate(timeline.names)
    )
    heads = "".join(
        f'<th data-seat="{s}">{html.escape(n)}</th>' for s, n in enumerate(timeline.names)
    )
    totals = "".join(f'<td data-seat="{s}"></td>' for s in range(timeline.players))
    bad = "" if verdict == "clean" else " failed"
    policy = f'\n<p id="policy">{html.escape(timeline.policy)}</p>' if timeline.policy else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cardarena replay: {title}</title>
<style>{shared_style()}</style>
<style>{STYLE}</style>
</head>
<body>
<header>
<h1>{title}</h1>
<p id="verdict" class="verdict{bad}">audit: {html.escape(verdict)}</p>{policy}
</header>
<nav>
<button id="first" type="button" title="first step (Home)">&laquo; First</button>
<button id="prev" type="button" title="previous step (left arrow)">&#x25C0; Previous</button>
<span id="step" data-step="1" data-steps="{len(timeline.steps)}"></span>
<button id="next" type="button" title="next step (right arrow)">Next &#x25B6;</button>
<button id="last" type="button" title="last step (End)">Last &raquo;</button>
<input id="slider" type="range" min="1" max="{max(len(timeline.steps), 1)}" value="1" aria-label="step">
</nav>
<main>
<section id="state"><h2 id="round-title"></h2><p id="trump"></p></section>
<section id="seats">
{seats}
</section>
<section id="play"><div id="trick" class="cards"></div><div id="table"></div></section>
<section id="story"><h2>This step</h2><ol id="lines"></ol></section>
<section id="score-sheet">
<table id="scores"><thead><tr><th>Round</th>{heads}</tr></thead><tbody></tbody>
<tfoot><tr id="totals"><th>Total</th>{totals}</tr></tfoot></table>
<p id="winners"></p>
</section>
</main>
<script type="application/json" id="match-data">{embedded}</script>
<script>{shared_cards()}</script>
<script>{SCRIPT}</script>
</body>
</html>
"""


def _step_json(index: int, step: Step) -> dict[str, Any]:
    trick = step.trick
    return {
        "label": _label(index, step),
        "what": step.what,
        "round": step.round,
        "kind": step.kind,
        "solitaire": step.layout is not None,
        "dealer": step.dealer,
        "trump": suit_code(step.trump) if step.trump is not None else None,
        "lines": step.lines,
        "notes": step.notes,
        "hands": [cards_text(h).split() if h else [] for h in step.hands],
        "trick": None
        if trick is None
        else {
            "leader": trick.leader,
            "winner": trick.winner,
            "number": trick.number,
            "cards": [[seat, code] for seat, code in step.plays],
        },
        "plays": [[seat, code] for seat, code in step.plays] if trick is None else [],
        "table": _table_rows(step),
        "dead": [cards_text(d).split() if d else [] for d in step.dead],
        "passes": step.passes,
        "tricks": step.tricks_won,
        "round_scores": step.round_scores,
        "totals": step.totals,
        "winners": step.winners,
    }


def _label(index: int, step: Step) -> str:
    if step.what == "end":
        return "the end"
    if step.what == "cancelled":
        return "the match is cancelled"
    what = {
        "deal": "the deal",
        "trick": f"trick {step.trick.number if step.trick else '?'}",
        "turn": f"turn {step.turn}",
        "call": "the trump call",
        "scores": "the scores",
    }.get(step.what, step.what)
    return f"Round {step.round + 1} ({step.kind}): {what}"


def _table_rows(step: Step) -> list[list[Any]]:
    """The cards on a solitaire table, one row per suit, in the layout's ranks (Fan Tan puts
    its aces low)."""
    layout = step.layout
    if layout is None:
        return []
    rows: dict[int, list[int]] = {}
    for card in step.table:
        rows.setdefault(suit_of(card), []).append(card)
    out: list[list[Any]] = []
    for suit in sorted(rows):
        cards = sorted(rows[suit], key=layout.rank)
        out.append([suit_code(suit), cards_text(cards).split()])
    return out
