"""The ``cardarena`` command: one entry point, one subcommand per tool.

Each subcommand lives in a module of its own that declares its arguments (``configure``) and
returns the function that runs it; this module only wires them together.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

Command = Callable[[argparse.Namespace], int]

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "games": ("cardarena.clients.demo", "list the games, their player counts and options"),
    "demo": (
        "cardarena.clients.demo",
        "play random matches of every game with the engine and replay them",
    ),
    "audit": (
        "cardarena.clients.audit",
        "check a match log: hash chain, seed commitment, deals, every action and result",
    ),
    "replay": (
        "cardarena.clients.render",
        "show a match log round by round, or write a self-contained HTML replay",
    ),
    "tournament": (
        "cardarena.clients.tournament",
        "play bots against each other on a server: duplicate deals, standings, ratings",
    ),
    "health": (
        "cardarena.clients.health",
        "ask a server's gRPC health service whether it serves (exit 0 SERVING, 1 not, 2 unreachable)",
    ),
    # The server registers its own subcommand; clients never import the server's code.
    "serve": ("cardarena.server.cli", "run the gRPC match server with its SQLite event store"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cardarena",
        description="Host card-game bot competitions with replayable, auditable match logs.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub = commands.add_parser(name, help=help_text, description=help_text)
        module = importlib.import_module(module_name)
        configure: Callable[[str, argparse.ArgumentParser], Command] = module.configure
        sub.set_defaults(run=configure(name, sub))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run: Command = args.run
    try:
        return run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
