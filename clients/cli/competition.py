"""``cardarena tournament ACTION``: a competition run from the command line, for entrants who
play from machines of their own.

Why actions beside the launcher: ``cardarena tournament --bot …`` plays this machine's bots
and keeps the keys it draws; an organiser inviting others needs the keys out, as
invitations, and to look after a tournament by its id later, from any shell. So:

* ``create``: a tournament for named entrants (``--entrant``, repeated, or ``entrant = [...]``
  in a ``--config`` file), every setting of the launcher (:mod:`.settings`), and one
  invitation per entrant (:mod:`cardarena.clients.tournament.invitations`) to a folder or the
  terminal; the tournament's id on standard output.
* ``status``: where it stands now; ``results``: the standings, and the results file
  ``cardarena audit --results`` takes; ``watch``: follow it to its end (as ``--attach``);
  ``cancel``: end it (as ``--cancel``), as the operator or with the creator secret.

An action's flags go after it; the launcher's flags before an action are refused rather than
silently dropped (argparse would let the action's defaults win over them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc

from cardarena.v1 import tournament_pb2 as tpb

from ..client import ArenaClient, new_secret
from ..tournament.hosted_report import hosted_json, print_hosted
from ..tournament.invitations import (
    Invitation,
    check_entrant_name,
    existing,
    file_stems,
    invitations,
    write_invitations,
)
from ..tournament.terminal import print_error
from .access import add_operator, add_server, operator_token, secret_file, write_secret
from .argtypes import output_dir, output_file, server_address
from .configfile import FILE_VALUES, LoadConfig, merged
from .hosted import (
    EXIT_FAILED_MATCHES,
    EXIT_OK,
    refusals,
    run_attached,
    run_cancel,
    write_results,
)
from .settings import add_settings, check_settings, request_of

Command = Callable[[argparse.Namespace], int]
MIN_ENTRANTS, MAX_ENTRANTS = 2, 64
CREATE_ENTRY_MS = 900_000
"""How long ``create``'s first match waits for the entrants by default: invitations go out
by hand, so a minute (the server's default) is too short; it starts as soon as all entered."""
MAX_REASON = 200
MAX_ID = 200
TERMINAL = "-"


class ActionsAfterFlags(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The actions' sub-parser that refuses the launcher's flags given before an action:
    argparse would parse them, then let the action's own defaults overwrite them."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | list[Any] | Any,
        option_string: str | None = None,
    ) -> None:
        action = values[0] if isinstance(values, list) and values else str(values)
        early = [
            given.option_strings[0]
            for given in parser._actions
            if given.option_strings
            and given.dest not in ("help", "version")
            and getattr(namespace, given.dest, given.default) != given.default
        ]
        if getattr(namespace, FILE_VALUES, None):
            early.append("--config")
        if early:
            parser.error(
                f"{', '.join(early)} before {action!r}: an action's flags go after it"
                f" (cardarena tournament {action} … {early[0]} …)"
            )
        super().__call__(parser, namespace, values, option_string)


def add_actions(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """``create``, ``status``, ``results``, ``watch`` and ``cancel`` under ``parser``, each
    setting ``args.act``, the function that runs it; their parsers by name."""
    actions = parser.add_subparsers(
        dest="action",
        metavar="ACTION",
        action=ActionsAfterFlags,
        title="actions (without one: launch the --bot bots as a tournament's entrants)",
    )
    made = {
        "create": actions.add_parser(
            "create",
            help="create a tournament for named entrants and write their invitations",
            description="Create a tournament the server hosts for entrants who connect from"
            " wherever they run (cardarena bot connect), and write one invitation per entrant:"
            " the server, the tournament, its key and the command to run. Prints the"
            " tournament's id.",
        ),
        "status": actions.add_parser(
            "status",
            help="where a tournament stands: entry, matches, standings so far",
            description="Where a hosted tournament stands now: its entry, its matches and its"
            " standings over the duplicate groups that have ended.",
        ),
        "results": actions.add_parser(
            "results",
            help="a tournament's standings, and its results file for cardarena audit",
            description="A hosted tournament's standings, crosstable and stop rule; --json"
            " writes the results file cardarena audit --results takes (signed by the server"
            " once the tournament ended).",
        ),
        "watch": actions.add_parser(
            "watch",
            help="follow a tournament to its end, then its results (as --attach)",
            description="Follow a hosted tournament to its end with a progress line, then"
            " print its standings and write --json and --csv (as --attach ID). Ctrl-C stops"
            " watching; the tournament goes on.",
        ),
        "cancel": actions.add_parser(
            "cancel",
            help="end a tournament (as --cancel): its running matches are cancelled",
            description="End a hosted tournament: it starts no more matches and every running"
            " one is cancelled, logged. Needs the operator token or the creator secret.",
        ),
    }
    _create(made["create"])
    _status(made["status"])
    _results(made["results"])
    _watch(made["watch"])
    _cancel(made["cancel"])
    return made


def _tournament_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tournament_id", metavar="ID", type=tournament_id, help="its id")


def tournament_id(text: str) -> str:
    if not text or len(text) > MAX_ID or not text.isprintable() or " " in text:
        raise argparse.ArgumentTypeError(f"not a tournament id: {text!r}")
    return text


def _create(parser: argparse.ArgumentParser) -> None:
    add_server(parser)
    add_operator(parser)
    parser.add_argument(
        "--config",
        action=LoadConfig,
        metavar="FILE.toml",
        help="take the flags from a TOML file (keys are the flags: game, entrant = [...],"
        " [options], deals, …); flags given here win",
    )
    parser.add_argument(
        "--entrant",
        action="append",
        type=entrant_name,
        metavar="NAME",
        help=f"an entrant, by the name the standings give it ({MIN_ENTRANTS} to {MAX_ENTRANTS};"
        " repeat)",
    )
    add_settings(parser, "entrant")
    parser.set_defaults(entry_ms=CREATE_ENTRY_MS)
    parser.add_argument(
        "--invitations",
        type=invitations_target,
        metavar="DIR",
        help="where the invitations go: a folder (NAME.toml and NAME.key per entrant, mode"
        " 0600), or - for the terminal (standard output)",
    )
    parser.add_argument(
        "--public-address",
        type=server_address,
        metavar="HOST:PORT",
        help="the server's address as the entrants reach it, for the invitations (default:"
        " --server)",
    )
    parser.add_argument(
        "--creator-secret-file",
        type=Path,
        metavar="FILE",
        help="keep a secret that may cancel the tournament in this new file (mode 0600): on a"
        " server without an operator token, the only way to cancel it",
    )

    def run(args: argparse.Namespace) -> int:
        args = merged(parser, args)
        try:
            args.operator_token = operator_token(args)
            names = _entrants(args)
            check_settings(args, names, "entrant")
        except ValueError as error:
            parser.error(str(error))
        if args.invitations is None:
            parser.error(
                "say where the invitations go: --invitations DIR (a file per entrant), or"
                " --invitations - (the terminal)"
            )
        folder = None if args.invitations == TERMINAL else Path(args.invitations)
        if folder is not None and (taken := existing(folder, file_stems(names))):
            parser.error(f"{taken[0]} exists: an invitation is never written over a file")
        secret_path: Path | None = args.creator_secret_file
        if secret_path is not None:
            try:
                output_file(str(secret_path))
            except argparse.ArgumentTypeError as error:
                parser.error(f"--creator-secret-file: {error}")
            if secret_path.exists():
                parser.error(f"{secret_path} exists: a secret is never written over a file")
        return refusals(lambda: asyncio.run(_created(args, names, folder)), args)

    parser.set_defaults(act=run)


def _entrants(args: argparse.Namespace) -> list[str]:
    names: list[str] = list(args.entrant or [])
    if not args.game or len(names) < MIN_ENTRANTS:
        raise ValueError(
            f"name the game and at least {MIN_ENTRANTS} entrants: --game and --entrant NAME"
            " (repeat), or a --config file"
        )
    if len(names) > MAX_ENTRANTS:
        raise ValueError(f"at most {MAX_ENTRANTS} entrants, got {len(names)}")
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"an entrant is named twice: {twice[0]!r}")
    return names


def entrant_name(text: str) -> str:
    try:
        return check_entrant_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def invitations_target(text: str) -> str:
    """``-`` (the terminal) or a folder that can be made or written into, checked now."""
    return text if text == TERMINAL else str(output_dir(text))


async def _created(args: argparse.Namespace, names: list[str], folder: Path | None) -> int:
    keys = [new_secret() for _ in names]
    # Always a creator secret, kept only when asked: with it this command can cancel what it
    # created if the invitations cannot be written, on an open server too.
    creator = new_secret()
    request = request_of(args, "entrant")
    request.entrants.extend(
        tpb.EntrantSpec(name=n, key=k) for n, k in zip(names, keys, strict=True)
    )
    request.creator_secret = creator
    request.request_id = secrets.token_hex(16)  # the client's retries find it, not a second one
    async with ArenaClient(args.server, operator_token=args.operator_token) as client:
        await client.connected()
        info = (await client.tournaments.create_from(request)).tournament
        sent = invitations(info, keys, args.public_address or args.server)
        kept: Path | None = None
        try:
            if args.creator_secret_file is not None:
                write_secret(args.creator_secret_file, creator)
                kept = args.creator_secret_file
            written = write_invitations(folder, sent) if folder is not None else []
        except OSError as error:
            if kept is not None:
                kept.unlink(missing_ok=True)  # the secret of a tournament that will not run
            failed = f"{error.filename or folder}: {error.strerror or error}"
            try:
                await client.tournaments.cancel(
                    info.tournament_id,
                    reason="its invitations could not be written",
                    secret=creator,
                )
            except grpc.aio.AioRpcError as refused:
                failed += (
                    f"; tournament {info.tournament_id} could not be cancelled"
                    f" ({refused.code().name}: {refused.details()}): cancel it yourself"
                )
            else:
                failed += f"; tournament {info.tournament_id} was cancelled"
            print_error("cardarena tournament create", failed)
            return 1
    print(info.tournament_id)
    if folder is None:
        for invitation in sent:
            print(f"\n# ---- {invitation.entrant} ----")
            print(invitation.toml(key_file_written=False), end="")
    _tell_created(info, args, written, sent)
    return EXIT_OK


def _tell_created(
    info: tpb.TournamentInfo, args: argparse.Namespace, written: list[Path], sent: list[Invitation]
) -> None:
    closes = datetime.fromtimestamp((info.created_unix_ms + info.entry_ms) / 1000, UTC)
    where = (
        f"invitations (secret: each holds its entrant's key) in {written[0].parent}: "
        + ", ".join(f"{path.name} and {i.key_file}" for path, i in zip(written, sent, strict=True))
        if written
        else "invitations above (secret: each holds its entrant's key)"
    )
    say = f"cardarena tournament {{}} {info.tournament_id} --server {args.server}"
    # Cancelling needs a credential: the one this command was given, as a file (a token from
    # the environment works as it is; a token given as a flag is not repeated on the screen).
    if args.creator_secret_file is not None:
        credential = f" --creator-secret-file {args.creator_secret_file}"
    elif args.admin_token_file is not None:
        credential = f" --admin-token-file {args.admin_token_file}"
    else:
        credential = ""
    lines = [
        f"tournament {info.tournament_id} created on {args.server}: {info.game},"
        f" {info.players} players, {len(info.entrants)} entrants, {_count(info.deals, 'deal')},"
        f" {info.planned} matches planned",
        f"the first match starts once every entrant has entered, or at"
        f" {closes.strftime('%H:%M:%S')} UTC at the latest",
        where,
        f"follow it: {say.format('watch')}; now: {say.format('status')};"
        f" end it: {say.format('cancel')}{credential}",
    ]
    for line in lines:
        print(line, file=sys.stderr)


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}{'' if number == 1 else 's'}"


