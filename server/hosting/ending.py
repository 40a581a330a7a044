"""How a hosted match ends: by its rules, by a cancellation, and when its seed is revealed.

Why the reveal can come later than the end: the rotations of a tournament's duplicate group
are dealt from one seed, so a seed revealed when the first rotation ends would show the cards
of those still to be played. A match whose seed is shared (``seed_shared`` in its settings)
therefore ends without ``SeedRevealed``; its tournament reveals it (:meth:`Ending.reveal_seed`)
once the last match of the group has ended. Until then no RPC, stream or log shows the seed,
and the store keeps the match unfinished (its log can still take the reveal); a restart finds
it there. Every other match reveals its seed in the write that ends it, as before.

The same moment lifts the group's embargo (:attr:`Ending.held_back`): before it, nothing that
shows the match's cards (a spectator's stream, its MatchInfo, its log) is for anyone but its
seats and the operator, since every card of one rotation is a card of the others.
"""

from __future__ import annotations

from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from ..errors import Moved, NotRunning
from ..store import LeaseLost, StoreError, now_iso
from .completion import to_completion
from .signing import Signer, checkpoint_for
from .writing import LogWriter


class Ending(LogWriter):
    """The ending half of :class:`~.match.HostedMatch` (its attributes are set there)."""

    seed_shared: bool
    revealed: bool
    signer: Signer | None = None

    @property
    def held_back(self) -> bool:
        """Whether its duplicate group is still being played: its seed deals other matches of
        its tournament and is not revealed yet (the tournament reveals it once the group's
        last match has ended). Until then its cards are for its seats and the operator only
        (docs/rules.md §4.10; who may read it is the api's ``embargo``)."""
        return self.seed_shared and not self.revealed

    def reveal_event(self, seq: int) -> list[pb.Event]:
        """The ``SeedRevealed`` that closes a match now, or nothing if its seed is shared."""
        if self.seed_shared:
            return []
        return [pb.Event(seq=seq, seed_revealed=pb.SeedRevealed(seed=self.record.seed))]

    async def cancel(self, reason: str) -> None:
        """End the match now: ``MatchCancelled`` (and the seed revealed), in one write."""
        await to_completion(self._cancel(reason))

    async def _cancel(self, reason: str) -> None:
        async with self.lock:
            if self._out_of_step:
                await self._resync()
            if not self.owned:
                raise Moved(self.match_id)
            if self.ended:
                raise NotRunning("the match has ended")
            first = self.last_seq + 1
            totals = [codec.score_to_pb(t) for t in self.engine.totals]
            encoded = [
                pb.Event(
                    seq=first, match_cancelled=pb.MatchCancelled(reason=reason, totals=totals)
                ),
                *self.reveal_event(first + 1),
            ]
            self.cancelled = True  # before publishing: the turn told with it has nobody to act
            try:
                await self._persist(encoded, request_id=None, seat=None)
            except Exception:
                self.cancelled = False
                await self._recover()
                raise
            await self._end()
            self.log.info("match_cancelled", reason=reason)

    async def reveal_seed(self) -> None:
        """Reveal a shared seed, once the match has ended (a no-op if it is revealed)."""
        await to_completion(self._reveal_seed())

    async def _reveal_seed(self) -> None:
        async with self.lock:
            if self._out_of_step:
                await self._resync()
            if self.revealed or not self.ended or not self.owned:
                return
            event = pb.SeedRevealed(seed=self.record.seed)
            try:
                await self._persist(
                    [pb.Event(seq=self.last_seq + 1, seed_revealed=event)],
                    request_id=None,
                    seat=None,
                )
            except Exception:
                await self._recover()
                raise
            await self._end()
            self.log.info("seed_revealed")

    async def _end(self) -> None:
        """Mark the match ended in the store, once its seed is revealed (its log is then
        final). The entry that ended it is already durable, so losing the lease here is no
        failure: the next owner finishes the job."""
        if not self.revealed:
            return
        try:
            await self.store.end_match(self.match_id, now_iso(), fence=self.fence)
        except LeaseLost:
            return
        # Signed once the log is final. A crash before this line leaves the match without a
        # checkpoint: GetMatchLog signs it then (the same statement, about the same log).
        if self.signer is not None:
            try:
                await checkpoint_for(self.store, self.signer, self.match_id)
            except StoreError as error:
                self.log.warning("checkpoint_deferred", error=str(error))
