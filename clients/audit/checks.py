"""The ten checks of an audit, in their order, over the shared state of one log.

Each ``check_NAME`` of :class:`Checks` raises :class:`Discrepancy` at the first entry (or
MatchInfo field) at fault and may rely on every check before it in :data:`CHECKS`; the
auditor (:mod:`.auditor`) runs them in that order and reports the first failure. Checks 1 to 6
(the log's own form: :mod:`.form`) come first; here are the checks that replay the match.
"""

from __future__ import annotations

from typing import Final

from cardarena.engine import Match, describe, replay
from cardarena.engine import events as ev
from cardarena.engine.errors import ActionError, ReplayError
from cardarena.engine.match import ActionReader
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1.clocks import SeatClocks, TimeControl

from .errors import Discrepancy, mismatch
from .explain import explain_replay
from .faults import FaultWalk
from .form import FormChecks

CHANCE: Final = frozenset({"dealer_drawn", "trump_drawn", "dealt"})

CHECKS: Final = (
    ("decode", "every entry decodes to one canonical event"),
    ("sequence", "seq runs from 1 without gaps, up to MatchInfo's last seq"),
    ("chain", "the hash chain holds from this match's genesis hash to MatchInfo's last hash"),
    ("start", "MatchStarted opens the log; MatchInfo's settings, seats and state agree with it"),
    ("seed", "the seed is 32 bytes and matches its commitment; every contribution is 32 bytes"),
    ("reveal", "SeedRevealed closes the log with the same seed; one MatchCancelled may precede it"),
    ("replay", "every deal, draw, action and result follows from the deal seed and the rules"),
    (
        "server",
        "every seat joined before the first deal; each time-out was due by the clocks folded"
        " from the log and is followed by the default action",
    ),
    ("faults", "every fault and forfeit follows the match's fault policy; MatchInfo counts them"),
    ("result", "MatchInfo's totals and winners are the replay's (no winners if cancelled)"),
)


