"""Research interfaces' speed benchmark: OpenSpiel's step beside the engine's own action, and
PettingZoo's turns per second beside a PettingZoo classic game. Not a test: it asserts nothing.

Why: a learner or a search drives a game through its library's interface millions of times, so
the interface's cost per step, not the engine's, bounds it (issue 32.5). The two targets:

* an OpenSpiel step at most **4x** the engine's own action;
* PettingZoo turns per second at least those of PettingZoo's classic card game, Leduc hold'em
  (``pettingzoo.classic.leduc_holdem_v4``; the ``bench`` extra installs its ``rlcard``). It
  imports ``pygame`` for rendering only; where pygame is not installed (the lock does not install
  it) this process gives it a stand-in module, and nothing here renders. Connect Four and
  Tic-Tac-Toe (``connect_four_v3``, ``tictactoe_v3``: turn-based AEC games with the same
  ``observation``/``action_mask`` dictionary and the same three wrappers from ``env()``) are
  extra columns; where Leduc hold'em is not importable (no rlcard) they are the only peers, and
  the first line of the output says why.

What it measures, each in whole random matches, every cell timed by this thread's CPU time
(``--clock wall`` for elapsed time), the cells interleaved over ``--repeats`` rounds with the
order rotated, medians over rounds:

* ``engine``: ``legal_actions()``, ``random.choice``, ``apply`` from ``setup.start(seed)`` to the
  end (seeded deals inside the timing): CPU per action;
* ``openspiel``: the same loop through ``pyspiel`` on the registered game without a seed, chance
  nodes sampled from ``chance_outcomes()`` by inverse CDF with the same generator: CPU per step
  (every ``apply_action``, chance and decision) and per decision (the whole match ÷ the seats'
  decisions); OpenSpiel's own C++ ``hearts`` through the same loop for scale;
* ``pettingzoo``: the usual AEC loop on ``env()`` (the wrapped environment users get):
  ``reset(seed=k)``, then for each agent ``last()``, a random legal action from the mask
  (``np.flatnonzero`` then ``random.choice``), ``step``; turns are the actions taken. The same
  loop on the peers' ``env()``, and on both ``raw_env()`` for scale. Leduc hold'em's seeded
  ``reset`` builds a new rlcard environment (``rlcard.make``), which costs more than its whole
  match of about 2.6 turns; so Leduc's ``env()`` runs a second way too, ``reset(seed=…)`` on its
  first match and ``reset()`` after (as a training loop that seeds once does), and the target is
  met only at or above both.

How to run (from the repository root)::

    .venv/bin/python scripts/bench_interop.py                 # every game, about 90 s
    .venv/bin/python scripts/bench_interop.py --games hexathlon --seconds 0.5 --repeats 3
    .venv/bin/python scripts/bench_interop.py --profile pettingzoo:hexathlon --seconds 5
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import importlib
import importlib.metadata
import importlib.util
import math
import platform
import pstats
import random
import statistics
import sys
import time
import types
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pyspiel

from cardarena.clients.interop import openspiel
from cardarena.clients.interop import pettingzoo as cardarena_pz
from cardarena.engine import GAMES, setup

DEFAULT_SECONDS = 0.6
DEFAULT_REPEATS = 5
STEP_TARGET = 4.0
"""An OpenSpiel step may cost at most this many engine actions."""
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.thread_time, "wall": time.perf_counter}


@dataclass(frozen=True)
class Sample:
    """One round of one cell: whole matches until the time budget ran out."""

    steps: int
    """Calls that advanced the game: engine actions, OpenSpiel ``apply_action`` (chance too),
    PettingZoo turns."""
    decisions: int
    """The seats' own actions among them."""
    seconds: float
    matches: int = 0


class Cell:
    label: str
    kind: str
    game: str

    def play(self, rng: random.Random) -> tuple[int, int]:
        """One whole random match: (steps, decisions)."""
        raise NotImplementedError


class EngineCell(Cell):
    kind = "engine"

    def __init__(self, game: str) -> None:
        self.game = game
        self.setup = setup(game, players=GAMES[game].default_players)
        self.label = f"engine {game}"
        self._index = 0

    def play(self, rng: random.Random) -> tuple[int, int]:
        self._index += 1
        match = self.setup.start(hashlib.sha256(f"{self.label}/{self._index}".encode()).digest())
        actions = 0
        while (seat := match.to_act) is not None:
            match.apply(seat, rng.choice(match.legal_actions()))
            actions += 1
        return actions, actions


