"""Matches in-process, bots against the engine, with no server: for testing bots fast.

:func:`play` (and :func:`play_async`, the same in a running event loop) plays one match the
way a server hosts it and returns the log the server would return for it, entry for entry
(:mod:`.locallog`): it audits, replays and saves like a fetched log. Each seat sees exactly
what a served seat sees: every entry of the log as its own stream would carry it
(``codec.project_pb``), folded into its :class:`SeatState` as the client library folds it,
and the legal actions when it is to act. Python bots think in a thread of their own and
programs (``ExternalDecider``) in their process, so a bot that hangs costs the seat its
clock, not the match.

What a failing bot costs is what a server's clock makes it cost in a match outside any
tournament: a bot that raises, answers something other than a legal action, or does not
answer within ``move_ms`` sends no action, so the seat's clock runs out: a ``TimedOut``
entry (a fault, counted in the seat's ``MatchInfo.seats[].faults``) and the seat's default
action (the pass where it is legal, else its lowest legal action). A bot that raised or
answered wrongly is asked again next turn; one that timed out, or whose program died, is
asked no more (its late answer must not be taken for a later turn's): every later turn of
its seat times out too. The reason of each is given to ``on_fault`` (by default a warning
of this module's logger); with ``debug``, a bot's exception or wrong answer stops the match
and propagates instead.

:func:`play_local` is the older, leaner loop (no log, no clock, no threads) that
``scripts/eval_bots.py`` drives.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import secrets
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, ParamSpec, TypeVar

from cardarena.competition import bot_seed
from cardarena.engine import Match, Projector, get_game, legal_actions_for, setup
from cardarena.engine.fairdeal import SEED_SIZE
from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.clocks import TimeControl

from .base import Bot, load_bot
from .decider import BotGone, Decider, IllegalAnswer, PythonDecider, SeatContext, describe_error
from .entries import fold_entry
from .locallog import LogWriter, check_name, local_match_id
from .state import SeatState

DEFAULT_MOVE_MS: Final = 10_000
"""The time per move, as a tournament's default: over it, the seat's clock runs out."""
START_TIMEOUT_S: Final = 10.0
"""Time for a bot to start (a program to say it is ready), never less than a move's."""
MAX_ACTIONS: Final = 100_000

Seat = Bot | Decider | str
"""A seat's bot: a spec ``load_bot`` takes (made fresh, with a seed from the match's), a
:class:`Bot` object, or a :class:`Decider` (an ``ExternalDecider`` runs a program)."""

OnFault = Callable[[int, int, str], None]
"""Told ``(seat, seq, reason)`` of each turn played by default (the seq of its TimedOut)."""

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


def seat_seed(seed: bytes, seat: int) -> int:
    """The seed a Python bot made from a spec gets for ``seat`` of a local match: one way from
    the match's seed (a tournament's rule, for the match at place 0), so a seed replays."""
    return bot_seed(seed, 0, seat)


async def play_async(
    game: str,
    bots: Sequence[Seat],
    *,
    seed: bytes | None = None,
    options: Mapping[str, Any] | None = None,
    move_ms: int = DEFAULT_MOVE_MS,
    names: Sequence[str] | None = None,
    match_id: str | None = None,
    on_fault: OnFault | None = None,
    debug: bool = False,
) -> spb.GetMatchLogResponse:
    """Play one match of ``game``, seat ``i`` being ``bots[i]``, and return its log as a
    server's ``GetMatchLog`` would: chained entries, MatchInfo (totals, winners, each seat's
    name and faults) and the seed (drawn at random if not given; 32 bytes).

    ``names`` name the seats (default: each bot's ``name``, a repeated one suffixed with its
    seat, ``random#2``); ``move_ms`` is the clock of every move (see the module). Raises
    ``ValueError`` (``OptionError`` included) for a game, options, seed or bot that cannot
    play. :func:`play` is the same call from synchronous code.
    """
    prepared = setup(game, players=len(bots), options=options)
    if seed is None:
        seed = secrets.token_bytes(SEED_SIZE)
    if len(seed) != SEED_SIZE:
        raise ValueError(f"a seed is {SEED_SIZE} bytes, got {len(seed)}")
    if move_ms <= 0:
        raise ValueError(
            f"move_ms must be > 0, got {move_ms}: a failing bot's turn is played as its"
            " clock running out, which only a match with a clock can log"
        )
    if len({id(bot) for bot in bots if not isinstance(bot, str)}) < sum(
        not isinstance(bot, str) for bot in bots
    ):
        raise ValueError("one bot object per seat: the same object cannot play two seats")
    seats = [_decider(bot, seed, s) for s, bot in enumerate(bots)]
    given = list(names) if names is not None else _names(seats)
    if len(given) != len(bots):
        raise ValueError(f"{len(given)} names for {len(bots)} seats")
    seat_names = [check_name(name, s) for s, name in enumerate(given)]
    if match_id is None:
        match_id = local_match_id(prepared.game, prepared.options, seat_names, move_ms, seed)
    engine = prepared.start(seed, dealing=False)
    writer = LogWriter(match_id, engine, seed, move_ms=move_ms)
    table = _Table(engine, writer, [d for d, _ in seats], on_fault or _warn, debug=debug)
    try:
        await table.start(seat_names, get_game(prepared.game).lowest_wins)
        await table.run()
    finally:
        await table.finish()
    return writer.response()


