"""Engine speed benchmark: random full matches of every game, next to OpenSpiel's hearts.

Why: bots play and search by calling ``legal_actions`` and ``apply`` in a loop, so the
engine's throughput bounds what a server or a Monte Carlo player can do. This script gives
that throughput a number and a yardstick: the same Python loop driving OpenSpiel's C++
``hearts`` (a comparable four-player trick game) through ``pyspiel``. It is a benchmark run
on purpose, not a test: it asserts nothing about speed.

What it measures. For every game and every allowed player count (a *cell*) it plays whole
random matches with ::

    legal = match.legal_actions(); action = rng.choice(legal); match.apply(seat, action)

each match from its own 32-byte seed (SHA-256 of the cell and the match's index), every
cell with its own ``random.Random``. Actions are calls to ``apply``; match creation and the
seeded deals that ``apply`` makes are inside the timing. OpenSpiel hearts runs the same loop
from ``game.new_initial_state()``; its chance nodes (the pass direction and the deal) are
sampled with the same ``rng`` by inverse CDF and applied inside the timing too, but only
player actions are counted. Time is this thread's CPU time unless ``--clock wall`` says
otherwise: on a shared machine other processes take the cores in turns, and the wall clock
would charge their turns to whichever cell was running. Each round gives every cell a time
budget of whole matches; the order of the cells rotates from round to round so that each
cell, and OpenSpiel, is measured at different moments of a noisy machine; the table shows
the median over rounds and the spread (max - min) / median.

``CARDARENA_ENGINE=compiled bash scripts/bench.sh`` measures the optional mypyc build of the
engine (scripts/build_compiled_engine.sh) instead; the first line says which engine ran.

How to run (from the repository root)::

    .venv/bin/pip install -e '.[bench]' --config-settings editable_mode=strict  # the peer
    .venv/bin/python scripts/bench_engine.py                       # every cell, about 46 s
    .venv/bin/python scripts/bench_engine.py --games hexathlon:4 triathlon --seconds 2
    .venv/bin/python scripts/bench_engine.py --profile hexathlon:4 --seconds 10

Without ``pyspiel`` it says how to install it and reports the engine alone (exit 0), or
exits 2 with ``--require-peer``. ``--profile GAME:PLAYERS`` runs that one cell's loop under
cProfile instead and prints the functions with the most cumulative and own time.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import importlib
import importlib.metadata
import math
import platform
import pstats
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.machinery import EXTENSION_SUFFIXES
from types import ModuleType
from typing import Any, Protocol

import cardarena.engine
from cardarena.clients.cli.argtypes import positive_int
from cardarena.engine import GAMES, setup

DEFAULT_SECONDS = 0.7
DEFAULT_REPEATS = 5
HEADLINE = ("hexathlon", 4)
PEER_GAME = "hearts"
PEER_LABEL = f"OpenSpiel {PEER_GAME}"
PEER_INSTALL = "pip install -e '.[bench]' --config-settings editable_mode=strict"


class Cell(Protocol):
    """Something that plays one whole random match and says how many player actions it took."""

    name: str
    players: int
    label: str

    def play(self, rng: random.Random) -> int: ...


class EngineCell:
    """One game at one player count of our engine."""

    def __init__(self, game: str, players: int) -> None:
        self.game = self.name = game
        self.players = players
        self.label = f"{game} {players}p"
        self._index = 0
        # Validated once, as OpenSpiel's load_game is; each match then starts from its seed.
        self.setup = setup(game, players=players)

    def seed(self) -> bytes:
        """A distinct 32-byte seed for each match of each cell, the same on every run."""
        text = f"bench_engine/{self.game}/{self.players}/{self._index}"
        self._index += 1
        return hashlib.sha256(text.encode()).digest()

    def play(self, rng: random.Random) -> int:
        match = self.setup.start(self.seed())
        actions = 0
        while (seat := match.to_act) is not None:
            legal = match.legal_actions()
            action = rng.choice(legal)
            match.apply(seat, action)
            actions += 1
        if not match.over:
            raise RuntimeError(f"{self.label}: nobody is to act but the match is not over")
        return actions


def sample_chance(outcomes: Sequence[tuple[int, float]], rng: random.Random) -> int:
    """One chance outcome by inverse CDF: one ``rng.random()``, right for any distribution."""
    r = rng.random()
    for action, probability in outcomes:
        r -= probability
        if r < 0.0:
            return action
    return outcomes[-1][0]


class PeerCell:
    """OpenSpiel's hearts driven by the same loop; chance steps are timed but not counted."""

    def __init__(self, pyspiel: ModuleType) -> None:
        self.game: Any = pyspiel.load_game(PEER_GAME)
        self.players: int = self.game.num_players()
        self.name = self.label = PEER_LABEL

    def play(self, rng: random.Random) -> int:
        state = self.game.new_initial_state()
        actions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance(state.chance_outcomes(), rng))
            else:
                legal = state.legal_actions()
                state.apply_action(rng.choice(legal))
                actions += 1
        return actions


