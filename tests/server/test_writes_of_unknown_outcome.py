"""Writes whose outcome the match could not learn: it stays in step with its log, and its clock
runs on.

Found by an adversarial review (2026-12-07): a malformed ``SubmitAction`` whose caller hung up
while its fault was being written left the match one entry behind its log (the refusal was the
one client-reached write not run to completion), every later action was refused as stale, and
the move clock's time-out, refused by the store for the same reason, was never tried again: a
tournament match waited until the seat chose to act. A store's append may commit after its
caller was cancelled (``EventStore.append``), so these tests let the write go on as the
writer thread would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from cardarena.server.hosting import HostedMatch, timing
from cardarena.server.store import StoreError
from cardarena.v1 import game_pb2 as pb

from ..arenas import act, seated_on_sqlite

Append = Callable[..., Coroutine[Any, Any, Any]]


def kinds(payloads: list[Any]) -> list[str | None]:
    return [pb.Event.FromString(p.payload).WhichOneof("kind") for p in payloads]


async def in_step(hosted: HostedMatch) -> None:
    """The match in memory is where its log ends."""
    stored = await hosted.store.read_events(hosted.match_id)
    assert hosted.last_seq == stored[-1].seq, kinds(stored[-3:])


def test_a_malformed_action_whose_caller_hangs_up_mid_write_leaves_the_match_in_step(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with seated_on_sqlite(tmp_path / "store.db", tournament_id="t1") as (store, hosted):
            seat = hosted.engine.to_act
            assert seat is not None and hosted.faults.logs_refusal(seat)
            before = hosted.last_seq
            gate = asyncio.Event()
            writing = asyncio.Event()
            real: Append = store.append

            async def slow_append(*args: Any, **kwargs: Any) -> Any:
                # The writer thread goes on whatever becomes of its caller: so does this write.
                write = asyncio.ensure_future(real(*args, **kwargs))
                writing.set()
                await gate.wait()
                return await write

            store.append = slow_append  # type: ignore[method-assign]
            caller = asyncio.create_task(
                hosted.refuse_malformed(seat, pb.Action(), before, "action: no action")
            )
            await writing.wait()
            caller.cancel()  # the client hung up (or its deadline passed) mid-write
            await asyncio.sleep(0)
            gate.set()
            with pytest.raises(asyncio.CancelledError):
                await caller
            store.append = real  # type: ignore[method-assign]
            async with hosted.lock:  # the refusal, run to its end, has let go of the match
                pass
            await in_step(hosted)
            assert hosted.last_seq == before + 1 and hosted.faults.counts[seat] == 1
            await act(hosted)  # the seat plays on at the seq the log is at
            await in_step(hosted)

    asyncio.run(asyncio.wait_for(main(), 30))


@pytest.mark.parametrize(
    ("committed", "unreadable"),
    [(False, False), (True, False), (False, True)],
    ids=["refused", "committed, answer lost", "refused, then the log unreadable once"],
)
def test_a_time_out_the_store_did_not_confirm_is_played_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, committed: bool, unreadable: bool
) -> None:
    monkeypatch.setattr(timing, "RETRY_MS", 50)

    async def main() -> None:
        async with seated_on_sqlite(tmp_path / "store.db", move_ms=100) as (store, hosted):
            real: Append = store.append
            real_read: Append = store.read_events
            failed: list[tuple[int, int | None]] = []
            unread: list[bool] = []

            async def failing_once(match_id: str, payloads: list[bytes], **kwargs: Any) -> Any:
                timed_out = pb.Event.FromString(payloads[0]).HasField("timed_out")
                if timed_out and not failed:
                    # Which seat ran out of time: the engine has already played it.
                    failed.append((kwargs["expected_seq"], kwargs["seat"]))
                    if committed:
                        await real(match_id, payloads, **kwargs)
                    raise StoreError("the disk is full")
                return await real(match_id, payloads, **kwargs)

            async def unreadable_once(*args: Any, **kwargs: Any) -> Any:
                # Right after the failed write, its recovery cannot read the log either: the
                # match stays out of step until a later change reads it.
                if unreadable and failed and not unread:
                    unread.append(True)
                    raise StoreError("the disk is gone for a moment")
                return await real_read(*args, **kwargs)

            store.append = failing_once  # type: ignore[method-assign]
            store.read_events = unreadable_once  # type: ignore[method-assign]
            for _ in range(200):  # bounded: 10 s at most
                stored = await store.read_events(hosted.match_id)
                if kinds(stored).count("timed_out") >= 2:
                    break
                await asyncio.sleep(0.05)
            hosted.clock.stop()
            assert failed, "no time-out was tried"
            timed_out = [
                e.seq for e, kind in zip(stored, kinds(stored), strict=True) if kind == "timed_out"
            ]
            # The turn whose time-out failed was timed out once, by the first try or the next,
            # and the clock went on to the turns after it.
            assert len(timed_out) >= 2 and timed_out[0] == failed[0][0] + 1, (failed, timed_out)
            first = pb.Event.FromString(stored[timed_out[0] - 1].payload).timed_out
            assert first.seat == failed[0][1]  # the seat that ran out of time, not the next
            assert unread or not unreadable
            await in_step(hosted)

    asyncio.run(asyncio.wait_for(main(), 30))