def _synchronous(run: Callable[P, Coroutine[Any, Any, R]], name: str, doc: str) -> Callable[P, R]:
    """``run`` as a plain call named ``name``, taking the same arguments: its coroutine runs in
    an event loop of its own or, where a loop already runs (a notebook), in a thread of its
    own; so the one signature is written once for both ways of calling."""

    @functools.wraps(run)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        coroutine = run(*args, **kwargs)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(coroutine)
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="cardarena-play") as pool:
            return pool.submit(asyncio.run, coroutine).result()

    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    return call


play = _synchronous(
    play_async,
    "play",
    """Play one match from synchronous code: :func:`play_async`, the same arguments, the same
    log returned. In a running event loop (a notebook), the match is played in a thread of
    its own.""",
)


@dataclass(eq=False)
class _Table:
    """The deciders of one local match, each following its own seat's stream."""

    engine: Match
    writer: LogWriter
    deciders: list[Decider]
    on_fault: OnFault
    debug: bool = field(kw_only=True)
    states: list[SeatState] = field(init=False)
    """Per seat: what it knows, folded from its stream."""
    voluntary: list[bool] = field(init=False)
    """Per seat: whether the round its stream is in hides why a seat passed."""
    benched: dict[int, str] = field(init=False, default_factory=dict)
    """Seats asked no more (timed out, or their program died), with the reason."""
    fed: int = field(init=False, default=0)
    """How many of the log's entries every seat has been given."""

    def __post_init__(self) -> None:
        players = self.engine.players
        self.states = [SeatState(self.writer.match_id, s) for s in range(players)]
        self.voluntary = [False] * players

    @property
    def timeout_s(self) -> float:
        """The clock of every move, in seconds."""
        return self.writer.move_ms / 1000

    async def start(self, names: list[str], lowest_wins: bool) -> None:
        engine, writer = self.engine, self.writer
        contexts = [
            SeatContext(
                match_id=writer.match_id,
                game=engine.game.name,
                seat=s,
                players=engine.players,
                names=tuple(names),
                options=dict(engine.options),
                lowest_wins=lowest_wins,
                decision_ms=writer.move_ms,
                time_control=TimeControl(move_ms=writer.move_ms),
            )
            for s in range(engine.players)
        ]
        timeout = max(self.timeout_s, START_TIMEOUT_S)
        results = await asyncio.gather(
            *(
                asyncio.wait_for(d.start(c), timeout)
                for d, c in zip(self.deciders, contexts, strict=True)
            ),
            return_exceptions=True,
        )
        for seat, result in enumerate(results):
            if isinstance(result, TimeoutError):
                self._bench(seat, f"did not start within {timeout:g} s")
            elif isinstance(result, BaseException):
                if self.debug:
                    raise result
                self._bench(seat, f"could not start: {describe_error(result)}")
        for seat, name in enumerate(names):
            writer.join(seat, name)
        writer.record(engine.deal_from(writer.seed))  # as a server deals: after every join

    async def run(self) -> None:
        engine = self.engine
        for _ in range(MAX_ACTIONS):
            self._deliver()
            seat = engine.to_act
            for state in self.states:  # as a server's Turn tells every seat (no clock here)
                state.note_turn(seat, 0)
            if seat is None:
                return
            state = self.states[seat]
            state.legal = legal_actions_for(engine, seat)
            action, why = await self._decide(seat, state)
            state.legal = []
            if action is None:
                self.on_fault(seat, self.writer.next_seq, why)
                self.writer.record(engine.apply(seat, engine.default_action()), timed_out=seat)
            else:
                self.writer.record(engine.apply(seat, action))
        raise RuntimeError(f"the match did not end within {MAX_ACTIONS} actions")

    async def _decide(self, seat: int, state: SeatState) -> tuple[int | None, str]:
        """The seat's legal action, or ``None`` and why its clock ran out instead."""
        if seat in self.benched:
            return None, self.benched[seat]
        decider = self.deciders[seat]
        try:
            action = await asyncio.wait_for(decider.decide(state), self.timeout_s)
        except TimeoutError:
            return None, self._bench(seat, f"no answer within {self.timeout_s:g} s (move_ms)")
        except BotGone as error:
            if self.debug:
                raise
            return None, self._bench(seat, str(error))
        except IllegalAnswer as error:
            if self.debug:
                raise
            return None, f"the bot answered no action: {error}"
        except Exception as error:  # whatever a bot raises costs its seat the turn
            if self.debug:
                raise
            return None, f"the bot raised {describe_error(error)}"
        if action in state.legal:
            return action, ""
        why = f"the bot answered {action!r}, which is not one of the legal actions {state.legal}"
        if self.debug:
            raise IllegalAnswer(why)
        return None, why

    def _bench(self, seat: int, why: str) -> str:
        """Ask the seat no more: every later turn of it times out (a late answer must never be
        taken for a later turn's)."""
        self.benched[seat] = f"{why}; asked no more in this match"
        self.deciders[seat].abandon()
        return self.benched[seat]

    def _deliver(self) -> None:
        """Every new entry to every seat, as its own stream carries it."""
        fresh = self.writer.events[self.fed :]
        self.fed = len(self.writer.events)
        for seat, (state, decider) in enumerate(zip(self.states, self.deciders, strict=True)):
            for entry in fresh:
                if entry.WhichOneof("kind") == "round_started":
                    self.voluntary[seat] = entry.round_started.voluntary_pass
                event = codec.project_pb(entry, seat, voluntary_pass=self.voluntary[seat])
                fold_entry(state, event)
                if seat not in self.benched:
                    try:
                        decider.observe(event)
                    except Exception as error:
                        if self.debug:
                            raise
                        self._bench(seat, f"failed on event {event.seq}: {describe_error(error)}")

    async def finish(self) -> None:
        """Deliver what is left, tell every bot still asked that the match is over, let go."""
        self._deliver()
        for seat, decider in enumerate(self.deciders):
            if seat in self.benched:
                continue
            try:
                await asyncio.wait_for(decider.finish(self.states[seat]), self.timeout_s)
            except Exception:  # the match is over; only the clean-up is at stake
                decider.abandon()


