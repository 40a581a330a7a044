"""SQLite's writer remembers each match's last seq and hash as it committed them, and appends
at that seq without reading them back: the same log, the same hashes, and every refusal the
check gave (a reused request id, an ended match, a stale seq, another writer of the file)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from cardarena.server.store import DuplicateRequest, SqliteStore, StoreConflict
from cardarena.v1.chain import chain_hash, genesis_hash
from tests.stores import record
from tests.waiting import eventually


def chained(match_id: str, payloads: list[bytes]) -> list[bytes]:
    prev, hashes = genesis_hash(match_id), []
    for payload in payloads:
        prev = chain_hash(prev, payload)
        hashes.append(prev)
    return hashes


def test_appends_after_the_first_read_nothing_and_chain_as_before(tmp_path: Path) -> None:
    statements: list[str] = []

    async def main() -> None:
        async with SqliteStore(tmp_path / "s.db") as store:
            await store.create_match(record("m"))
            await store._submit(lambda conn: conn.set_trace_callback(statements.append))
            payloads = [bytes([i]) * (i + 1) for i in range(9)]
            await store.append("m", payloads[:1], expected_seq=0, request_id="r0", seat=0)
            for at in range(1, 9, 2):  # one entry, then two, ...
                await store.append(
                    "m", payloads[at : at + 2], expected_seq=at, request_id=f"r{at}", seat=1
                )
            stored = await store.read_events("m")
            assert [e.payload for e in stored] == payloads
            assert [e.hash for e in stored] == chained("m", payloads)

    asyncio.run(main())
    selects = [s for s in statements if s.startswith("SELECT m.players")]
    assert len(selects) == 1  # the first append's check only


def test_a_reused_request_id_is_answered_and_writes_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "s.db") as store:
            await store.create_match(record("m"))
            await store.append("m", [b"a", b"b"], expected_seq=0, request_id="0:r", seat=0)
            with pytest.raises(DuplicateRequest) as caught:  # at the current seq: from memory
                await store.append("m", [b"c"], expected_seq=2, request_id="0:r", seat=0)
            assert (caught.value.first_seq, caught.value.last_seq) == (1, 2)
            assert len(await store.read_events("m")) == 2
            await store.append("m", [b"c"], expected_seq=2, request_id="0:s", seat=0)
            assert [e.payload for e in await store.read_events("m")] == [b"a", b"b", b"c"]

    asyncio.run(main())


def test_an_ended_match_and_a_stale_seq_are_refused(tmp_path: Path) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "s.db") as store:
            await store.create_match(record("m"))
            await store.append("m", [b"a"], expected_seq=0)
            await store.append("m", [b"b"], expected_seq=1)
            with pytest.raises(StoreConflict):
                await store.append("m", [b"c"], expected_seq=1)
            await store.end_match("m", "2026-01-01T00:00:00.000Z")
            with pytest.raises(StoreConflict, match="ended"):
                await store.append("m", [b"c"], expected_seq=2)

    asyncio.run(main())


def test_another_writer_of_the_file_is_refused_not_forked(tmp_path: Path) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "s.db") as store:
            await store.create_match(record("m"))
            await store.append("m", [b"a"], expected_seq=0)
            await store.append("m", [b"b"], expected_seq=1)  # now known: seq 2
            async with SqliteStore(tmp_path / "s.db") as other:
                await other.append("m", [b"x"], expected_seq=2)
            with pytest.raises(StoreConflict):
                await store.append("m", [b"c"], expected_seq=2)
            await store.append("m", [b"c"], expected_seq=3)  # checked again, and right
            stored = await store.read_events("m")
            assert [e.payload for e in stored] == [b"a", b"b", b"x", b"c"]
            assert [e.hash for e in stored] == chained("m", [b"a", b"b", b"x", b"c"])

    asyncio.run(main())


def test_a_batch_run_again_forgets_what_its_first_run_wrote(tmp_path: Path) -> None:
    """Two appends of one match in one batch with a stale third: the batch is rolled back and
    run again a savepoint each; what the first run noted is not kept."""
    gate, entered = threading.Event(), threading.Event()

    def hold(conn: Any) -> None:
        entered.set()
        gate.wait(5)

    async def main() -> None:
        async with SqliteStore(tmp_path / "s.db") as store:
            for name in ("m", "n"):
                await store.create_match(record(name))
                await store.append(name, [b"0"], expected_seq=0)
            held = asyncio.ensure_future(store._submit(hold))
            assert await asyncio.to_thread(entered.wait, 5)
            results = asyncio.gather(
                store.append("m", [b"1"], expected_seq=1),
                store.append("m", [b"2"], expected_seq=2),
                store.append("n", [b"1"], expected_seq=7),  # stale: the batch runs again
                return_exceptions=True,
            )
            await eventually(lambda: store._queue.qsize() == 3, what="the appends queued")
            gate.set()
            await held
            first, second, stale = await results
            assert isinstance(first, list) and isinstance(second, list)
            assert isinstance(stale, StoreConflict)
            await store.append("m", [b"3"], expected_seq=3)
            await store.append("n", [b"1"], expected_seq=1)
            for name, payloads in (("m", [b"0", b"1", b"2", b"3"]), ("n", [b"0", b"1"])):
                stored = await store.read_events(name)
                assert [e.payload for e in stored] == payloads
                assert [e.hash for e in stored] == chained(name, payloads)

    asyncio.run(main())
