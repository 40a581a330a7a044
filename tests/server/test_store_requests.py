"""The requests a store recorded, as a match loaded from it learns them: every one, or each
seat's latest few (what a hosted match keeps in memory), SQLite and PostgreSQL alike."""

from __future__ import annotations

from cardarena.server.store import Answered, EventStore
from tests.stores import record, with_store


async def three_and_two(store: EventStore) -> None:
    """Match m1: seat 0 requests r0, r1, r2, seat 1 requests s0, s1, one event each in turn;
    m2: one request of seat 0 (another match's, never mixed in)."""
    await store.create_match(record("m1"))
    requests = ((0, "r0"), (1, "s0"), (0, "r1"), (1, "s1"), (0, "r2"))
    for seq, (seat, request_id) in enumerate(requests):
        await store.append(
            "m1", [b"e"], expected_seq=seq, request_id=f"{seat}:{request_id}", seat=seat
        )
    await store.create_match(record("m2", created_at="2026-01-01T00:00:01.000000Z"))
    await store.append("m2", [b"e"], expected_seq=0, request_id="0:r0", seat=0)


def by_key(answered: list[Answered]) -> dict[str, tuple[int, int]]:
    return {a.request_id: (a.first_seq, a.last_seq) for a in answered}


def test_each_seats_latest_requests_are_read_alone_or_with_the_unfinished_logs(url: str) -> None:
    async def body(store: EventStore) -> None:
        await three_and_two(store)
        every = {"0:r0": (1, 1), "1:s0": (2, 2), "0:r1": (3, 3), "1:s1": (4, 4), "0:r2": (5, 5)}
        assert by_key(await store.request_results("m1")) == every
        latest_two = {"1:s0": (2, 2), "0:r1": (3, 3), "1:s1": (4, 4), "0:r2": (5, 5)}
        assert by_key(await store.request_results("m1", per_seat=2)) == latest_two
        assert by_key(await store.request_results("m1", per_seat=1)) == {
            "1:s1": (4, 4),
            "0:r2": (5, 5),
        }
        logs = {log.record.match_id: log for log in await store.unfinished_logs()}
        assert by_key(logs["m1"].requests) == every
        assert by_key(logs["m2"].requests) == {"0:r0": (1, 1)}
        paged = [
            log
            async for page in store.unfinished_log_batches(1, requests_per_seat=2)
            for log in page
        ]
        assert [by_key(log.requests) for log in paged] == [latest_two, {"0:r0": (1, 1)}]

    with_store(url, body)