def _decider(bot: Seat, seed: bytes, seat: int) -> tuple[Decider, str]:
    """The seat's bot as a :class:`Decider`, and its own name."""
    if isinstance(bot, str):
        made = load_bot(bot, seed=seat_seed(seed, seat))
        return PythonDecider(lambda: made), str(made.name)
    if isinstance(bot, Bot):
        return PythonDecider(lambda: bot), str(bot.name)
    if callable(getattr(bot, "decide", None)) and callable(getattr(bot, "start", None)):
        return bot, str(getattr(bot, "name", "") or f"seat {seat}")
    raise ValueError(
        f"seat {seat}: {bot!r} is not a bot: give a spec (path/to/bot.py:Class, module:Class,"
        " random, rules, mc), an object with `name` and `choose(state)`, or a Decider"
    )


def _names(seats: list[tuple[Decider, str]]) -> list[str]:
    """Each seat's bot's name; a name that several seats share gets its seat (``rules#2``)."""
    own = [name for _, name in seats]
    return [f"{name}#{s}" if own.count(name) > 1 else name for s, name in enumerate(own)]


def _warn(seat: int, seq: int, why: str) -> None:
    log.warning("seat %d timed out at seq %d: %s", seat, seq, why)


def play_local(
    game: str,
    bots: Sequence[Bot],
    seed: bytes,
    *,
    options: Mapping[str, Any] | None = None,
    max_actions: int = 100_000,
) -> tuple[Match, list[SeatState]]:
    """Play one match to the end; seat ``i`` is ``bots[i]``. Returns the match and each seat's state."""
    match = setup(game, players=len(bots), options=options).start(seed)
    states = [SeatState("local", seat) for seat in range(len(bots))]
    projectors = [Projector(seat) for seat in range(len(bots))]
    seen = 0
    for _ in range(max_actions):
        for event in match.log[seen:]:
            for state, projector in zip(states, projectors, strict=True):
                state.observe(projector.project(event))
                state.seq += 1
        seen = len(match.log)
        seat = match.to_act
        for state in states:
            state.note_turn(seat, 0)
        if seat is None:
            return match, states
        state = states[seat]
        state.legal = legal_actions_for(match, seat)
        action = bots[seat].choose(state)
        state.legal = []
        match.apply(seat, action)
    raise RuntimeError(f"{game} did not end within {max_actions} actions")
