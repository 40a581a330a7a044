"""The main job (``bash scripts/main.sh``): the whole system end to end, in about a minute.

1. start ``cardarena serve`` on 127.0.0.1:0 with a fresh store (a temporary folder, or
   ``--data-dir``), and read its ``cardarena listening on HOST:PORT`` line;
2. for every game the server offers, have the server host a tournament of the reference bots
   (random and every bot of ``REFERENCE``, the Monte Carlo bot on a small budget), each bot
   its own process connected as an entrant, with duplicate deals; print the server's
   standings and crosstable;
3. audit every tournament as an outsider would: every match log (``GetMatchLog``) pinned
   to the hash the tournament published, its schedule and its standings recomputed;
4. stop the server with SIGTERM (a graceful drain that must exit 0).

It exits non-zero if any match failed, any log did not audit clean, or the server did not stop
cleanly: it is the first thing to run on a new machine and should say plainly whether all is well.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..audit.tournament import audit_tournament
from ..bots import REFERENCE
from ..client import ArenaClient
from ..tournament import BotEntry, parse_bot
from ..tournament.hosted_report import HOSTED_LEGEND, print_hosted
from ..tournament.launcher import BotFailedToStart, HostedConfig, Launch
from ..tournament.progress import LiveProgress
from ..tournament.terminal import print_error
from .argtypes import MAX_CONCURRENCY, MAX_DEALS, MAX_MOVE_MS, seed_hex, whole

CARDARENA = Path(sys.executable).parent / "cardarena"
PLAYERS = 3
"""Every game of RULES.md can be played by three, so one lineup covers them all."""
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/main.sh",
        description="Start a server, play a tournament of the reference bots on every game, "
        "audit every match log, stop the server.",
    )
    parser.add_argument("--game", action="append", help="only this game (repeatable)")
    parser.add_argument(
        "--deals",
        type=whole(1, MAX_DEALS),
        default=4,
        help="deal seeds per game (default: %(default)s)",
    )
    parser.add_argument(
        "--concurrency",
        type=whole(1, MAX_CONCURRENCY),
        default=4,
        help="matches at once (default: %(default)s)",
    )
    parser.add_argument(
        "--mc-budget-ms",
        type=whole(1, MAX_MOVE_MS),
        default=10,
        help="Monte Carlo time per decision (default: %(default)s)",
    )
    parser.add_argument("--seed", type=seed_hex, default=bytes(32), help="64 hex digits")
    parser.add_argument("--data-dir", type=Path, help="keep the server's store here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser.parse_args(argv)


def reference_bots(mc_budget_ms: int) -> list[BotEntry]:
    """``random`` first, then every other reference bot; a Monte Carlo bot gets the budget."""
    names = ["random", *(n for n in REFERENCE if n != "random")]
    return [parse_bot(f"{n},budget_ms={mc_budget_ms}" if n == "mc" else n) for n in names]


async def main_job(args: argparse.Namespace, data_dir: Path) -> int:
    # Locked, as a tournament host should run it: only the operator token creates matches,
    # and every seat of every match is reserved for the bot the schedule puts there.
    token = secrets.token_urlsafe(32)
    server = await start_server(data_dir, token)
    failures = 0
    try:
        address = server.address
        print(f"server: cardarena listening on {address} (store in {data_dir})", flush=True)
        async with ArenaClient(address) as client:
            games = args.game or [g.name for g in await client.list_games()]
        bots = reference_bots(args.mc_budget_ms)
        print("bots: " + ", ".join(f"{b.name} ({b.describe()})" for b in bots))
        print(HOSTED_LEGEND, flush=True)
        tournaments: list[str] = []
        for game in games:
            config = HostedConfig(
                address=address,
                game=game,
                bots=bots,
                players=PLAYERS,
                deals=args.deals,
                concurrency=args.concurrency,
                seed=args.seed,
                operator_token=token,
            )
            info, stopped = await hosted_tournament(config, progress=not args.no_progress)
            print_hosted(info, sys.stdout, legend=False)
            sys.stdout.flush()
            failures += info.failed + stopped
            tournaments.append(info.tournament_id)
        failures += await audit_all(address, tournaments)
    finally:
        code = await server.stop()
    print(f"server stopped with SIGTERM (exit code {code})")
    if code != 0:
        failures += 1
    print("main job: " + ("all well" if not failures else f"{failures} FAILURES"))
    return 1 if failures else 0


async def hosted_tournament(config: HostedConfig, *, progress: bool) -> tuple[Any, int]:
    """One game's tournament, hosted by the server, each bot its own entrant process: the
    final TournamentInfo (every match included) and how many bots stopped with an error."""
    stopped: list[str] = []

    def bot_stopped(bot: BotEntry, code: int) -> None:
        stopped.append(bot.name)
        print(f"\nbot {bot.name} stopped with exit status {code}", file=sys.stderr)

    async with ArenaClient(config.address, operator_token=config.operator_token) as client:
        launch = Launch(client, config)
        try:
            await launch.start()
        except BotFailedToStart as error:
            raise RuntimeError(str(error)) from None
        update = LiveProgress(label=config.game, enabled=None if progress else False)
        try:
            await launch.follow(update, bot_stopped)
        finally:
            update.close()
        await launch.stop_bots()
        info = await client.tournaments.get(launch.tournament_id, matches=True)
    return info, len(stopped)


async def audit_all(address: str, tournaments: Sequence[str]) -> int:
    """Audit every tournament as an outsider would (``cardarena audit --tournament``): each
    match log pinned to the hash the tournament published, the schedule, the standings
    recomputed; print the verdict; return the number of findings."""
    print(f"\n== audit of {len(tournaments)} tournaments and their match logs (GetMatchLog)")
    findings = audited = 0
    async with ArenaClient(address) as client:
        for tournament_id in tournaments:
            report = await audit_tournament(client, tournament_id)
            audited += report.audited
            findings += report.count
            for finding in report.findings:
                print(f"  tournament {tournament_id}: {finding}")
    verdict = f"{findings} FINDINGS" if findings else "all clean"
    print(f"{audited} matches audited, schedules and standings recomputed: {verdict}")
    return findings


class Server:
    """A ``cardarena serve`` child process on 127.0.0.1:0."""

    def __init__(self, process: asyncio.subprocess.Process, address: str) -> None:
        self.process = process
        self.address = address

    async def stop(self) -> int | None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), STOP_TIMEOUT_S)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
                return None
        return self.process.returncode


async def start_server(data_dir: Path, admin_token: str) -> Server:
    log = (data_dir / "server.log").open("ab")
    process = await asyncio.create_subprocess_exec(
        str(CARDARENA),
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        str(data_dir),
        "--metrics-port",
        "-1",
        stdout=asyncio.subprocess.PIPE,
        stderr=log,
        env={**os.environ, "CARDARENA_ADMIN_TOKEN": admin_token},  # not in the process list
    )
    log.close()
    assert process.stdout is not None
    try:
        line = (await asyncio.wait_for(process.stdout.readline(), START_TIMEOUT_S)).decode()
    except TimeoutError:
        line = ""
    if not line.startswith("cardarena listening on "):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise RuntimeError(
            f"the server did not start ({line.strip()!r}); see {data_dir}/server.log"
        )
    return Server(process, line.split()[-1])


@contextlib.contextmanager
def store_folder(chosen: Path | None) -> Iterator[Path]:
    if chosen is not None:
        chosen.mkdir(parents=True, exist_ok=True)
        yield chosen
        return
    with tempfile.TemporaryDirectory(prefix="cardarena-main-") as folder:
        yield Path(folder)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print("== cardarena main job: server, tournament of the reference bots, audit of every log")
    try:
        with store_folder(args.data_dir) as data_dir:
            return asyncio.run(main_job(args, data_dir))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except RuntimeError as error:
        print_error("main job", str(error))
        return 1


if __name__ == "__main__":
    sys.exit(main())