@dataclass(frozen=True)
class Sample:
    """One round of one cell: whole matches played until the time budget ran out."""

    actions: int
    matches: int
    seconds: float

    @property
    def actions_per_second(self) -> float:
        return self.actions / self.seconds

    @property
    def matches_per_second(self) -> float:
        return self.matches / self.seconds


CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.thread_time, "wall": time.perf_counter}
"""``cpu``: the time this thread ran (the default), so that a busy shared machine, where other
processes take the cores in turns, slows each cell less; it still shares caches with them.
``wall``: elapsed time, as on a quiet machine."""


def measure(
    cell: Cell, rng: random.Random, budget: float, clock: Callable[[], float] = time.thread_time
) -> Sample:
    """Play whole matches until ``budget`` seconds of ``clock`` have passed (at least one)."""
    actions = matches = 0
    start = clock()
    while True:
        actions += cell.play(rng)
        matches += 1
        elapsed = clock() - start
        if elapsed >= budget:
            return Sample(actions, matches, elapsed)


@dataclass(frozen=True)
class Summary:
    name: str
    label: str
    players: int
    actions_per_match: float
    matches_per_second: float
    actions_per_second: float
    spread: float


def summarize(cell: Cell, samples: Sequence[Sample]) -> Summary:
    rates = [s.actions_per_second for s in samples]
    median = statistics.median(rates)
    return Summary(
        name=cell.name,
        label=cell.label,
        players=cell.players,
        actions_per_match=sum(s.actions for s in samples) / sum(s.matches for s in samples),
        matches_per_second=statistics.median(s.matches_per_second for s in samples),
        actions_per_second=median,
        spread=(max(rates) - min(rates)) / median,
    )


def run(
    cells: Sequence[Cell], seconds: float, repeats: int, clock: Callable[[], float]
) -> dict[str, list[Sample]]:
    """``repeats`` rounds over every cell, the order rotated each round: each cell's samples."""
    rngs = {
        cell.label: random.Random(hashlib.sha256(cell.label.encode()).digest()) for cell in cells
    }
    for cell in cells:  # warm-up: first calls, lazy imports, caches; not measured
        cell.play(random.Random(0))
    samples: dict[str, list[Sample]] = {cell.label: [] for cell in cells}
    start = time.perf_counter()
    for round_index in range(repeats):
        shift = round_index % len(cells)
        for cell in [*cells[shift:], *cells[:shift]]:
            samples[cell.label].append(measure(cell, rngs[cell.label], seconds, clock))
        elapsed = time.perf_counter() - start
        print(f"  round {round_index + 1}/{repeats} done, {elapsed:.1f} s", file=sys.stderr)
    return samples


def ratio_text(ours: Summary, peer: Summary) -> str:
    return f"{ours.actions_per_second / peer.actions_per_second:.2f}"


