"""Every tournament of this server: created, found, listed, cancelled, resumed after a restart.

A running tournament has a :class:`~.director.Director` in memory; an ended one is loaded on
demand (its matches are read back from the store to give its final standings) and kept
among a bounded number of recently used ones.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import json
import secrets
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial

import structlog

from cardarena.v1 import tournament_pb2 as tpb

from ..errors import RequestReused, UnknownTournament
from ..hosting import Arena, HostedMatch
from ..hosting.clock import WALL_TIME
from ..hosting.completion import cancel_and_wait
from ..hosting.replication import renew_forever
from ..store import StoreConflict, StoreError, TournamentRecord, now_iso
from .director import Director
from .entrants import drawn_key, key_hash
from .finals import Brief, Finals, MakeLines
from .groups import GroupProgress, group_progress
from .info import signed_brief, tournament_info
from .pages import director_lines, stored_lines
from .seating import JoinElsewhere
from .spec import TournamentSpec

log = structlog.get_logger(__name__)

MAX_ENDED_IN_MEMORY = 100


def _with_keys(spec: TournamentSpec, secret: bytes, drawn: Sequence[int]) -> TournamentSpec:
    hashes = list(spec.key_hashes)
    for index in drawn:
        hashes[index] = key_hash(drawn_key(secret, index)).hex()
    return dataclasses.replace(spec, key_hashes=tuple(hashes))


def tournament_id_for(request_id: str) -> str:
    return hashlib.sha256(b"cardarena-tournament-v1:" + request_id.encode()).hexdigest()[:16]


class Tournaments:
    noun = "tournament"
    """What it holds, as a refusal names it."""

    def __init__(self, arena: Arena, *, join_elsewhere: JoinElsewhere | None = None) -> None:
        self.arena = arena
        self.join_elsewhere = join_elsewhere
        """How a director seats a match another replica writes (replicas only)."""
        self.directors: dict[str, Director] = {}
        """Every director a call may be given: running, or ended with its results loaded."""
        self._loading: dict[str, asyncio.Future[Director]] = {}
        """Tournaments being read back from the store, so that concurrent calls share one
        load and none is given a director whose results are not all read yet."""
        self._keeper: asyncio.Task[None] | None = None
        self._ended: OrderedDict[str, None] = OrderedDict()
        self._signing: dict[str, asyncio.Future[Brief]] = {}
        self.finals = Finals()

    @property
    def address(self) -> str:
        """This replica, as a tournament's row names its director ("" alone). Read when
        needed: a replica learns its address only once it listens."""
        owner = self.arena.owner
        return owner.address if owner is not None else ""

    async def create(
        self,
        spec: TournamentSpec,
        *,
        seed: bytes | None,
        request_id: str | None,
        drawn: Sequence[int] = (),
        operator: bool = False,
    ) -> tuple[Director, list[str]]:
        """Persist the tournament and start directing it; return it and the keys drawn for
        the entrants ``drawn`` names (whose ``key_hashes`` are empty). The keys derive from
        the tournament's secret, so a retry with the same request id and settings finds the
        first tournament and the same keys (:class:`RequestReused` with other settings, or
        another seed: a retry without one takes the first's, which it never saw).

        A retry is given drawn keys again only if it proves it is the creator: by the
        ``operator`` token, or by the creator secret of the first request (part of the
        settings it must repeat). Anyone else who learned or guessed the request id (the
        tournament id derives from it, and is public) would otherwise collect every key."""
        tournament_id = (
            secrets.token_hex(8) if request_id is None else tournament_id_for(request_id)
        )
        secret = secrets.token_bytes(32)
        record = TournamentRecord(
            tournament_id=tournament_id,
            created_at=now_iso(),
            config=_with_keys(spec, secret, drawn).to_json(),
            seed=seed if seed is not None else secrets.token_bytes(32),
            secret=secret,
            director=self.address,
        )
        try:
            await self.arena.store.create_tournament(record)
            if self.arena.owner is not None:  # its lease, before any replica sees it orphaned
                await self.arena.store.claim_tournament(
                    tournament_id, self.address, self.arena.owner.lease_ms
                )
        except StoreConflict:
            if request_id is None:
                raise
            existing = await self.get(tournament_id)
            again = _with_keys(spec, existing.record.secret, drawn).to_json()
            other_seed = seed is not None and not hmac.compare_digest(seed, existing.record.seed)
            if json.loads(existing.record.config) != json.loads(again) or other_seed:
                raise RequestReused(
                    request_id, "to create a tournament with other settings"
                ) from None
            if drawn and not operator and existing.spec.creator is None:
                raise RequestReused(
                    request_id,
                    "to create a tournament whose entrant keys the server drew: they are given "
                    "again only to the operator or to a request with its creator_secret",
                ) from None
            return existing, [drawn_key(existing.record.secret, i) for i in drawn]
        director = self._host(record)
        log.info(
            "tournament_created",
            tournament_id=tournament_id,
            game=spec.game,
            entrants=len(spec.entrants),
            matches=len(director.plans),
        )
        return director, [drawn_key(secret, i) for i in drawn]

    def _director(self, record: TournamentRecord) -> Director:
        return Director(
            record,
            TournamentSpec.from_json(record.config),
            self.arena,
            on_change=self._changed,
            directing=record.director == self.address,
            join_elsewhere=self.join_elsewhere,
        )

    def _host(self, record: TournamentRecord) -> Director:
        return self._publish(self._director(record))

    def _publish(self, director: Director) -> Director:
        """Make ``director`` the one calls are given: started if its tournament runs, kept
        among the ended ones in memory if not (its results read already)."""
        self.directors[director.tournament_id] = director
        if director.ended:
            self._changed(director)
        else:
            director.start()
        return director

    def _changed(self, director: Director) -> None:
        if director.ended and director.tournament_id not in self._ended:
            self._ended[director.tournament_id] = None
            while len(self._ended) > MAX_ENDED_IN_MEMORY:
                old, _ = self._ended.popitem(last=False)
                self.directors.pop(old, None)
        published = self.directors.get(director.tournament_id) is director
        if published and _final(director) and director.signed is None:
            self._signing_of(director)  # (not one being read back: half-read, it looks final)

    def may_cancel(self, director: Director, secret: str) -> bool:
        """Whether ``secret`` is the tournament's creator secret (constant time)."""
        return director.may_cancel(secret)

    async def get(self, tournament_id: str) -> Director:
        """The tournament's director, read back from the store if it is not in memory: once,
        however many calls ask for it at the same time, and given to none of them before its
        results are all read (a half-read ended tournament would be signed as final)."""
        director = self.directors.get(tournament_id)
        if director is not None:
            return director
        loading = self._loading.get(tournament_id)
        if loading is None:
            loading = asyncio.ensure_future(self._load(tournament_id))
            self._loading[tournament_id] = loading
            loading.add_done_callback(lambda done: self._loaded(tournament_id, done))
        return await asyncio.shield(loading)  # a caller that goes away stops no one's load

    def _loaded(self, tournament_id: str, done: asyncio.Future[Director]) -> None:
        self._loading.pop(tournament_id, None)
        if not done.cancelled():
            done.exception()  # retrieved: every caller that waited has it already

    async def _load(self, tournament_id: str) -> Director:
        record = await self.arena.store.get_tournament(tournament_id)
        if record is None:
            raise UnknownTournament(tournament_id)
        director = self.directors.get(tournament_id)  # hosted meanwhile (resumed, created)
        if director is not None:
            return director
        director = self._director(record)
        if director.ended:
            await director.load_results()
        return self._publish(director)

    async def published(
        self,
        tournament_id: str,
        page: Callable[[int], range | None],
        *,
        operator: bool,
    ) -> tpb.TournamentInfo | bytes:
        """What ``GetTournament`` answers, with the match lines ``page(planned)`` names. A
        final tournament's is the bytes of its ``TournamentInfo``: its signed brief and the
        page's lines, kept as they were first made (:mod:`.finals`), from its director if it
        is in memory, else from the page's own rows (:mod:`.pages`): never read back whole."""
        director = self.directors.get(tournament_id)
        brief = director.signed if director is not None else await self._kept_brief(tournament_id)
        if brief is None:
            if director is None:
                director = await self.get(tournament_id)
            if not _final(director):  # (an ended one's lines are all shown: operator or not)
                return tournament_info(
                    director, matches=page(len(director.plans)), operator=operator
                )
            brief = await asyncio.shield(self._signing_of(director))
        indices = page(brief.planned)
        if not indices:
            return brief.data
        director = self.directors.get(tournament_id)
        make: MakeLines
        if director is not None and _final(director):
            make = partial(director_lines, director)
        else:
            make = partial(self._stored_lines, tournament_id, brief)
        return brief.data + await self.finals.lines(tournament_id, brief.planned, indices, make)

    async def _kept_brief(self, tournament_id: str) -> Brief | None:
        """A final tournament's signed brief, if it is kept (in memory, or as its results
        row); ``None`` if it is not final, or not signed yet."""
        brief = self.finals.results.get(tournament_id)
        if brief is not None:
            return brief
        kept = await self.arena.store.kept_summaries("results", [tournament_id])
        if tournament_id not in kept:
            return None
        brief = Brief.of(kept[tournament_id])
        self.finals.results.keep(tournament_id, brief)
        return brief

    async def _stored_lines(
        self, tournament_id: str, brief: Brief, span: range
    ) -> list[tpb.TournamentMatch]:
        record = await self.arena.store.get_tournament(tournament_id)
        if record is None:
            raise UnknownTournament(tournament_id)
        info = tpb.TournamentInfo.FromString(brief.data)
        return await stored_lines(self.arena, record, info, span)

    def _signing_of(self, director: Director) -> asyncio.Future[Brief]:
        """Build and sign a final tournament's results (every line of its plan: about 1.7 s
        of Python for 100,000 lines) in a worker thread, once, begun as soon as it is final:
        not when a reader first asks, so that no anonymous call is ever the one that costs
        the server seconds (issue 29), and the event loop serves every match meanwhile."""
        tournament_id = director.tournament_id
        signing = self._signing.get(tournament_id)
        if signing is None:
            signing = asyncio.ensure_future(self._sign(director))
            self._signing[tournament_id] = signing
            signing.add_done_callback(lambda done: self._signed(tournament_id, done))
        return signing

    async def _sign(self, director: Director) -> Brief:
        """The signed brief, kept as a row at once (and in memory): read after a restart, it
        is not signed again however it is first asked for."""
        tournament_id = director.tournament_id
        brief = await self._kept_brief(tournament_id)  # signed before a restart
        if brief is None:
            info = await asyncio.to_thread(signed_brief, director, self.arena.signer)
            brief = Brief(info.SerializeToString(deterministic=True), info.planned)
            await self.arena.store.keep_summaries("results", {tournament_id: brief.data})
        director.signed = brief
        return brief

    def _signed(self, tournament_id: str, done: asyncio.Future[Brief]) -> None:
        self._signing.pop(tournament_id, None)
        if not done.cancelled() and done.exception() is not None:  # a reader retries it
            log.error(
                "tournament_not_signed", tournament_id=tournament_id, exc_info=done.exception()
            )

    async def listed(self, records: Sequence[TournamentRecord]) -> list[bytes]:
        """A page of ListTournaments, each tournament's ``TournamentInfo`` as bytes: a running
        one as its director has it now; an ended one as its kept summary (it never changes),
        so that a page of ended ones reads memory or rows rather than every match of each (a
        tournament of 100,000 matches took seconds to read back); the first to list an ended
        one without a summary keeps it."""
        summaries = self.finals.summaries
        ended = [r.tournament_id for r in records if r.status != "running"]
        kept = {tid: data for tid in ended if (data := summaries.get(tid)) is not None}
        unkept = [tid for tid in ended if tid not in kept]
        for tid, data in (await self.arena.store.kept_summaries("tournament", unkept)).items():
            summaries.keep(tid, data)
            kept[tid] = data
        fresh: dict[str, bytes] = {}
        infos = []
        for record in records:
            data = kept.get(record.tournament_id)
            if data is None:
                director = await self.get(record.tournament_id)
                data = tournament_info(director).SerializeToString(deterministic=True)
                if _final(director):  # every match it began is in
                    fresh[record.tournament_id] = data
                    summaries.keep(record.tournament_id, data)
            infos.append(data)
        await self.arena.store.keep_summaries("tournament", fresh)
        return infos

    async def group_of(self, hosted: HostedMatch) -> GroupProgress | None:
        """Where the duplicate group of ``hosted`` (a tournament's match) stands, as its
        director knows it (read back if need be); ``None`` if no director here knows it."""
        if not hosted.tournament_id:
            return None
        try:
            director = await self.get(hosted.tournament_id)
        except (UnknownTournament, StoreError):
            return None
        return group_progress(director, hosted.match_id)

    def match_changed(self, hosted: HostedMatch) -> None:
        """The arena's report: pass it to the director of the match's tournament."""
        if hosted.tournament_id:
            director = self.directors.get(hosted.tournament_id)
            if director is not None:
                director.match_changed(hosted)

    async def list_records(
        self, *, page_size: int, page_token: str | None, running_only: bool = False
    ) -> tuple[list[TournamentRecord], str | None]:
        """One page of stored tournaments (see ``EventStore.list_tournaments``)."""
        return await self.arena.store.list_tournaments(
            page_size=page_size, page_token=page_token, running_only=running_only
        )

    async def resume_unfinished(self) -> int:
        """Direct again every tournament that had not ended (after the arena resumed its
        matches)."""
        count = 0
        token = None
        while True:
            page, token = await self.list_records(
                page_size=500, page_token=token, running_only=True
            )
            for record in page:
                if record.tournament_id not in self.directors:
                    # Its entrants were cut off too: the matches it starts while they
                    # reconnect wait for them (hosting.clock.Reconnection).
                    self.arena.reconnection.open(WALL_TIME.now())
                    try:
                        self._host(record)
                    except Exception:  # one unreadable row must not keep the server down
                        log.exception("tournament_not_resumed", tournament_id=record.tournament_id)
                        continue
                    count += 1
            if token is None:
                break
        log.info("tournaments_resumed", count=count)
        if self.arena.owner is not None and self._keeper is None:
            self._keeper = asyncio.create_task(self._keep_leases())
        return count

    async def _keep_leases(self) -> None:
        """As a replica: renew the leases of the tournaments directed here, give up those
        lost, and take over the scheduling of any whose director stopped renewing."""
        owner = self.arena.owner
        assert owner is not None
        await renew_forever(owner, self._keep_leases_once, "tournament")

    async def _keep_leases_once(self) -> None:
        owner = self.arena.owner
        assert owner is not None
        held = await self.arena.store.renew_tournaments(self.address, owner.lease_ms)
        for director in list(self.directors.values()):
            if director.directing and not director.ended and director.tournament_id not in held:
                director.follow_instead()
        for tournament_id in await self.arena.store.orphaned_tournaments():
            claimed = await self.arena.store.claim_tournament(
                tournament_id, self.address, owner.lease_ms
            )
            if claimed == self.address:
                director = await self.get(tournament_id)
                director.direct_instead(self.address)

    async def shutdown(self) -> None:
        await cancel_and_wait(self._keeper)
        self._keeper = None
        for director in list(self.directors.values()):
            await director.stop()


def _final(director: Director) -> bool:
    """Ended, and none of its matches running: nothing of it changes any more."""
    return director.ended and not director.running