def _status(parser: argparse.ArgumentParser) -> None:
    add_server(parser)
    _tournament_id(parser)
    parser.add_argument(
        "--json", action="store_true", help="print it as JSON (as results --json, no matches)"
    )

    def run(args: argparse.Namespace) -> int:
        async def status() -> int:
            async with ArenaClient(args.server) as client:
                await client.connected()
                info = await client.tournaments.get(args.tournament_id)
            if args.json:
                print(json.dumps(hosted_json(info, server=args.server), indent=2))
            else:
                print_status(info, sys.stdout.write)
                print_hosted(info, sys.stdout)
            return EXIT_OK

        return refusals(lambda: asyncio.run(status()), args)

    parser.set_defaults(act=run)


def print_status(info: tpb.TournamentInfo, write: Callable[[str], Any]) -> None:
    """What the standings do not say: the name, the entry, how far the plan has got."""
    ended = info.status == tpb.TOURNAMENT_STATUS_ENDED
    title = f" ({info.name})" if info.name else ""
    write(
        f"tournament {info.tournament_id}{title}: {'ended' if ended else 'running'};"
        f" entrants {', '.join(info.entrants)}\n"
    )
    if info.entry_closed:
        absent = [n for n, c in zip(info.entrants, info.contributions, strict=False) if not c]
        write(
            "entry closed: "
            + (f"no entropy from {', '.join(absent)}" if absent else "every entrant entered")
            + "\n"
        )
    else:
        closes = datetime.fromtimestamp((info.created_unix_ms + info.entry_ms) / 1000, UTC)
        write(
            "entry open: the first match starts once every entrant has entered, or at"
            f" {closes.strftime('%Y-%m-%d %H:%M:%S')} UTC\n"
        )
    write(
        f"matches: {info.planned} planned, {info.started} started, {info.finished} finished,"
        f" {info.failed} cancelled or failed\n"
    )


