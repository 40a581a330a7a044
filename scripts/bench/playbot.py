"""``--pattern play``: one seat on one bidirectional ``Play`` stream, as the protocol offers bots.

Why a pattern of its own: the protocol says Play is the cheap path for bots (one call per seat
carries its events, its prompts, its actions and their results), and the issue asks how close
it comes to the ceiling, so the same matches are driven over it too. The seat sends
``PlayOpen`` (match, seat, the seq its join returned) and reads the snapshot; on each
``YourTurn`` (or a snapshot whose turn is its own) it writes a ``PlayAction`` with a random
legal action and that seq; each ``ActionResult`` acknowledges the oldest action in flight (the
server answers one call's actions in order), which is what the latency runs to. A result that
is not OK is counted by its code; ``ABORTED`` (a stale prompt) is not fatal, as with the unary
``turns`` pattern. ``MatchEnded`` ends the seat once its last action is answered.

Paced (``--rate``): a seat that waited for its slot while not reading would time the results
that arrived meanwhile late, so paced sends run in a task of their own and the seat keeps
reading; a seat has at most one such send (the protocol prompts it once per turn).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import Sequence

import grpc

from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from .bots import Divergence, MatchFailed, SeatBot, Stats, ends, failing_match

STATUS_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}


class PlayBot(SeatBot):
    """One seat on one Play call: its actions in flight, oldest first, as (sent, due)."""

    play_call: grpc.aio.StreamStreamCall[spb.PlayRequest, spb.PlayResponse]
    in_flight: collections.deque[tuple[float, float | None]]
    sending: asyncio.Task[None] | None = None

    async def open(self, after_seq: int, stats: Stats) -> pb.Snapshot:
        """Open the seat's Play call (its token in the call's metadata) and read the snapshot."""
        self.in_flight = collections.deque()
        self.play_call = self.api.Play(metadata=self.metadata)
        opening = spb.PlayOpen(
            match_id=self.table.match_id,
            seat=self.seat,
            after_seq=after_seq,
            batched=self.config.batched,
        )
        with failing_match(stats, "Play"):
            await self.play_call.write(spb.PlayRequest(open=opening))
            first = await self.play_call.read()
        return self.take_snapshot(first, "the Play stream", stats)

    def cancel(self) -> None:
        if self.sending is not None:
            self.sending.cancel()
        with contextlib.suppress(AttributeError):
            self.play_call.cancel()

    async def play(self, stats: Stats) -> None:
        """Act on each prompt, count each result; stop at MatchEnded once nothing is in flight."""
        if not await self.first_turn(self.prompted, stats):
            return
        ended = False
        while not (ended and not self.in_flight and self.sending_done()):
            with failing_match(stats, "Play"):
                message = await self.play_call.read()
            if not isinstance(message, spb.PlayResponse):
                if ended:
                    return  # the server closed the call after the last result
                raise Divergence("the Play stream ended before MatchEnded")
            if stats.counting:
                stats.messages += 1
            kind = message.WhichOneof("kind")
            if kind == "your_turn":
                await self.prompted(message.your_turn.seq, message.your_turn.legal_actions, stats)
            elif kind == "result":
                self.answered(message.result, stats)
            elif ends(message):
                ended = True
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            await self.play_call.done_writing()

    def sending_done(self) -> bool:
        """Whether no paced send is pending; a failed one raises its error here."""
        if self.sending is None:
            return True
        if not self.sending.done():
            return False
        self.sending.result()
        return True

    async def prompted(self, seq: int, legal: Sequence[pb.Action], stats: Stats) -> None:
        """Our turn at ``seq``: act now (closed loop) or at the match's next slot (paced)."""
        if self.table.pacer is None:
            await self.send(seq, legal, None, stats)
            return
        self.sending_done()  # re-raise a failed earlier send
        previous = self.sending

        async def paced() -> None:
            if previous is not None:
                await previous
            assert self.table.pacer is not None
            await self.send(seq, legal, await self.table.pacer.wait(), stats)

        self.sending = asyncio.create_task(paced())

    async def send(
        self, seq: int, legal: Sequence[pb.Action], due: float | None, stats: Stats
    ) -> None:
        if not legal:
            raise Divergence(f"seat {self.seat} is to act at {seq} with no legal action")
        self.submitted += 1
        act = spb.PlayAction(
            action=self.rng.choice(legal),
            expected_seq=seq,
            request_id=f"p{self.seat}a{self.submitted}",
        )
        self.in_flight.append((time.perf_counter(), due))
        with failing_match(stats, "Play"):
            await self.play_call.write(spb.PlayRequest(act=act))

    def answered(self, result: spb.ActionResult, stats: Stats) -> None:
        """The oldest action in flight is answered: an acknowledgement, or a counted refusal."""
        if not self.in_flight:
            raise Divergence(f"an ActionResult ({result.request_id}) with no action in flight")
        sent, due = self.in_flight.popleft()
        if result.code == 0:
            stats.acknowledged(sent, due)
            return
        stats.errors[f"Play result {STATUS_NAMES.get(result.code, result.code)}"] += 1
        if result.code != grpc.StatusCode.ABORTED.value[0]:  # ABORTED: a stale prompt
            raise MatchFailed(f"code {result.code}: {result.message}")