def sample_chance(outcomes: Sequence[tuple[int, float]], rng: random.Random) -> int:
    r = rng.random()
    for action, probability in outcomes:
        r -= probability
        if r < 0.0:
            return action
    return outcomes[-1][0]


class SpielCell(Cell):
    kind = "openspiel"

    def __init__(self, game: str, short_name: str | None = None) -> None:
        self.game = game
        self.spiel = pyspiel.load_game(short_name or openspiel.short_name(game))
        self.label = f"openspiel {game}"

    def play(self, rng: random.Random) -> tuple[int, int]:
        state = self.spiel.new_initial_state()
        steps = decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance(state.chance_outcomes(), rng))
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
            steps += 1
        return steps, decisions


class ZooCell(Cell):
    kind = "pettingzoo"

    def __init__(
        self, label: str, game: str, make: Callable[[], Any], *, seed_every_match: bool = True
    ) -> None:
        self.label = label
        self.game = game
        self.env = make()
        self.seed_every_match = seed_every_match
        self._index = 0

    def play(self, rng: random.Random) -> tuple[int, int]:
        e = self.env
        self._index += 1
        if self.seed_every_match or self._index == 1:
            e.reset(seed=self._index)
        else:
            e.reset()
        turns = 0
        for _ in e.agent_iter():
            observation, _, termination, truncation, _ = e.last()
            if termination or truncation:
                e.step(None)
                continue
            e.step(rng.choice(np.flatnonzero(observation["action_mask"]).tolist()))
            turns += 1
        return turns, turns


LEDUC = "leduc_holdem_v4"
EXTRA_PEERS = ("connect_four_v3", "tictactoe_v3")
SEEDED_ONCE = "seeded once"


def stand_in(name: str) -> types.ModuleType:
    """An empty module whose every attribute is another one: enough for a module that imports
    pygame and names ``pygame.Surface`` or ``pygame.font.Font`` in its annotations, and never
    renders."""
    module = types.ModuleType(name)

    def attribute(attr: str) -> types.ModuleType:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return stand_in(f"{name}.{attr}")

    module.__getattr__ = attribute  # type: ignore[method-assign]
    return module