class Checks(FormChecks):
    """Every check: the log's form (:class:`~.form.FormChecks`), then checks 7 to 10."""

    # -- 7. replay -------------------------------------------------------------------------

    def check_replay(self) -> None:
        engine_log = [e for e in self.decoded if e is not None]
        try:
            match = replay(engine_log, **self._dealing())
        except ReplayError as error:
            seqs = self._engine_seqs()
            at = seqs[error.index] if error.index < len(seqs) else seqs[-1] + 1
            raise Discrepancy(at, explain_replay(engine_log, error, self.deal_seed)) from None
        except Exception as error:  # untrusted input must never crash the auditor
            raise Discrepancy(None, f"the rules could not replay the log: {error!r}") from None
        # A cancelled match stops where it was cancelled (the reveal check put the
        # MatchCancelled there): the replay above has checked everything up to it.
        cancelled = self._seq_of("match_cancelled")
        if not match.over and cancelled is None:
            raise Discrepancy(self._engine_seqs()[-1] + 1, "the log stops before the match is over")
        if cancelled is not None:
            recorded = self.event(cancelled).match_cancelled.totals
            if tuple(codec.score_from_pb(t) for t in recorded) != match.totals:
                shown = ", ".join(map(str, match.totals))
                raise Discrepancy(
                    cancelled, f"MatchCancelled records totals that are not the replay's ({shown})"
                )
        self.replayed = match

    def _engine_seqs(self) -> list[int]:
        """The seq of each engine event (the entries the replay is given), in order."""
        return [n for n, e in enumerate(self.decoded, start=1) if e is not None]

    def _dealing(self) -> dict[str, bytes | None]:
        """How the replay deals: from the deal seed once every seat has joined; not at all
        in a match whose seats never all joined (it was cancelled or expired before its first
        deal, which the server check holds it to)."""
        if not self.seated:
            return {"seed": None, "deal_seed": None}
        return {"seed": self.seed, "deal_seed": self.deal_seed}

    # -- 8. server events ------------------------------------------------------------------

    def check_server(self) -> None:
        started = self.decoded[0]
        assert isinstance(started, ev.MatchStarted)  # the replay check holds
        control = TimeControl.of_message(self.event(1).match_started)  # the log's, not MatchInfo's
        clocked = control.timed
        clocks = SeatClocks(control, started.players)
        # The rules are followed again only to judge time-outs (the seat to act, its default
        # action); the replay check has followed them through the whole log. Without a
        # time-out, actions are told apart by the log's own rounds until every seat is in.
        playing = bool(self._seqs_of("timed_out"))
        match = Match(started, seed=self.deal_seed) if playing else None
        reader = ActionReader()
        joined: set[int] = set()
        timed_out: tuple[int, int, int] | None = None  # (seq, seat, default action)
        forfeit_between = False  # whether the time-out's SeatForfeited came between
        players = started.players
        for n, (kind, decoded) in enumerate(zip(self.kinds, self.decoded, strict=True), 1):
            if not playing and len(joined) == players:
                # Every seat is in and there is no time-out to judge: from here on only a join
                # is judged (and a join now is always wrong), so only joins are looked at.
                for later in self._seqs_of("seat_joined"):
                    if later >= n:
                        self._joined(later, self.event(later).seat_joined.seat, joined, players)
                break
            recorded = None
            if decoded is not None:
                recorded = reader(decoded) if match is None else match.recorded_action(decoded)
            if timed_out is not None:
                # The time-out that brings its seat to the fault policy's limit is followed
                # by the seat's forfeit, then the action (the faults check judges the forfeit).
                if (
                    kind == "seat_forfeited"
                    and self.event(n).seat_forfeited.seat == timed_out[1]
                    and not forfeit_between
                ):
                    forfeit_between = True
                    continue
                _check_default(n, recorded, timed_out)
                timed_out, forfeit_between = None, False
            if kind == "timed_out" and not self.event(n).timed_out.forfeited:
                _check_due(n, self.event(n), clocks)  # by the clocks before this entry
            clocks.fold(self.event(n))
            if kind == "seat_joined":
                self._joined(n, self.event(n).seat_joined.seat, joined, players)
            elif kind in CHANCE and len(joined) < players:
                missing = sorted(set(range(players)) - joined)
                raise Discrepancy(n, f"the first deal comes before seats {missing} joined")
            elif kind == "timed_out":
                # A forfeited seat is played at once, clock or none.
                marked = self.event(n).timed_out
                assert match is not None  # a log with a time-out is played
                clock = clocked or marked.forfeited
                timed_out = self._timed_out(n, marked.seat, match, clocked=clock)
            elif recorded is not None:
                if len(joined) < players:
                    missing = sorted(set(range(players)) - joined)
                    raise Discrepancy(n, f"play starts before seats {missing} joined")
                try:
                    if match is not None:
                        match.apply(*recorded)
                except ActionError as error:  # the replay check makes this unreachable
                    raise Discrepancy(n, str(error)) from None

    @staticmethod
    def _joined(n: int, seat: int, joined: set[int], players: int) -> None:
        if seat >= players or seat in joined:
            raise Discrepancy(n, f"seat {seat} cannot join: no such seat, or it joined before")
        joined.add(seat)

    @staticmethod
    def _timed_out(n: int, seat: int, match: Match, *, clocked: bool) -> tuple[int, int, int]:
        if not clocked:
            raise Discrepancy(n, "a time-out in a match without a clock (MatchStarted.move_ms 0)")
        if match.to_act != seat:
            raise Discrepancy(n, f"seat {seat} timed out, but seat {match.to_act} was to act")
        return n, seat, match.default_action()

    # -- 9. faults -------------------------------------------------------------------------

    def check_faults(self) -> None:
        """The fault policy's rules, entry by entry (:mod:`.faults`), then MatchInfo's counts."""
        started = self.decoded[0]
        assert isinstance(started, ev.MatchStarted)  # the replay check holds
        walk = FaultWalk(self.event(1).match_started, started, self.deal_seed)
        walk.walk(self.kinds, self.decoded, self.event, self._seqs_of)
        walk.check_info(self.info)

    # -- 10. result -------------------------------------------------------------------------

    def check_result(self) -> None:
        match = self.replayed
        assert match is not None  # the replay check holds
        cancelled = self._seq_of("match_cancelled")
        ended = self._seq_of("match_ended")
        at = cancelled if cancelled is not None else ended
        where = f"MatchCancelled at seq {cancelled}" if cancelled else f"MatchEnded at seq {ended}"
        totals = tuple(codec.score_from_pb(t) for t in self.info.totals)
        if totals != match.totals:
            shown = ", ".join(map(str, match.totals))
            raise mismatch(
                "totals", ", ".join(map(str, totals)) or "none", f"{shown} ({where})", at
            )
        if tuple(self.info.winners) != match.winners:
            raise mismatch(
                "winners", list(self.info.winners), f"{list(match.winners)} ({where})", at
            )


def _check_due(n: int, entry: pb.Event, clocks: SeatClocks) -> None:
    """A time-out is due once the seat's allowance is used up: its TimedOut charges the whole
    allowance the clocks give it by the log so far (a log from before time was written on
    entries has none, and only a per-move clock: nothing to compare)."""
    seat = entry.timed_out.seat
    allowed = clocks.allowance_ms(seat)
    if allowed is None or not 0 <= seat < len(clocks.bank):
        return
    if not entry.HasField("think_ms"):
        if clocks.control.bank_ms or clocks.control.round_ms:
            raise Discrepancy(n, f"seat {seat} timed out with no time charged (think_ms)")
        return
    if entry.think_ms < allowed:
        raise Discrepancy(
            n,
            f"seat {seat} timed out after {entry.think_ms} ms, but its clocks allowed"
            f" {allowed} ms (its bank and round budget as the log leaves them)",
        )


def _check_default(
    n: int, recorded: tuple[int, int] | None, timed_out: tuple[int, int, int]
) -> None:
    at, seat, default = timed_out
    if recorded != (seat, default):
        got = "no action" if recorded is None else f"seat {recorded[0]} {describe(recorded[1])}"
        raise Discrepancy(
            n,
            f"seat {seat} timed out at seq {at}: its default action is {describe(default)} "
            f"(the pass where it is legal, else the lowest legal action), but the log has {got}",
        )