def print_table(summaries: Sequence[Summary], peer: Summary | None) -> None:
    header = (
        f"{'game':<20} {'players':>7} {'actions/match':>13} {'matches/s':>10} "
        f"{'actions/s':>10} {'spread':>7} {'÷ hearts':>9}"
    )
    print(header)
    print("-" * len(header))
    for s in summaries:
        ratio = ratio_text(s, peer) if peer is not None else "-"
        print(
            f"{s.name:<20} {s.players:>7} {s.actions_per_match:>13.1f} "
            f"{s.matches_per_second:>10.1f} {s.actions_per_second:>10,.0f} "
            f"{s.spread:>6.0%} {ratio:>9}"
        )


def print_headline(
    summaries: Sequence[Summary], peer: Summary | None, samples: dict[str, list[Sample]]
) -> None:
    """The one number to watch, with the range of the same ratio taken round by round."""
    label = f"{HEADLINE[0]} {HEADLINE[1]}p"
    ours = next((s for s in summaries if s.label == label), None)
    print()
    if peer is None:
        print(f"*** {label} ÷ {PEER_LABEL}: not measured ({PEER_LABEL} unavailable) ***")
    elif ours is None:
        print(f"*** {label} ÷ {PEER_LABEL}: not measured ({label} not selected by --games) ***")
    else:
        rounds = [
            a.actions_per_second / b.actions_per_second
            for a, b in zip(samples[label], samples[PEER_LABEL], strict=True)
        ]
        print(
            f"*** {label} actions/s ÷ {PEER_LABEL} actions/s = {ratio_text(ours, peer)} ***\n"
            f"    medians {ours.actions_per_second:,.0f} / {peer.actions_per_second:,.0f}; "
            f"round by round {min(rounds):.2f} to {max(rounds):.2f}"
        )


def engine_build() -> str:
    """Which engine this process imported: the pure-Python one, or the optional mypyc build
    (``CARDARENA_ENGINE=compiled bash scripts/bench.sh``), with its compiled modules named."""
    compiled = sorted(
        name
        for name, module in sys.modules.items()
        if name.startswith("cardarena.engine.")
        and str(getattr(module, "__file__", "")).endswith(tuple(EXTENSION_SUFFIXES))
    )
    if not compiled:
        return "pure-Python engine"
    names = ", ".join(n.rpartition(".")[2] for n in compiled)
    return f"compiled engine from {cardarena.engine.__path__[0]} (mypyc: {names})"


def load_peer() -> ModuleType | None:
    try:
        return importlib.import_module("pyspiel")
    except ImportError:
        return None


def peer_version() -> str:
    try:
        return importlib.metadata.version("open-spiel")
    except importlib.metadata.PackageNotFoundError:
        return "unknown version"


# -- command line ------------------------------------------------------------------------


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"seconds must be a finite number > 0, got {text!r}")
    return value


def all_choices() -> str:
    return "; ".join(
        f"{name} ({', '.join(str(p) for p in spec.players)})" for name, spec in GAMES.items()
    )


def parse_cell(text: str) -> tuple[str, int | None]:
    """``GAME`` (every player count) or ``GAME:PLAYERS``."""
    name, sep, count = text.strip().partition(":")
    if name not in GAMES:
        raise argparse.ArgumentTypeError(
            f"unknown game {name!r}; games (player counts): {all_choices()}"
        )
    if not sep:
        return name, None
    allowed = GAMES[name].players
    try:
        players = int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected GAME:PLAYERS, PLAYERS one of {', '.join(map(str, allowed))}"
        ) from None
    if players not in allowed:
        raise argparse.ArgumentTypeError(
            f"{name} is played by {', '.join(map(str, allowed))} players, not {players}"
        )
    return name, players


def parse_cells(text: str) -> list[tuple[str, int | None]]:
    """One ``--games`` word; commas separate several, as in ``hexathlon:4,triathlon``."""
    parts = [p for p in text.split(",") if p.strip()]
    if not parts:
        raise argparse.ArgumentTypeError("expected a game name")
    return [parse_cell(p) for p in parts]