def classic(name: str) -> Any:
    """``pettingzoo.classic.<name>``, without its warning that ``env()`` is the old way to
    make an environment (it is the way the benchmark measures every environment)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return importlib.import_module(f"pettingzoo.classic.{name}")


def zoo_peers() -> tuple[list[tuple[str, Any]], str]:
    """The PettingZoo classic modules to compare with, the target first, and why these."""
    stood_in = ""
    if "pygame" not in sys.modules and importlib.util.find_spec("pygame") is None:
        sys.modules["pygame"] = stand_in("pygame")  # for rendering only; never called
        stood_in = "; pygame (for rendering only) stood in by an empty module"
    peers: list[tuple[str, Any]] = []
    try:
        peers.append((LEDUC, classic(LEDUC)))
    except ImportError as error:
        why = (
            f"{LEDUC} is not importable here ({error}: `bash scripts/bootstrap.sh` installs "
            f"rlcard, the bench extra); so the other classic turn-based games instead"
        )
    else:
        why = f"{LEDUC} the target, {' and '.join(EXTRA_PEERS)} for scale"
    peers += [(name, classic(name)) for name in EXTRA_PEERS]
    return peers, why + stood_in


def measure(cell: Cell, rng: random.Random, budget: float, clock: Callable[[], float]) -> Sample:
    steps = decisions = matches = 0
    start = clock()
    while True:
        s, d = cell.play(rng)
        steps += s
        decisions += d
        matches += 1
        elapsed = clock() - start
        if elapsed >= budget:
            return Sample(steps, decisions, elapsed, matches)


def run(
    cells: Sequence[Cell], seconds: float, repeats: int, clock: Callable[[], float]
) -> dict[str, list[Sample]]:
    rngs = {c.label: random.Random(hashlib.sha256(c.label.encode()).digest()) for c in cells}
    for cell in cells:  # warm-up: imports, caches, first calls; not measured
        cell.play(random.Random(0))
    samples: dict[str, list[Sample]] = {c.label: [] for c in cells}
    start = time.perf_counter()
    for round_index in range(repeats):
        shift = round_index % len(cells)
        for cell in [*cells[shift:], *cells[:shift]]:
            samples[cell.label].append(measure(cell, rngs[cell.label], seconds, clock))
        print(
            f"  round {round_index + 1}/{repeats} done, {time.perf_counter() - start:.0f} s",
            file=sys.stderr,
            flush=True,
        )
    return samples


def per_step_us(samples: Sequence[Sample]) -> float:
    return statistics.median(s.seconds / s.steps * 1e6 for s in samples)


def per_decision_us(samples: Sequence[Sample]) -> float:
    return statistics.median(s.seconds / s.decisions * 1e6 for s in samples)


def rate(samples: Sequence[Sample]) -> float:
    return statistics.median(s.steps / s.seconds for s in samples)


def round_ratios(a: Sequence[Sample], b: Sequence[Sample], f: Callable[[Sample], float]) -> str:
    ratios = [f(x) / f(y) for x, y in zip(a, b, strict=True)]
    return f"{min(ratios):.2f}-{max(ratios):.2f}"


def report(games: Sequence[str], samples: dict[str, list[Sample]], peers: Sequence[str]) -> None:
    print("\nOpenSpiel interface beside the engine (CPU µs; ratios of medians, rounds' range)")
    header = (
        f"{'game':<12} {'engine/action':>13} {'spiel/step':>10} {'spiel/decision':>14} "
        f"{'step ÷ action':>16} {'decision ÷ action':>18}"
    )
    print(header)
    print("-" * len(header))
    worst = 0.0
    for game in games:
        engine, spiel = samples[f"engine {game}"], samples[f"openspiel {game}"]
        action = per_step_us(engine)
        step, decision = per_step_us(spiel), per_decision_us(spiel)
        worst = max(worst, step / action)
        step_range = round_ratios(spiel, engine, lambda s: s.seconds / s.steps)
        decision_range = round_ratios(
            spiel, engine, lambda s: s.seconds / s.decisions if s.decisions else 0.0
        )
        print(
            f"{game:<12} {action:>13.2f} {step:>10.2f} {decision:>14.2f} "
            f"{step / action:>5.2f} ({step_range}) {decision / action:>6.2f} ({decision_range})"
        )
    hearts = samples.get("openspiel hearts")
    if hearts:
        print(
            f"{'hearts (C++)':<12} {'':>13} {per_step_us(hearts):>10.2f} "
            f"{per_decision_us(hearts):>14.2f}"
        )
    verdict = "met" if worst <= STEP_TARGET else "NOT met"
    print(
        f"*** slowest OpenSpiel step ÷ engine action = {worst:.2f} (target ≤ {STEP_TARGET:g}: "
        f"{verdict}) ***"
    )

    print(
        "\nPettingZoo turns/s (env(): the wrapped environment; medians, rounds' range; "
        "reset(seed=k) before every match unless seeded once)"
    )
    columns = zoo_columns(peers)
    header = f"{'environment':<40} {'turns/s':>9} {'turns/match':>11} " + " ".join(
        f"{'÷ ' + title:>30}" for title, _ in columns
    )
    print(header)
    print("-" * len(header))
    rows = [label for label in samples if label.startswith(("pettingzoo", "peer"))]
    lowest: dict[str, float] = {}
    for label in rows:
        mine = samples[label]
        cells = []
        for title, theirs_label in columns:
            theirs = samples[theirs_label]
            ratio = rate(mine) / rate(theirs)
            if label.startswith("pettingzoo") and label.endswith("env()"):
                lowest[title] = min(lowest.get(title, math.inf), ratio)
            cells.append(
                f"{ratio:.2f} ({round_ratios(mine, theirs, lambda s: s.steps / s.seconds)})"
            )
        per_match = sum(s.steps for s in mine) / max(1, sum(s.matches for s in mine))
        print(
            f"{label:<40} {rate(mine):>9,.0f} {per_match:>11.1f} "
            + " ".join(f"{c:>30}" for c in cells)
        )
    for title, ratio in lowest.items():
        verdict = "met" if ratio >= 1.0 else "NOT met"
        target = "target ≥ 1" if title.startswith(peers[0]) else "for scale"
        print(
            f"*** slowest cardarena env() turns/s ÷ {title} = {ratio:.2f} ({target}: {verdict}) ***"
        )


def zoo_columns(peers: Sequence[str]) -> list[tuple[str, str]]:
    """The PettingZoo table's ratio columns: (title, the peer's cell label)."""
    columns = []
    for peer in peers:
        columns.append((peer, f"peer {peer} env()"))
        if peer == LEDUC:
            columns.append((f"{peer} {SEEDED_ONCE}", f"peer {peer} env() {SEEDED_ONCE}"))
    return columns


def profile(target: str, seconds: float) -> None:
    kind, _, game = target.partition(":")
    cell: Cell
    if kind == "openspiel":
        cell = SpielCell(game)
    elif kind == "pettingzoo":
        cell = ZooCell(f"pettingzoo {game} env()", game, partial(cardarena_pz.env, game))
    else:
        cell = EngineCell(game)
    cell.play(random.Random(0))
    profiler = cProfile.Profile()
    profiler.enable()
    sample = measure(cell, random.Random(1), seconds, time.thread_time)
    profiler.disable()
    print(f"cProfile of {cell.label}: {sample.steps} steps in {sample.seconds:.1f} s (profiled)")
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats(pstats.SortKey.CUMULATIVE).print_stats(25)
    stats.sort_stats(pstats.SortKey.TIME).print_stats(20)


def positive(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
        return value

    return parse


def game_name(text: str) -> str:
    if text not in GAMES:
        raise argparse.ArgumentTypeError(f"unknown game {text!r}; games: {', '.join(GAMES)}")
    return text


def profile_target(text: str) -> str:
    kind, sep, game = text.partition(":")
    if kind not in ("engine", "openspiel", "pettingzoo") or not sep or game not in GAMES:
        raise argparse.ArgumentTypeError(
            f"expected engine|openspiel|pettingzoo:GAME, games: {', '.join(GAMES)}"
        )
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench_interop.py",
        description=(
            "OpenSpiel's step beside the engine's action, and PettingZoo's turns/s beside a "
            "PettingZoo classic game, each game at its default player count. Not a test."
        ),
    )
    parser.add_argument(
        "--seconds",
        type=positive(float),
        default=DEFAULT_SECONDS,
        help=f"CPU seconds of whole matches per cell per round (default {DEFAULT_SECONDS})",
    )
    parser.add_argument(
        "--repeats",
        type=positive(int),
        default=DEFAULT_REPEATS,
        help=f"rounds over every cell; figures are medians (default {DEFAULT_REPEATS})",
    )
    parser.add_argument(
        "--games",
        type=game_name,
        nargs="+",
        default=list(GAMES),
        help="these games only (default: all; each at its default player count)",
    )
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    parser.add_argument(
        "--profile",
        type=profile_target,
        metavar="KIND:GAME",
        help="run one cell (engine, openspiel or pettingzoo) under cProfile and print it",
    )
    args = parser.parse_args(argv)
    openspiel.register()
    if args.profile:
        profile(args.profile, args.seconds)
        return 0
    games: list[str] = list(dict.fromkeys(args.games))
    peers, why = zoo_peers()
    cells: list[Cell] = []
    for game in games:
        cells += [EngineCell(game), SpielCell(game)]
    hearts = SpielCell("hearts", "hearts")
    hearts.label = "openspiel hearts"
    cells.append(hearts)
    for make in (cardarena_pz.env, cardarena_pz.raw_env):
        for game in games:
            cells.append(ZooCell(f"pettingzoo {game} {make.__name__}()", game, partial(make, game)))
    for name, module in peers:
        cells.append(ZooCell(f"peer {name} env()", name, module.env))
        if name == LEDUC:
            cells.append(
                ZooCell(
                    f"peer {name} env() {SEEDED_ONCE}", name, module.env, seed_every_match=False
                )
            )
        cells.append(ZooCell(f"peer {name} raw_env()", name, module.raw_env))
    versions = ", ".join(
        f"{p} {importlib.metadata.version(p)}" for p in ("open-spiel", "pettingzoo")
    )
    print(
        f"bench_interop: {len(cells)} cells x {args.repeats} rounds x {args.seconds:g} s "
        f"({args.clock} time); Python {platform.python_version()}, {versions}\n"
        f"PettingZoo peers: {', '.join(n for n, _ in peers)} ({why})",
        flush=True,
    )
    samples = run(cells, args.seconds, args.repeats, CLOCKS[args.clock])
    report(games, samples, [n for n, _ in peers])
    return 0


if __name__ == "__main__":
    sys.exit(main())