def _results(parser: argparse.ArgumentParser) -> None:
    add_server(parser)
    _tournament_id(parser)
    _outputs(parser)

    def run(args: argparse.Namespace) -> int:
        async def results() -> int:
            async with ArenaClient(args.server) as client:
                await client.connected()
                info = await write_results(client, args, args.tournament_id)
            print_hosted(info, sys.stdout)
            if info.status != tpb.TOURNAMENT_STATUS_ENDED:
                print(
                    f"tournament {info.tournament_id} still runs: these are the standings so"
                    " far, not signed (cardarena tournament watch waits for the end)",
                    file=sys.stderr,
                )
            return EXIT_FAILED_MATCHES if info.failed else EXIT_OK

        return refusals(lambda: asyncio.run(results()), args)

    parser.set_defaults(act=run)


def _outputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        type=output_file,
        metavar="OUT",
        help="write every result as JSON: the file cardarena audit --results takes",
    )
    parser.add_argument("--csv", type=output_file, metavar="OUT", help="write the standings as CSV")


def _watch(parser: argparse.ArgumentParser) -> None:
    add_server(parser)
    _tournament_id(parser)
    _outputs(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")

    def run(args: argparse.Namespace) -> int:
        args.operator_token = None
        return run_attached(args, args.tournament_id)

    parser.set_defaults(act=run)


def _cancel(parser: argparse.ArgumentParser) -> None:
    add_server(parser)
    add_operator(parser)
    _tournament_id(parser)
    parser.add_argument(
        "--creator-secret-file",
        type=secret_file,
        metavar="FILE",
        help="cancel with the secret create kept in this file, instead of the operator token",
    )
    parser.add_argument(
        "--reason", type=reason, default="", help="why, recorded in every cancelled match"
    )

    def run(args: argparse.Namespace) -> int:
        try:
            args.operator_token = operator_token(args)
        except ValueError as error:
            parser.error(str(error))
        return run_cancel(
            args, args.tournament_id, reason=args.reason, secret=args.creator_secret_file
        )

    parser.set_defaults(act=run)


def reason(text: str) -> str:
    if len(text) > MAX_REASON or not text.isprintable():
        raise argparse.ArgumentTypeError(f"a reason is at most {MAX_REASON} printable characters")
    return text
