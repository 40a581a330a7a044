"""The ``cardarena`` command: one entry point, one subcommand per registered tool.

Why entry points: a subcommand is whatever an installed distribution registers in the
entry-point group ``cardarena.commands`` (``NAME = "module:configure"``, see pyproject.toml):
the clients' own tools, and ``serve``, which the server registers for itself. This module
names no command module, so the clients depend on the server neither in their code nor in
their import graph (the import contract sees everything they import), and a command's module
is imported only when that command runs: ``cardarena --help`` reads each summary from the
module's source without running any of it, so it costs no server, gRPC or engine import.

A command is ``configure(name, parser) -> run``: it declares its arguments on its own
sub-parser and returns the function that runs them (returning the exit status). Its one-line
summary is the first line of ``configure``'s docstring, else of its module's docstring.
"""

from __future__ import annotations

import argparse
import ast
import errno
import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module, metadata
from importlib.machinery import ModuleSpec
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import NoReturn

GROUP = "cardarena.commands"

Command = Callable[[argparse.Namespace], int]
Configure = Callable[[str, argparse.ArgumentParser], Command]


def registered() -> dict[str, EntryPoint]:
    """The registered commands by name, in name order (a name's first registration wins)."""
    found: dict[str, EntryPoint] = {}
    for entry in entry_points(group=GROUP):
        found.setdefault(entry.name, entry)
    return dict(sorted(found.items()))


def build_parser(
    commands: dict[str, EntryPoint], chosen: str | None = None
) -> argparse.ArgumentParser:
    """The parser of every command; only ``chosen`` (if any) is configured, hence imported.

    Without a chosen command the parser can only print the help or refuse its input, and that
    is when every command's summary is read.
    """
    parser = Parser(
        prog="cardarena",
        description="Host card-game bot competitions with replayable, auditable match logs.",
    )
    parser.add_argument("--version", action="version", version=f"cardarena {version()}")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, entry in commands.items():
        if chosen is None:
            subcommands.add_parser(name, help=summary(entry))
        elif name == chosen:
            configure: Configure = entry.load()
            text = summary(entry)
            sub = subcommands.add_parser(name, help=text, description=text)
            sub.set_defaults(run=configure(name, sub))
        else:
            subcommands.add_parser(name)
    return parser


class Parser(argparse.ArgumentParser):
    """argparse, its one-line errors drawn as every other error of the command line is."""

    def error(self, message: str) -> NoReturn:
        # Looked up only now, so that --help and every successful parse import no rich.
        terminal = import_module("cardarena.clients.tournament.terminal")
        self.print_usage(sys.stderr)
        terminal.print_error(f"{self.prog}: error", message)
        raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    commands = registered()
    if not commands:
        print(
            f"cardarena: no commands are registered (entry-point group {GROUP});"
            " install cardarena, e.g. bash scripts/bootstrap.sh",
            file=sys.stderr,
        )
        return 2
    # The command comes first: the top level has no option but --help and --version.
    chosen = arguments[0] if arguments and arguments[0] in commands else None
    args = build_parser(commands, chosen).parse_args(arguments)
    run: Command = args.run
    try:
        code = run(args)
        sys.stdout.flush()  # now, so that a full disk is this command's error, not the exit's
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `cardarena games --json | head`: the reader has what it wanted
        quiet_stdout()
        return 0
    except OSError as error:  # `cardarena games > /dev/full`; a file that cannot be written
        return failed_output(f"cardarena {chosen}", error)
    return code


WRITING = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS})
"""What goes wrong when an output is written (to a full disk, ``> /dev/full``)."""


def failed_output(command: str, error: OSError) -> int:
    """An error of the system (a full disk, a file that cannot be written) in one line, exit
    1. Whatever the standard output still buffers, if it is what failed, is dropped, so that
    the exit does not fail on it again."""
    try:
        sys.stdout.flush()
    except OSError:
        quiet_stdout()
    reason = error.strerror or str(error)
    if error.filename is not None:
        what = f"{error.filename}: {reason}"
    elif error.errno in WRITING:
        what = f"cannot write the output: {reason}"
    else:
        what = str(error)
    terminal = import_module("cardarena.clients.tournament.terminal")
    terminal.print_error(command, what)
    return 1


def quiet_stdout() -> None:
    """After the reader of stdout went away: send what is still buffered nowhere, so that
    Python's own flush at exit does not complain about the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def version() -> str:
    """The installed distribution's version."""
    try:
        return metadata.version("cardarena")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def summary(entry: EntryPoint) -> str:
    """The command's one-line summary, read from its module's source without running it;
    a leading ``cardarena NAME``: is dropped from a module's docstring."""
    source = _source_of(entry.module)
    if source is None:
        return ""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    function = next(
        (n for n in tree.body if isinstance(n, functions) and n.name == entry.attr), None
    )
    docstring = ast.get_docstring(function) if function is not None else None
    docstring = docstring or ast.get_docstring(tree) or ""
    line = docstring.strip().partition("\n")[0].strip()
    return line.removeprefix(f"``cardarena {entry.name}``:").strip()


def _source_of(module: str) -> str | None:
    """The source of ``module``, found as the import system finds it, but without importing it
    or any package above it (the import of a package runs its ``__init__``)."""
    spec: ModuleSpec | None = None
    search: list[str] | None = None
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        loaded = sys.modules.get(name)
        spec = loaded.__spec__ if loaded is not None else _find_spec(name, search)
        if spec is None:
            return None
        search = list(spec.submodule_search_locations or [])
    if spec is None or not spec.has_location or spec.origin is None:
        return None
    try:
        return Path(spec.origin).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _find_spec(name: str, search: list[str] | None) -> ModuleSpec | None:
    for finder in sys.meta_path:
        spec = finder.find_spec(name, search)
        if spec is not None:
            return spec
    return None