def expand(selection: Sequence[tuple[str, int | None]] | None) -> list[tuple[str, int]]:
    """Every selected (game, players) once, in the registry's order."""
    if selection is None:
        return [(name, p) for name, spec in GAMES.items() for p in spec.players]
    chosen = {(n, p) for n, only in selection for p in GAMES[n].players if only in (None, p)}
    return [(name, p) for name, spec in GAMES.items() for p in spec.players if (name, p) in chosen]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bench_engine.py",
        description=(
            "Play random full matches of every game and player count and report actions/s, "
            f"next to OpenSpiel's {PEER_GAME} driven by the same loop. Not a test."
        ),
        epilog=f"games (player counts): {all_choices()}",
    )
    parser.add_argument(
        "--seconds",
        type=positive_seconds,
        default=DEFAULT_SECONDS,
        help=(
            "time budget of whole matches for each cell in each round "
            f"(default {DEFAULT_SECONDS}; with --profile: the profiled time)"
        ),
    )
    parser.add_argument(
        "--repeats",
        type=positive_int,
        default=DEFAULT_REPEATS,
        help=f"rounds over every cell; the table shows medians (default {DEFAULT_REPEATS})",
    )
    parser.add_argument(
        "--games",
        type=parse_cells,
        nargs="+",
        metavar="GAME[:PLAYERS]",
        help="only these games, or one player count of a game (default: every game and count)",
    )
    parser.add_argument(
        "--require-peer",
        action="store_true",
        help=f"exit 2 when OpenSpiel (pyspiel) is not importable instead of skipping {PEER_GAME}",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="time each cell by this thread's CPU time (default) or by the wall clock",
    )
    parser.add_argument(
        "--profile",
        type=parse_cell,
        metavar="GAME:PLAYERS",
        help="run only this cell's loop under cProfile for --seconds and print the hot functions",
    )
    return parser


def profile(game: str, players: int, seconds: float) -> None:
    cell = EngineCell(game, players)
    rng = random.Random(hashlib.sha256(cell.label.encode()).digest())
    cell.play(random.Random(0))
    profiler = cProfile.Profile()
    profiler.enable()
    sample = measure(cell, rng, seconds)
    profiler.disable()
    print(
        f"cProfile of {cell.label}: {sample.matches} matches, {sample.actions} actions "
        f"in {sample.seconds:.1f} s (profiled, so slower than the benchmark)"
    )
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats(pstats.SortKey.CUMULATIVE).print_stats(25)
    stats.sort_stats(pstats.SortKey.TIME).print_stats(15)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    seconds: float = args.seconds
    repeats: int = args.repeats

    if args.profile is not None:
        game, players = args.profile
        if players is None:
            parser.error(f"--profile needs GAME:PLAYERS, e.g. {HEADLINE[0]}:{HEADLINE[1]}")
        profile(game, players, seconds)
        return 0

    selection = None if args.games is None else [c for word in args.games for c in word]
    engine_cells: list[Cell] = [EngineCell(g, p) for g, p in expand(selection)]

    pyspiel = load_peer()
    if pyspiel is None:
        message = (
            f"OpenSpiel is not importable (module pyspiel), so {PEER_LABEL} is not measured. "
            f"Install the peer with: {PEER_INSTALL}"
        )
        if args.require_peer:
            print(f"error: {message}", file=sys.stderr)
            return 2
        print(f"note: {message}\n")
    peer_cell = PeerCell(pyspiel) if pyspiel is not None else None
    cells = [*engine_cells, *([peer_cell] if peer_cell is not None else [])]

    peer_text = f"open-spiel {peer_version()}" if peer_cell is not None else "no peer"
    print(
        f"bench_engine: {len(cells)} cells x {repeats} rounds x {seconds:g} s "
        f"(about {len(cells) * repeats * seconds:.0f} s); Python {platform.python_version()}, "
        f"{peer_text}; medians over rounds of {args.clock} time\n{engine_build()}",
        flush=True,
    )
    samples = run(cells, seconds, repeats, CLOCKS[args.clock])
    summaries = [summarize(cell, samples[cell.label]) for cell in cells]
    peer = summaries[-1] if peer_cell is not None else None
    print()
    print_table(summaries, peer)
    print_headline(summaries, peer, samples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
