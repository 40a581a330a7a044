"""An ended tournament's results read from the store a page at a time, without its director.

Why: anyone may ask for an ended tournament, and reading one back whole (every match's
outcome, the standings folded again, the results signed over every line) cost seconds and
hundreds of megabytes for a plan of 100,000 matches; a stranger naming one ended tournament
after another could make the server do it again and again. Once a tournament has ended, its
brief results (standings, crosstable, counts, the signature over every line) are kept as one
row, and each page of match lines is made from that page's own rows: the plan (computed from
the revealed seed and the sealed contributions the brief holds) and the kept outcomes of the
page's matches. A page is the same bytes its director would have made (the signature covers
them), which ``tests/security/test_tournament_reload.py`` holds. A final tournament still in
memory has its lines made from its director, but the same way: a slice at a time. Either way
they are made once and kept as bytes (:mod:`.finals`).
"""

from __future__ import annotations

import asyncio

from cardarena.competition import mixed_seed
from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..hosting import Arena
from ..hosting.arena import match_id_for
from ..hosting.outcome import stored_outcomes
from ..store import TournamentRecord
from .director import Director
from .entrants import derive
from .entry import plan_matches
from .info import match_lines
from .spec import TournamentSpec

LINES_BETWEEN_TURNS = 50
"""Lines made between two turns of the event loop: a page of 1,000 costs about 5 ms of it
on a quiet machine, which a player's action arriving meanwhile would wait for whole; in
slices it waits for one. Under the tournaments flood (a probe timing each callback of the
loop, 2026-12-07) slices of 200 took about 4 ms, some over 10; slices of 50 take 1.8 ms on
average, 3 of 443 over 5 ms (docs/benchmarks.md, "Floods")."""


async def director_lines(director: Director, indices: range) -> list[tpb.TournamentMatch]:
    """The match lines ``indices`` of a final tournament in memory (its ``director``, no longer
    running), made :data:`LINES_BETWEEN_TURNS` at a time: nothing of a final tournament
    changes between two turns of the loop."""
    lines: list[tpb.TournamentMatch] = []
    for start in range(0, len(indices), LINES_BETWEEN_TURNS):
        if start:
            await asyncio.sleep(0)
        lines.extend(match_lines(director, indices[start : start + LINES_BETWEEN_TURNS]))
    return lines


async def stored_lines(
    arena: Arena, record: TournamentRecord, brief: tpb.TournamentInfo, indices: range
) -> list[tpb.TournamentMatch]:
    """The match lines ``indices`` of the ended tournament ``record`` whose kept results are
    ``brief``, from the store."""
    spec = TournamentSpec.from_json(record.config)
    contributions = [c or None for c in brief.contributions]
    mixed = mixed_seed(record.seed, contributions) if brief.entry_closed else record.seed
    plans = plan_matches(spec, mixed)
    ids: dict[int, str] = {}
    for n, i in enumerate(indices, 1):
        ids[i] = match_id_for(derive(record.secret, f"match/{i}"))
        if n % LINES_BETWEEN_TURNS == 0:
            await asyncio.sleep(0)
    records = await arena.store.get_matches(list(ids.values()))
    outcomes = await stored_outcomes(arena.store, list(records.values()))
    lines = []
    for n, (index, match_id) in enumerate(ids.items(), 1):
        if n % LINES_BETWEEN_TURNS == 0:
            await asyncio.sleep(0)
        plan = plans[index]
        line = tpb.TournamentMatch(
            index=plan.index,
            group=plan.group,
            deal=plan.deal,
            rotation=plan.rotation,
            entrants=[spec.entrants[e] for e in plan.seats],
        )
        outcome = outcomes.get(match_id)
        if outcome is not None:
            line.match_id = match_id
            line.status = spb.MATCH_STATUS_ENDED
            line.cancelled = outcome.cancelled
            line.last_hash = outcome.last_hash
            if not outcome.cancelled:
                line.totals.extend(codec.score_to_pb(t) for t in outcome.totals)
                line.winners.extend(outcome.winners)
                line.faults.extend(outcome.faults)
                line.forfeited.extend(outcome.forfeited)
        lines.append(line)
    return lines
