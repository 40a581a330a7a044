"""The event store's queries: matches, seats, the append-only logs, requests."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Sequence
from typing import Final, TypeVar

from cardarena.v1.chain import chain_hash, genesis_hash

from .. import metrics
from .entropy import EntropyQueries
from .errors import DuplicateRequest, LeaseLost, StoreConflict, UnknownMatch
from .ladders import LadderQueries
from .leases import LeaseQueries
from .records import Answered, Fence, MatchLog, MatchRecord, Owner, SeatRecord, StoredEvent
from .rows import MATCHES
from .schema import ENDED, Connection, check_fence, check_page, match_row
from .signatures import SignatureQueries
from .summaries import SummaryQueries, marks
from .tournaments import TournamentQueries

T = TypeVar("T")

RESUME_BATCH: Final = 256
"""Matches per page of :meth:`EventStore.unfinished_log_batches`: few round trips for
thousands of matches, and one page of raw logs in memory at a time."""


class EventStore(
    LeaseQueries, TournamentQueries, LadderQueries, EntropyQueries, SignatureQueries, SummaryQueries
):
    """The event store. Open it once per process; share it across tasks; every write returns
    once it is durable."""

    # ------------------------------------------------------------------ writes

    async def create_match(self, record: MatchRecord, owner: Owner | None = None) -> Fence | None:
        """Insert a new match; :class:`StoreConflict` if its id exists. With an ``owner``, its
        lease is taken in the same transaction (so no other replica can claim the match in
        between) and its fence returned."""

        def work(conn: Connection) -> Fence | None:
            try:
                MATCHES.insert(conn, record)
            except Exception as exc:
                if self._is_unique_violation(exc):
                    raise StoreConflict(f"match {record.match_id!r} already exists") from exc
                raise
            if owner is None:
                return None
            return self._take_lease(conn, record.match_id, owner).fence

        return await self._submit(work)

    async def set_seat(
        self,
        match_id: str,
        seat: int,
        token_hash: bytes,
        name: str,
        *,
        fence: Fence | None = None,
    ) -> None:
        """Record who sits in ``seat``. :class:`StoreConflict` if it is taken or the match has
        ended, :class:`UnknownMatch` if there is no such match, ``ValueError`` if the seat
        number is outside ``0 <= seat < players``."""

        def work(conn: Connection) -> None:
            players, status = match_row(conn, match_id)
            if status == ENDED:
                raise StoreConflict(f"match {match_id!r} has ended")
            check_fence(conn, match_id, fence, self._share_lock)
            self._insert_seat(conn, players, SeatRecord(match_id, seat, token_hash, name))

        await self._submit(work)

    def _insert_seat(self, conn: Connection, players: int, seat: SeatRecord) -> None:
        if not 0 <= seat.seat < players:
            raise ValueError(f"seat {seat.seat} out of range for {players} players")
        try:
            conn.execute(
                "INSERT INTO seats (match_id, seat, token_hash, name) VALUES (?, ?, ?, ?)",
                (seat.match_id, seat.seat, seat.token_hash, seat.name),
            )
        except Exception as exc:
            if self._is_unique_violation(exc):
                raise StoreConflict(
                    f"seat {seat.seat} of match {seat.match_id!r} is taken"
                ) from exc
            raise

    async def append(
        self,
        match_id: str,
        payloads: list[bytes],
        *,
        expected_seq: int,
        request_id: str | None = None,
        seat: int | None = None,
        fence: Fence | None = None,
        join: SeatRecord | None = None,
    ) -> list[StoredEvent]:
        """Append ``payloads`` as events ``expected_seq + 1, expected_seq + 2, …``, durably.

        ``expected_seq`` must be the current last seq (:class:`StoreConflict` otherwise): the
        guard that makes a second writer of one match fail instead of forking its log; the
        primary key ``(match_id, seq)`` backs it up against a writer in another process. With a
        ``request_id`` the request is recorded in the same transaction as its events, and a
        repeat of it raises :class:`DuplicateRequest` with the original seqs, writing nothing;
        that check comes first, so a retry carrying its original, now stale, ``expected_seq``
        is recognised rather than refused as a conflict. With a ``fence``, the append fails with
        :class:`LeaseLost` unless that lease is still current. With ``join``, that seat is
        taken in the same transaction (its event and its row are never seen one without the
        other); a taken seat is a :class:`StoreConflict`. Appending to an ended match or
        an unknown one fails (:class:`StoreConflict`, :class:`UnknownMatch`).

        If the caller is cancelled while waiting, the append may still have been committed.
        """
        if not payloads:
            raise ValueError("append needs at least one payload")
        if expected_seq < 0:
            raise ValueError("expected_seq must be >= 0")
        blobs = [bytes(p) for p in payloads]

        def work(conn: Connection) -> list[StoredEvent]:
            tail = None if fence is not None or join is not None else self._known_tail(match_id)
            if tail is not None and tail[0] == expected_seq:
                return self._append_after(conn, match_id, blobs, tail, request_id, seat)
            # Everything the append must check, in one statement: one round trip to a server.
            # The lease row is read with a share lock where the database has one: a take-over
            # then waits for this append to commit, and reads the log with it.
            state = conn.execute(
                "SELECT m.players, m.status, r.first_seq, r.last_seq, r.seat,"
                f" (SELECT epoch FROM leases WHERE match_id = ? AND owner = ?{self._share_lock}),"
                " t.seq, t.hash"
                " FROM matches m"
                " LEFT JOIN requests r ON r.match_id = m.match_id AND r.request_id = ?"
                " LEFT JOIN (SELECT seq, hash FROM events WHERE match_id = ?"
                "            ORDER BY seq DESC LIMIT 1) t ON 1 = 1"
                " WHERE m.match_id = ?",
                (
                    match_id,
                    None if fence is None else fence.owner,
                    request_id,
                    match_id,
                    match_id,
                ),
            ).fetchone()
            if metrics.STAGE_TIMES:
                metrics.WRITER.lap("append: check")
            if state is None:
                raise UnknownMatch(match_id)
            players, status, first_done, last_done, seat_done, epoch, tail_seq, tail_hash = state
            if first_done is not None:
                raise DuplicateRequest(first_done, last_done, seat_done)
            if status == ENDED:
                raise StoreConflict(f"match {match_id!r} has ended")
            if fence is not None and epoch != fence.epoch:
                raise LeaseLost(match_id)
            last = 0 if tail_seq is None else tail_seq
            if last != expected_seq:
                raise StoreConflict(
                    f"match {match_id!r} is at seq {last}, not the expected {expected_seq}"
                )
            if join is not None:
                self._insert_seat(conn, players, join)
            prev = genesis_hash(match_id) if tail_hash is None else bytes(tail_hash)
            events = chained(match_id, blobs, expected_seq, prev)
            if metrics.STAGE_TIMES:
                metrics.WRITER.lap("append: hash")
            request = None if request_id is None else (request_id, seat)
            try:
                self._insert_events(conn, events, request)
            except Exception as exc:
                if self._is_unique_violation(exc):  # another process got there first
                    raise StoreConflict(
                        f"match {match_id!r} moved past seq {expected_seq} meanwhile"
                    ) from exc
                raise
            if metrics.STAGE_TIMES:
                metrics.WRITER.lap("append: insert")
            self._note_tail(match_id, events[-1].seq, events[-1].hash)
            return events

        return await self._submit(work)

    def _append_after(
        self,
        conn: Connection,
        match_id: str,
        blobs: list[bytes],
        tail: tuple[int, bytes],
        request_id: str | None,
        seat: int | None,
    ) -> list[StoredEvent]:
        """An append at the match's last seq as this writer committed it (:meth:`_known_tail`): the
        match is open (an ended match is forgotten) and the seq and hash are the log's own, so
        nothing is read first; a request id used before is refused by the requests' primary
        key, and then answered as :meth:`append` answers it (writing nothing: the batch or
        the request's savepoint is rolled back)."""
        last, prev = tail
        events = chained(match_id, blobs, last, prev)
        if metrics.STAGE_TIMES:
            metrics.WRITER.lap("append: hash")
        try:
            self._insert_events(conn, events, None if request_id is None else (request_id, seat))
        except Exception as exc:
            if not self._is_unique_violation(exc):
                raise
            self._forget_tail(match_id)
            done = None
            if request_id is not None:
                done = conn.execute(
                    "SELECT first_seq, last_seq, seat FROM requests"
                    " WHERE match_id = ? AND request_id = ?",
                    (match_id, request_id),
                ).fetchone()
            if done is not None:
                raise DuplicateRequest(*done) from exc
            raise StoreConflict(f"match {match_id!r} moved past seq {last} meanwhile") from exc
        if metrics.STAGE_TIMES:
            metrics.WRITER.lap("append: insert")
        self._note_tail(match_id, events[-1].seq, events[-1].hash)
        return events

    async def end_match(self, match_id: str, ended_at: str, *, fence: Fence | None = None) -> None:
        """Mark a match ended (its log is then final) and drop its lease. :class:`UnknownMatch`
        if there is no such match, :class:`StoreConflict` if it has already ended."""

        def work(conn: Connection) -> None:
            self._forget_tail(match_id)  # its log is final: no append may skip the check
            _players, status = match_row(conn, match_id)
            if status == ENDED:
                raise StoreConflict(f"match {match_id!r} has already ended")
            check_fence(conn, match_id, fence, self._share_lock)
            conn.execute(
                "UPDATE matches SET status = ?, ended_at = ? WHERE match_id = ?",
                (ENDED, ended_at, match_id),
            )
            conn.execute("DELETE FROM leases WHERE match_id = ?", (match_id,))

        await self._submit(work)

    # ------------------------------------------------------------------ reads

    async def get_match(self, match_id: str) -> MatchRecord | None:
        """The match's row, or ``None``."""

        def work(conn: Connection) -> MatchRecord | None:
            return MATCHES.get(conn, match_id)

        return await self._read(work)

    async def get_matches(self, match_ids: Sequence[str]) -> dict[str, MatchRecord]:
        """The stored matches among ``match_ids``, in one read, by id."""

        def work(conn: Connection) -> dict[str, MatchRecord]:
            return MATCHES.get_many(conn, match_ids)

        return await self._read(work)

    async def list_matches(
        self,
        *,
        status: str | None = None,
        game: str | None = None,
        page_size: int,
        page_token: str | None = None,
        newest_first: bool = False,
    ) -> tuple[list[MatchRecord], str | None]:
        """One page of matches in ``(created_at, match_id)`` order (``newest_first``: the
        reverse), optionally of one status and of one game.

        Keyset pagination: the token names the last row returned, so pages stay exact while
        matches are being created (no skips, no repeats, unlike OFFSET), and a page reads its
        own rows along an index of its filter, however deep it is. The token is opaque text;
        ``None`` as the next token means this was the last page.
        """
        check_page(page_size, page_token)

        def work(conn: Connection) -> tuple[list[MatchRecord], str | None]:
            return MATCHES.page(
                conn,
                filters=[
                    *([] if status is None else [("status = ?", (status,))]),
                    *([] if game is None else [("game = ?", (game,))]),
                ],
                page_size=page_size,
                page_token=page_token,
                descending=newest_first,
            )

        return await self._read(work)

    async def unfinished_matches(self) -> list[MatchRecord]:
        """Every match not ended, oldest first: what a restarting server must replay."""

        def work(conn: Connection) -> list[MatchRecord]:
            rows = conn.execute(
                f"SELECT {MATCHES.columns} FROM matches WHERE status != ?"
                " ORDER BY created_at, match_id",
                (ENDED,),
            ).fetchall()
            return [MATCHES.from_row(r) for r in rows]

        return await self._read(work)

    async def unfinished_logs(
        self,
        *,
        after: tuple[str, str] | None = None,
        limit: int | None = None,
    ) -> list[MatchLog]:
        """Every match not ended, oldest first, with its seats, its whole log and its recorded
        requests: what a restarting server replays, read in four statements however many
        matches there are (not four per match), from one snapshot of the database. With ``limit``, only the
        first ``limit`` of them after ``after`` (the ``(created_at, match_id)`` of the last
        one already read): :meth:`unfinished_log_batches` pages through them so that a
        restart never holds every log at once."""

        # CROSS JOIN: SQLite then reads each unfinished match's rows by their primary key
        # instead of scanning every event of every ended match (PostgreSQL plans it freely).
        def work(conn: Connection) -> list[MatchLog]:
            where, params = "status != ?", [ENDED]
            if after is not None:
                where += " AND (created_at > ? OR (created_at = ? AND match_id > ?))"
                params += [after[0], after[0], after[1]]
            page = "" if limit is None else " LIMIT ?"
            rows = conn.execute(
                f"SELECT {MATCHES.columns} FROM matches WHERE {where}"
                f" ORDER BY created_at, match_id{page}",
                (*params, *(() if limit is None else (limit,))),
            ).fetchall()
            logs = {r[0]: MatchLog(MATCHES.from_row(r), [], []) for r in rows}
            if not logs:
                return []
            if after is None and limit is None:
                chosen, ids = "m.status != ?", [ENDED]
            else:  # this page's matches only
                chosen, ids = f"m.match_id IN ({', '.join('?' * len(logs))})", list(logs)
            for r in conn.execute(
                "SELECT s.match_id, s.seat, s.token_hash, s.name FROM matches m CROSS JOIN seats s"
                f" WHERE s.match_id = m.match_id AND {chosen} ORDER BY m.match_id, s.seat",
                ids,
            ):
                log = logs[r[0]]
                log.seats.append(SeatRecord(log.record.match_id, r[1], bytes(r[2]), r[3]))
            for r in conn.execute(
                "SELECT e.match_id, e.seq, e.payload, e.hash FROM matches m CROSS JOIN events e"
                f" WHERE e.match_id = m.match_id AND {chosen} ORDER BY m.match_id, e.seq",
                ids,
            ):
                # The record's id, not the row's: one string per match, not one per event.
                log = logs[r[0]]
                log.events.append(StoredEvent(log.record.match_id, r[1], bytes(r[2]), bytes(r[3])))
            for r in conn.execute(
                "SELECT r.match_id, r.request_id, r.first_seq, r.last_seq"
                " FROM matches m CROSS JOIN requests r"
                f" WHERE r.match_id = m.match_id AND {chosen}",
                ids,
            ):
                logs[r[0]].requests.append(Answered(r[1], r[2], r[3]))
            return list(logs.values())

        return await self._read_snapshot(work)

    async def unfinished_log_batches(
        self, size: int | None = None
    ) -> AsyncIterator[list[MatchLog]]:
        """:meth:`unfinished_logs` a page of at most ``size`` matches at a time, oldest first,
        each page from one snapshot: a restart replaying them holds one page of raw logs at
        a time, not every unfinished match's whole log (hundreds of MB for thousands of long
        matches). A match ending between two pages is simply not in the later one. ``size``
        defaults to :data:`RESUME_BATCH`."""
        size = RESUME_BATCH if size is None else size
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        after: tuple[str, str] | None = None
        while True:
            page = await self.unfinished_logs(after=after, limit=size)
            if not page:
                return
            yield page
            if len(page) < size:
                return
            last = page[-1].record
            after = (last.created_at, last.match_id)

    async def seats_of(self, match_ids: Sequence[str]) -> dict[str, list[SeatRecord]]:
        """The taken seats of each of ``match_ids``, by seat number, in one read."""
        if not match_ids:
            return {}

        def work(conn: Connection) -> dict[str, list[SeatRecord]]:
            rows = conn.execute(
                "SELECT match_id, seat, token_hash, name FROM seats"
                f" WHERE match_id IN ({marks(len(match_ids))}) ORDER BY match_id, seat",
                tuple(match_ids),
            ).fetchall()
            found: dict[str, list[SeatRecord]] = {match_id: [] for match_id in match_ids}
            for r in rows:
                found[r[0]].append(SeatRecord(r[0], r[1], bytes(r[2]), r[3]))
            return found

        return await self._read(work)

    async def get_seats(self, match_id: str) -> list[SeatRecord]:
        """The taken seats of a match, by seat number (empty for an unknown match)."""

        def work(conn: Connection) -> list[SeatRecord]:
            rows = conn.execute(
                "SELECT match_id, seat, token_hash, name FROM seats WHERE match_id = ?"
                " ORDER BY seat",
                (match_id,),
            ).fetchall()
            return [SeatRecord(r[0], r[1], bytes(r[2]), r[3]) for r in rows]

        return await self._read(work)

    async def read_events(
        self, match_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """Events with ``seq > after_seq`` in order, at most ``limit`` of them: what a client
        resuming from its last seq needs. Only committed events are ever visible."""
        if limit is not None and limit < 0:
            raise ValueError("limit must be >= 0")

        def work(conn: Connection) -> list[StoredEvent]:
            rows = conn.execute(
                "SELECT seq, payload, hash FROM events WHERE match_id = ? AND seq > ?"
                " ORDER BY seq LIMIT ?",
                (match_id, after_seq, self._no_limit if limit is None else limit),
            ).fetchall()
            return [StoredEvent(match_id, r[0], bytes(r[1]), bytes(r[2])) for r in rows]

        return await self._read(work)

    async def peer_secret(self) -> bytes:
        """The secret by which replicas sharing this store know each other's calls: drawn by
        the first to ask and kept in the database, so that only those who can read it (the
        replicas) can present it. Never logged."""
        candidate = secrets.token_bytes(32)

        def work(conn: Connection) -> bytes:
            conn.execute(
                "INSERT INTO peer_secret (id, secret) VALUES (1, ?) ON CONFLICT DO NOTHING",
                (candidate,),
            )
            return bytes(conn.execute("SELECT secret FROM peer_secret WHERE id = 1").fetchone()[0])

        return await self._submit(work)

    async def read_tail(self, match_id: str, count: int) -> list[StoredEvent]:
        """The last ``count`` events in order: how an ended match is listed without reading
        (and replaying) its whole log."""

        def work(conn: Connection) -> list[StoredEvent]:
            rows = conn.execute(
                "SELECT seq, payload, hash FROM events WHERE match_id = ?"
                " ORDER BY seq DESC LIMIT ?",
                (match_id, count),
            ).fetchall()
            return [StoredEvent(match_id, r[0], bytes(r[1]), bytes(r[2])) for r in reversed(rows)]

        return await self._read(work)

    async def last_seq(self, match_id: str) -> int:
        """The seq of the match's last event, 0 if it has none."""
        return (await self._tail(match_id))[0]

    async def last_hash(self, match_id: str) -> bytes:
        """The hash of the match's last event, or its genesis hash if it has none: in both
        cases the ``prev_hash`` its next event will chain from."""
        return (await self._tail(match_id))[1]

    async def request_result(self, match_id: str, request_id: str) -> tuple[int, int] | None:
        """``(first_seq, last_seq)`` written by a recorded request, or ``None``."""

        def work(conn: Connection) -> tuple[int, int] | None:
            row = conn.execute(
                "SELECT first_seq, last_seq FROM requests WHERE match_id = ? AND request_id = ?",
                (match_id, request_id),
            ).fetchone()
            return None if row is None else (row[0], row[1])

        return await self._read(work)

    async def request_results(self, match_id: str) -> list[Answered]:
        """Every request recorded for the match: what a replica taking it over must know to
        answer a retry of one another replica wrote."""

        def work(conn: Connection) -> list[Answered]:
            rows = conn.execute(
                "SELECT request_id, first_seq, last_seq FROM requests WHERE match_id = ?",
                (match_id,),
            ).fetchall()
            return [Answered(r[0], r[1], r[2]) for r in rows]

        return await self._read(work)

    async def _tail(self, match_id: str) -> tuple[int, bytes]:
        def work(conn: Connection) -> tuple[int, bytes]:
            row = conn.execute(
                "SELECT seq, hash FROM events WHERE match_id = ? ORDER BY seq DESC LIMIT 1",
                (match_id,),
            ).fetchone()
            return (0, genesis_hash(match_id)) if row is None else (row[0], bytes(row[1]))

        return await self._read(work)


def chained(match_id: str, blobs: list[bytes], after_seq: int, prev: bytes) -> list[StoredEvent]:
    """``blobs`` as the entries after ``after_seq``, each hash chained to the one before (the
    entry at ``after_seq`` has hash ``prev``)."""
    events = []
    for seq, payload in enumerate(blobs, start=after_seq + 1):
        prev = chain_hash(prev, payload)
        events.append(StoredEvent(match_id, seq, payload, prev))
    return events
