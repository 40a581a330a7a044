"""Every ladder of this server: opened, found, listed, closed, resumed after a restart, and
the signed snapshots of their boards.

A ladder has a :class:`~.director.LadderDirector` in memory while it runs, and after it has
closed once asked for (its board read back from the store, as after a restart).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections import OrderedDict
from collections.abc import Sequence

import structlog

from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import service_pb2 as spb

from ..errors import RequestReused, UnknownLadder
from ..hosting import Arena, HostedMatch
from ..hosting.arena import match_id_for
from ..hosting.clock import WALL_TIME
from ..hosting.credentials import is_secret
from ..hosting.outcome import stored_outcomes
from ..store import LadderRecord, StoreConflict, now_iso
from ..tournaments.entrants import derive, drawn_key, key_hash
from ..tournaments.groups import GroupProgress
from .director import LadderDirector
from .info import snapshot
from .spec import LadderSpec

log = structlog.get_logger(__name__)

KEPT_SNAPSHOTS = 8
"""Signed snapshots a ladder keeps for readers paging through one."""


def ladder_id_for(request_id: str) -> str:
    return hashlib.sha256(b"cardarena-ladder-v1:" + request_id.encode()).hexdigest()[:16]


class SnapshotGone(Exception):
    """The snapshot a reader pages through is no longer kept (FAILED_PRECONDITION)."""


class Ladders:
    noun = "ladder"
    """What it holds, as a refusal names it."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.directors: dict[str, LadderDirector] = {}
        self._snapshots: dict[str, OrderedDict[int, tuple[lpb.LadderSnapshot, bytes]]] = {}
        self._loading: dict[str, asyncio.Future[LadderDirector]] = {}

    async def create(
        self, spec: LadderSpec, *, request_id: str | None, drawn: Sequence[int], operator: bool
    ) -> tuple[LadderDirector, list[str]]:
        """Persist the ladder and start directing it; return it and the keys drawn for the
        entrants ``drawn`` names (as for tournaments: a retry with the same request id and
        settings finds the first ladder, and its keys only with proof of being its creator)."""
        ladder_id = secrets.token_hex(8) if request_id is None else ladder_id_for(request_id)
        secret = secrets.token_bytes(32)
        record = LadderRecord(ladder_id, now_iso(), _with_keys(spec, secret, drawn), secret)
        try:
            await self.arena.store.create_ladder(record)
        except StoreConflict:
            if request_id is None:
                raise
            existing = await self.get(ladder_id)
            again = _with_keys(spec, existing.record.secret, drawn)
            if json.loads(existing.record.config) != json.loads(again):
                raise RequestReused(request_id, "to open a ladder with other settings") from None
            if drawn and not operator and existing.spec.creator is None:
                raise RequestReused(
                    request_id,
                    "to open a ladder whose entrant keys the server drew: they are given again"
                    " only to the operator or to a request with its creator_secret",
                ) from None
            return existing, [drawn_key(existing.record.secret, i) for i in drawn]
        director = self._host(record)
        log.info("ladder_created", ladder_id=ladder_id, game=spec.game, entrants=len(spec.entrants))
        return director, [drawn_key(secret, i) for i in drawn]

    def _host(self, record: LadderRecord) -> LadderDirector:
        director = LadderDirector(
            record, LadderSpec.from_json(record.config), self.arena, on_change=self._changed
        )
        self.directors[record.ladder_id] = director
        director.start()
        return director

    def may_cancel(self, director: LadderDirector, secret: str) -> bool:
        """Whether ``secret`` is the ladder's creator secret (constant time)."""
        return is_secret(director.spec.creator, secret)

    def _changed(self, director: LadderDirector) -> None:
        """Nothing to do yet: readers ask for the board when they want it."""

    async def get(self, ladder_id: str) -> LadderDirector:
        """The ladder's director, read back from the store if it is not in memory (once,
        however many calls ask at the same time)."""
        director = self.directors.get(ladder_id)
        if director is not None:
            return director
        loading = self._loading.get(ladder_id)
        if loading is None:
            loading = asyncio.ensure_future(self._load(ladder_id))
            self._loading[ladder_id] = loading
            loading.add_done_callback(lambda _: self._loading.pop(ladder_id, None))
        return await asyncio.shield(loading)

    async def _load(self, ladder_id: str) -> LadderDirector:
        record = await self.arena.store.get_ladder(ladder_id)
        if record is None:
            raise UnknownLadder(ladder_id)
        director = self.directors.get(ladder_id)
        if director is not None:
            return director
        director = self._host(record)
        await director.ready.wait()
        return director

    async def list_records(
        self, *, page_size: int, page_token: str | None
    ) -> tuple[list[LadderRecord], str | None]:
        """One page of stored ladders (see ``EventStore.list_ladders``)."""
        return await self.arena.store.list_ladders(page_size=page_size, page_token=page_token)

    async def resume_unfinished(self) -> int:
        """Direct again every ladder that had not closed (after the arena resumed its
        matches): their entrants were cut off too, so the reconnection window opens."""
        count, token = 0, None
        while True:
            page, token = await self.arena.store.list_ladders(
                page_size=500, page_token=token, running_only=True
            )
            for record in page:
                if record.ladder_id in self.directors:
                    continue
                self.arena.reconnection.open(WALL_TIME.now())
                try:
                    self._host(record)
                except Exception:  # one unreadable row must not keep the server down
                    log.exception("ladder_not_resumed", ladder_id=record.ladder_id)
                    continue
                count += 1
            if token is None:
                break
        log.info("ladders_resumed", count=count)
        return count

    def match_changed(self, hosted: HostedMatch) -> None:
        """The arena's report: pass it to the director of the match's ladder."""
        director = self.directors.get(hosted.tournament_id)
        if director is not None:
            director.match_changed(hosted)

    async def group_of(self, hosted: HostedMatch) -> GroupProgress | None:
        """Where a ladder match's duplicate group stands (for the embargo's refusal)."""
        director = self.directors.get(hosted.tournament_id)
        if director is None:
            return None
        match_id = hosted.match_id
        for group in director.groups.values():
            first = group.number * director.size
            if any(director.match_id(first + r) == match_id for r in range(director.size)):
                return GroupProgress(
                    tournament_id=director.ladder_id,
                    group=group.number,
                    rotations=director.size,
                    ended=sum(state == "done" for state in group.state),
                    # Closing voids the waiting matches: every group still ends.
                    stopped=False,
                    kind="ladder",
                )
        return None

    # -- snapshots -------------------------------------------------------------------------

    def signed(
        self, director: LadderDirector, counted: int
    ) -> tuple[lpb.LadderSnapshot, spb.ResultsSignature | None]:
        """The snapshot at ``counted`` (0: a new one, now), signed; :class:`SnapshotGone` if
        that one is no longer kept."""
        kept = self._snapshots.setdefault(director.ladder_id, OrderedDict())
        if counted in (0, director.board.counted):
            made = snapshot(director)
            counted = made.ladder.counted
            if counted not in kept:
                signer = self.arena.signer
                signature = b"" if signer is None else signer.sign_ladder(made).SerializeToString()
                kept[counted] = (made, signature)
                while len(kept) > KEPT_SNAPSHOTS:
                    kept.popitem(last=False)
        if counted not in kept:
            raise SnapshotGone(
                f"the snapshot at {counted} counted matches is no longer kept: ask again with"
                " counted 0 for the latest"
            )
        made, signature = kept[counted]
        return made, spb.ResultsSignature.FromString(signature) if signature else None

    async def lines(
        self, director: LadderDirector, counted: int, first: int, limit: int
    ) -> list[lpb.LadderMatch]:
        """The counted matches ``first`` to ``first + limit`` (below ``counted``), from the
        store: a page costs its rows, however long the ladder has run."""
        last = min(first + limit, counted)
        if first >= last:
            return []
        size = director.size
        groups = dict(
            await self.arena.store.ladder_groups(
                director.ladder_id, first // size, (last - 1) // size - first // size + 1
            )
        )
        ids = {
            i: match_id_for(derive(director.record.secret, f"match/{i}"))
            for i in range(first, last)
        }
        records = await self.arena.store.get_matches(list(ids.values()))
        outcomes = await stored_outcomes(self.arena.store, list(records.values()))
        lines = []
        for index, match_id in ids.items():
            lineup = groups[index // size]
            rotation = index % size
            outcome = outcomes[match_id]
            lines.append(
                lpb.LadderMatch(
                    index=index,
                    group=index // size,
                    match_id=match_id,
                    players=lineup[rotation:] + lineup[:rotation],
                    last_hash=outcome.last_hash,
                    cancelled=outcome.cancelled,
                )
            )
        return lines

    async def shutdown(self) -> None:
        for director in list(self.directors.values()):
            await director.stop()


def _with_keys(spec: LadderSpec, secret: bytes, drawn: Sequence[int]) -> bytes:
    hashes = list(spec.key_hashes)
    for index in drawn:
        hashes[index] = key_hash(drawn_key(secret, index)).hex()
    data = json.loads(spec.to_json())
    data["key_hashes"] = hashes
    return json.dumps(data, sort_keys=True).encode()
