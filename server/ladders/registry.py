"""Every ladder of this server: opened, found, listed, closed, resumed after a restart, and
the signed snapshots of their boards.

A ladder has a :class:`~.director.LadderDirector` in memory while it runs. Once it has closed
and its every match has counted, its board never changes again: its last signed snapshot is
kept as a row (the store's ``ladder`` summaries, as an ended tournament's results are), its
director leaves memory, and every later read of it (``GetLadder``, ``ListLadders``, a page of
its snapshot) costs that row and the page's own rows, never a replay of its matches, which
for a ladder that ran for days would be thousands of logs, asked for by anyone.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import structlog

from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import service_pb2 as spb

from ..errors import DirectedElsewhere, RequestReused, UnknownLadder
from ..hosting import Arena, HostedMatch
from ..hosting.arena import match_id_for
from ..hosting.clock import WALL_TIME
from ..hosting.completion import cancel_and_wait
from ..hosting.credentials import is_secret
from ..hosting.outcome import stored_outcomes
from ..hosting.replication import renew_forever
from ..store import LadderRecord, StoreConflict, now_iso
from ..tournaments.entrants import derive, drawn_key, key_hash
from ..tournaments.groups import GroupProgress
from .director import LadderDirector
from .info import ladder_info, snapshot
from .spec import LadderSpec

log = structlog.get_logger(__name__)

KEPT_SNAPSHOTS = 8
"""Signed snapshots a ladder keeps for readers paging through one."""


def ladder_id_for(request_id: str) -> str:
    return hashlib.sha256(b"cardarena-ladder-v1:" + request_id.encode()).hexdigest()[:16]


class SnapshotGone(Exception):
    """The snapshot a reader pages through is no longer kept (FAILED_PRECONDITION)."""


@dataclass(frozen=True)
class Closed:
    """A closed ladder whose every match has counted, as its kept row has it: its record
    (the secret its match ids derive from), its settings, and its last signed snapshot."""

    record: LadderRecord
    spec: LadderSpec
    kept: lpb.GetLadderSnapshotResponse
    """The snapshot and its signature, without match lines."""

    @property
    def info(self) -> lpb.LadderInfo:
        """The ladder as ``GetLadder`` shows it: its final board (nobody is connected, and
        when each was last seen is not kept)."""
        return self.kept.snapshot.ladder

    def signed(self, counted: int) -> tuple[lpb.LadderSnapshot, spb.ResultsSignature | None]:
        if counted not in (0, self.info.counted):
            raise SnapshotGone(
                f"the snapshot at {counted} counted matches is no longer kept: the ladder"
                f" closed with {self.info.counted}; ask again with counted 0"
            )
        signature = self.kept.signature if self.kept.HasField("signature") else None
        return self.kept.snapshot, signature


class KeptLadders:
    """The closed ladders kept as rows, as ``Guard.cancelling`` finds a target: closing one
    again answers it as it closed, to its operator or creator."""

    noun = "ladder"

    def __init__(self, closed: Closed) -> None:
        self.closed = closed

    async def get(self, key: str) -> Closed:
        return self.closed

    def may_cancel(self, target: Closed, secret: str) -> bool:
        return is_secret(target.spec.creator, secret)


class Ladders:
    noun = "ladder"
    """What it holds, as a refusal names it."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.directors: dict[str, LadderDirector] = {}
        self._snapshots: dict[str, OrderedDict[int, tuple[lpb.LadderSnapshot, bytes]]] = {}
        self._loading: dict[str, asyncio.Future[LadderDirector]] = {}
        self._keeping: dict[str, asyncio.Task[None]] = {}
        """Final ladders whose row is being written (then their directors leave memory)."""
        self._keeper: asyncio.Task[None] | None = None
        """On replicas: renews the leases of the ladders directed here, takes orphans over."""

    @property
    def address(self) -> str:
        """This replica, as a ladder's lease names its director ("" alone). Read when
        needed: a replica learns its address only once it listens."""
        owner = self.arena.owner
        return owner.address if owner is not None else ""

    async def _claim(self, ladder_id: str) -> str:
        """On replicas, the lease on a running ladder for this one if nobody else holds it
        live: who directs it now ("" alone, or if it is not running)."""
        owner = self.arena.owner
        if owner is None:
            return ""
        return await self.arena.store.claim_ladder(ladder_id, self.address, owner.lease_ms)

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
            await self._claim(ladder_id)  # before any replica sees it orphaned
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
        """A final ladder is kept as a row (readers ask for the board when they want it)."""
        ladder_id = director.ladder_id
        if director.final and ladder_id not in self._keeping:
            task = asyncio.create_task(self._keep(director))
            self._keeping[ladder_id] = task
            task.add_done_callback(lambda _: self._keeping.pop(ladder_id, None))

    async def _keep(self, director: LadderDirector) -> None:
        """Keep a final ladder's signed snapshot as its row, then let its director go: every
        later read is of the row. A store that fails leaves it in memory, kept again by the
        next process that reads it back."""
        made, signature = self.signed(director, 0)
        kept = lpb.GetLadderSnapshotResponse(snapshot=made)
        if signature is not None:
            kept.signature.CopyFrom(signature)
        try:
            await self.arena.store.keep_summaries(
                "ladder", {director.ladder_id: kept.SerializeToString(deterministic=True)}
            )
        except Exception:
            log.warning("ladder_not_kept", ladder_id=director.ladder_id, exc_info=True)
            return
        if self.directors.get(director.ladder_id) is director:
            del self.directors[director.ladder_id]
            self._snapshots.pop(director.ladder_id, None)
        await director.stop()

    async def closed(self, ladder_id: str) -> Closed | None:
        """The ladder as its kept row has it, if it is closed, final and not in memory (two
        reads of one row each); ``None`` otherwise."""
        if ladder_id in self.directors:
            return None
        kept = await self.arena.store.kept_summaries("ladder", [ladder_id])
        if ladder_id not in kept:
            return None
        record = await self.arena.store.get_ladder(ladder_id)
        if record is None:
            return None
        return Closed(
            record,
            LadderSpec.from_json(record.config),
            lpb.GetLadderSnapshotResponse.FromString(kept[ladder_id]),
        )

    async def info(self, ladder_id: str) -> tuple[lpb.LadderInfo, LadderDirector | None]:
        """``GetLadder``'s ladder: as its director has it now, else from its kept row, else
        read back (once; a closed one is then kept)."""
        director = self.directors.get(ladder_id)
        if director is None:
            closed = await self.closed(ladder_id)
            if closed is not None:
                return closed.info, None
            director = await self.get(ladder_id)
        return ladder_info(director), director

    async def listed(
        self,
        records: Sequence[LadderRecord],
        elsewhere: Callable[[DirectedElsewhere, str], Awaitable[lpb.LadderInfo]],
    ) -> list[lpb.LadderInfo]:
        """A page of ``ListLadders``: a ladder in memory as its director has it now, a closed
        one from its kept row (one read for the page), only one of neither read back, and on
        replicas one directed by another replica as ``elsewhere`` asks it there."""
        absent = [
            r.ladder_id
            for r in records
            if r.status != "running" and r.ladder_id not in self.directors
        ]
        kept = await self.arena.store.kept_summaries("ladder", absent)
        infos = []
        for record in records:
            director = self.directors.get(record.ladder_id)
            if director is None and record.ladder_id in kept:
                made = lpb.GetLadderSnapshotResponse.FromString(kept[record.ladder_id])
                infos.append(made.snapshot.ladder)
                continue
            if director is None:
                try:
                    director = await self.get(record.ladder_id)
                except DirectedElsewhere as moved:
                    infos.append(await elsewhere(moved, record.ladder_id))
                    continue
            infos.append(ladder_info(director))
        return infos

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
        holder = await self._claim(ladder_id) if record.status == "running" else ""
        if holder not in ("", self.address):  # on replicas, one directs a running ladder
            raise DirectedElsewhere(ladder_id, holder, self.noun)
        director = self._host(record)
        await director.ready.wait()
        return director

    async def list_records(
        self, *, page_size: int, page_token: str | None, newest_first: bool = False
    ) -> tuple[list[LadderRecord], str | None]:
        """One page of stored ladders (see ``EventStore.list_ladders``)."""
        return await self.arena.store.list_ladders(
            page_size=page_size, page_token=page_token, newest_first=newest_first
        )

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
                if await self._claim(record.ladder_id) not in ("", self.address):
                    continue  # another replica directs it
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
        if self.arena.owner is not None and self._keeper is None:
            self._keeper = asyncio.create_task(self._keep_leases())
        return count

    async def _keep_leases(self) -> None:
        """As a replica: renew the leases of the ladders directed here, let go of those lost,
        and take over the scheduling of any whose director stopped renewing."""
        owner = self.arena.owner
        assert owner is not None
        await renew_forever(owner, self._keep_leases_once, "ladder")

    async def _keep_leases_once(self) -> None:
        owner = self.arena.owner
        assert owner is not None
        held = await self.arena.store.renew_ladders(self.address, owner.lease_ms)
        for director in list(self.directors.values()):
            if not director.closed and director.ladder_id not in held:
                await self._let_go(director)
        for ladder_id in await self.arena.store.orphaned_ladders():
            if await self._claim(ladder_id) != self.address or ladder_id in self.directors:
                continue
            record = await self.arena.store.get_ladder(ladder_id)
            if record is not None and record.status == "running":
                log.info("ladder_lease_taken", ladder_id=ladder_id)
                self.arena.reconnection.open(WALL_TIME.now())  # its entrants come over
                self._host(record)

    async def _let_go(self, director: LadderDirector) -> None:
        """Another replica directs the ladder now: stop scheduling it here and end its
        entrants' streams, each told where to enter again."""
        log.info("ladder_lease_lost", ladder_id=director.ladder_id)
        if self.directors.get(director.ladder_id) is director:
            del self.directors[director.ladder_id]
        director.moved = True
        await director.stop()
        for links in director.links.by_entrant:
            for link in list(links):
                link.offer(None)

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
        number = director.group_of_match.get(hosted.match_id)
        group = None if number is None else director.groups.get(number)
        if group is None:
            return None
        return GroupProgress(
            tournament_id=director.ladder_id,
            group=group.number,
            rotations=director.size,
            ended=sum(state == "done" for state in group.state),
            # Closing voids the waiting matches: every group still ends.
            stopped=False,
            kind="ladder",
        )

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
            if counted not in kept or kept[counted][0] != made:  # new, or closed since
                signer = self.arena.signer
                signature = b"" if signer is None else signer.sign_ladder(made).SerializeToString()
                kept[counted] = (made, signature)
                kept.move_to_end(counted)
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
        self, record: LadderRecord, size: int, counted: int, first: int, limit: int
    ) -> list[lpb.LadderMatch]:
        """The counted matches ``first`` to ``first + limit`` (below ``counted``) of the
        ladder ``record`` whose groups are ``size`` matches, from the store: a page costs its
        rows, however long the ladder has run."""
        last = min(first + limit, counted)
        if first >= last:
            return []
        groups = dict(
            await self.arena.store.ladder_groups(
                record.ladder_id, first // size, (last - 1) // size - first // size + 1
            )
        )
        ids = {i: match_id_for(derive(record.secret, f"match/{i}")) for i in range(first, last)}
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
        await cancel_and_wait(self._keeper)
        self._keeper = None
        for task in list(self._keeping.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for director in list(self.directors.values()):
            await director.stop()


def _with_keys(spec: LadderSpec, secret: bytes, drawn: Sequence[int]) -> bytes:
    hashes = list(spec.key_hashes)
    for index in drawn:
        hashes[index] = key_hash(drawn_key(secret, index)).hex()
    data = json.loads(spec.to_json())
    data["key_hashes"] = hashes
    return json.dumps(data, sort_keys=True).encode()
