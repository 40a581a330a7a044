"""The requests a store recorded, as a match loaded from it learns them, SQLite and PostgreSQL
alike: every one of the match's, and no other match's; and what a match keeps of them."""

from __future__ import annotations

from cardarena.server.hosting.recent import RECENT_PER_SEAT, RecentRequests
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


def test_a_matchs_requests_are_read_alone_or_with_the_unfinished_logs(url: str) -> None:
    async def body(store: EventStore) -> None:
        await three_and_two(store)
        every = {"0:r0": (1, 1), "1:s0": (2, 2), "0:r1": (3, 3), "1:s1": (4, 4), "0:r2": (5, 5)}
        assert by_key(await store.request_results("m1")) == every
        assert by_key(await store.request_results("m2")) == {"0:r0": (1, 1)}
        assert await store.request_results("nope") == []
        logs = {log.record.match_id: log for log in await store.unfinished_logs()}
        assert by_key(logs["m1"].requests) == every
        assert by_key(logs["m2"].requests) == {"0:r0": (1, 1)}
        paged = [log async for page in store.unfinished_log_batches(1) for log in page]
        assert [by_key(log.requests) for log in paged] == [every, {"0:r0": (1, 1)}]

    with_store(url, body)


def test_a_seat_keeps_its_latest_results_and_knows_every_id_it_used() -> None:
    recent = RecentRequests(2)
    for i in range(10):
        recent.put(0, f"r{i}", (i + 1, i + 1, 7))
    assert len(recent) == RECENT_PER_SEAT
    assert [recent.get(0, f"r{i}") is not None for i in range(10)] == [False] * (
        10 - RECENT_PER_SEAT
    ) + [True] * RECENT_PER_SEAT
    assert all(recent.used(0, f"r{i}") for i in range(10))
    assert not recent.used(0, "r10") and not recent.used(1, "r0")  # per seat
    # Learning what the store holds keeps each seat's latest by seq, whatever the order.
    recent.learn([Answered("1:late", 40, 41), Answered("1:early", 2, 2), Answered("0:r3", 4, 4)])
    assert recent.get(1, "late") == (40, 41, None) and recent.get(1, "early") == (2, 2, None)
    assert recent.get(0, "r3") is None and recent.get(0, "r9") == (10, 10, 7)
