"""What a restart reads from the store, on both backends: every unfinished match with its
seats and log from one snapshot (a match ending or growing while the read runs tears
nothing), and the same again a page at a time, so that a restart need not hold every log at
once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cardarena.server.store import EventStore, MatchLog
from tests.stores import record, with_store


def payloads(match_id: str, first: int, count: int) -> list[bytes]:
    return [f"{match_id}-{seq}".encode() for seq in range(first, first + count)]


async def fill(store: EventStore) -> None:
    """Matches in every state a restart meets, two created in the same microsecond (ordered
    by id then), and ended ones among them."""
    stamp = "2026-01-01T00:00:0{}.000000Z"
    for match_id, second in (
        ("m5", 1),  # the same created_at as m2: m2 first
        ("m2", 1),
        ("m1", 0),
        ("m3", 2),
        ("m4", 3),
        ("m6", 4),
        ("m7", 5),
    ):
        await store.create_match(record(match_id, stamp.format(second)))
    await store.set_seat("m1", 2, b"\x02" * 32, "cleo")
    await store.set_seat("m1", 0, b"\x00" * 32, "ann")
    await store.append("m1", payloads("m1", 1, 4), expected_seq=0)
    await store.append("m2", payloads("m2", 1, 2), expected_seq=0)
    await store.set_seat("m3", 1, b"\x01" * 32, "bo")  # seats, but no event yet
    await store.append("m4", payloads("m4", 1, 1), expected_seq=0)
    await store.end_match("m4", "2026-01-01T01:00:00.000000Z")
    await store.set_seat("m6", 3, b"\x03" * 32, "dan")
    await store.append("m6", payloads("m6", 1, 3), expected_seq=0)
    await store.end_match("m7", "2026-01-01T01:00:00.000000Z")  # nothing at all, ended


def summary(logs: list[MatchLog]) -> list[tuple[str, list[int], list[int]]]:
    return [
        (log.record.match_id, [s.seat for s in log.seats], [e.seq for e in log.events])
        for log in logs
    ]


def test_one_read_orders_and_fills_every_unfinished_match_alike_on_both_backends(
    url: str,
) -> None:
    async def body(store: EventStore) -> None:
        await fill(store)
        logs = await store.unfinished_logs()
        assert summary(logs) == [
            ("m1", [0, 2], [1, 2, 3, 4]),
            ("m2", [], [1, 2]),
            ("m5", [], []),
            ("m3", [1], []),
            ("m6", [3], [1, 2, 3]),
        ]
        for log in logs:
            assert log.seats == await store.get_seats(log.record.match_id)
            assert log.events == await store.read_events(log.record.match_id)

    with_store(url, body)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 100])
def test_pages_of_unfinished_logs_add_up_to_the_one_read(url: str, size: int) -> None:
    async def body(store: EventStore) -> None:
        await fill(store)
        whole = await store.unfinished_logs()
        pages = [page async for page in store.unfinished_log_batches(size)]
        assert all(0 < len(page) <= size for page in pages)
        assert [log for page in pages for log in page] == whole
        assert len(pages) == -(-len(whole) // size)
        with pytest.raises(ValueError):
            _ = [page async for page in store.unfinished_log_batches(0)]

    with_store(url, body)


def test_a_store_with_nothing_unfinished_reads_no_page(url: str) -> None:
    async def body(store: EventStore) -> None:
        assert await store.unfinished_logs() == []
        assert [page async for page in store.unfinished_log_batches(2)] == []

    with_store(url, body)


def test_the_bulk_read_is_one_snapshot_while_others_write(url: str) -> None:
    """Between the read's first statement (the matches) and the next ones (seats, events),
    another writer ends m1 and appends to m2. One snapshot sees neither: m1 still comes with
    all its seats and events (without one, it would come with none, and a restart would take
    it for a match whose creator died before its opening and write one into an ended log),
    and m2 with its log as it was."""

    async def body(store: EventStore) -> None:
        await fill(store)
        before = summary(await store.unfinished_logs())
        loop = asyncio.get_running_loop()
        real_read_sync = store._read_sync
        interfered: list[bool] = []

        async def other_writer() -> None:
            await store.end_match("m1", "2026-01-01T02:00:00.000000Z")
            await store.append("m2", payloads("m2", 3, 2), expected_seq=2)
            await store.set_seat("m3", 0, b"\x09" * 32, "zed")

        class Interfering:
            """A reader connection that lets the other writer commit after its first read."""

            def __init__(self, conn: Any) -> None:
                self.conn, self.reads = conn, 0

            def execute(self, statement: str, params: Any = ()) -> Any:
                result = self.conn.execute(statement, params)
                if statement.lstrip().upper().startswith("SELECT"):
                    self.reads += 1
                    if self.reads == 1 and not interfered:
                        # Fetch the rows first: the snapshot is the one this statement saw.
                        rows = result.fetchall()
                        asyncio.run_coroutine_threadsafe(other_writer(), loop).result(10)
                        interfered.append(True)
                        return _Rows(rows)
                return result

        def read_sync(work: Any) -> Any:
            return real_read_sync(lambda conn: work(Interfering(conn)))

        store._read_sync = read_sync  # type: ignore[method-assign]
        torn = summary(await store.unfinished_logs())
        store._read_sync = real_read_sync  # type: ignore[method-assign]
        assert interfered
        assert torn == before
        after = summary(await store.unfinished_logs())
        assert [m for m, _, _ in after] == ["m2", "m5", "m3", "m6"]
        assert after[0] == ("m2", [], [1, 2, 3, 4]) and after[2] == ("m3", [0, 1], [])

    with_store(url, body)


class _Rows:
    """Rows already fetched, answering as the cursor they came from would."""

    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows

    def fetchall(self) -> list[Any]:
        return self.rows

    def __iter__(self) -> Any:
        return iter(self.rows)
