"""``cardarena serve``: flags, with environment variables as defaults."""

from __future__ import annotations

import argparse
import asyncio
import errno
import os
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .api.access import Access
from .api.anonymous import PER_ADDRESS, TOTAL
from .api.limits import Rate, TrustedProxies
from .api.reads import READ_SHARE
from .api.requests import SECRET, SECRET_RULE
from .api.streams import WATCH_STREAMS
from .app import MAX_PENDING_CALLS, ServeConfig, run, server_signer, tune_collector
from .hosting.clock import RECONNECT_GRACE_S
from .hosting.signing import SigningKeyError
from .house import IDLE_SECONDS, MAX_SEATS, MAX_WORKERS
from .store import StoreError, open_store

N = TypeVar("N", int, float)

LEVELS = ("debug", "info", "warning", "error")


def port_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not -1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535 (-1: no metrics), got {value}")
    return value


def listen_address(text: str) -> str:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    if ":" in host and not (host.startswith("[") and host.endswith("]")):
        raise argparse.ArgumentTypeError(
            f"an IPv6 address goes in brackets, [ADDRESS]:PORT, got {text!r}"
        )
    return text


def unbindable(flag: str, host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on now, naming ``flag``, or ``None``: checked
    before the server starts anything, so that a port in use (a second server on this
    machine) is one line naming it rather than a failure half-way through starting."""
    if port == 0:
        return None  # any free port
    where = f"could not listen on {host}:{port} ({flag})"
    try:
        found = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except (socket.gaierror, UnicodeError) as error:
        return f"{where}: {getattr(error, 'strerror', None) or error}"
    failures: list[str] = []
    for family, kind, proto, _, address in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as error:
                if error.errno == errno.EADDRINUSE:
                    return f"{where}: port {port} is in use (another server?)"
                failures.append(error.strerror or str(error))
    # One of a name's addresses is enough (localhost without IPv6, say), as for the server.
    return f"{where}: {failures[0]}" if len(failures) == len(found) else None


def unbindable_ports(config: ServeConfig) -> str | None:
    """The first address of ``config`` that cannot be listened on (see :func:`unbindable`)."""
    wanted: list[tuple[str, str]] = [(f"--listen {config.listen}", config.listen)]
    if config.metrics_port >= 0:
        wanted.append(
            (
                f"--metrics-port {config.metrics_port}; -1 for none, 0 for any",
                f"{config.metrics_host}:{config.metrics_port}",
            )
        )
    if config.web is not None:
        wanted.append((f"--web {config.web}", config.web))
    for flag, address in wanted:
        host, _, port = address.rpartition(":")
        why = unbindable(flag, host, int(port))
        if why is not None:
            return why
    return None


def ranged(cast: Callable[[str], N], low: N, high: N, unit: str, what: str) -> Callable[[str], N]:
    """A flag's type: a number of ``unit`` (read by ``cast``; ``""``: a plain number) from
    ``low`` to ``high``, refused in ``what``'s words."""

    def parse(text: str) -> N:
        try:
            value = cast(text)
        except ValueError:
            number = "a whole number" if cast is int else "a number"
            of_unit = f" of {unit}" if unit else ""
            raise argparse.ArgumentTypeError(f"expected {number}{of_unit}, got {text!r}") from None
        if not low <= value <= high:
            shown = " ".join(filter(None, ("..".join(map(_plain, (low, high))), unit)))
            raise argparse.ArgumentTypeError(f"{what} {shown}, got {_plain(value)}")
        return value

    return parse


def _plain(number: float) -> str:
    """A number as a person writes it: 2592000, 0.5 (not 2.592e+06)."""
    return str(int(number)) if float(number).is_integer() else f"{number:g}"


lease_seconds = ranged(float, 0.5, 300.0, "seconds", "a lease lasts")
expiry_seconds = ranged(float, 0.0, 30 * 86400.0, "seconds", "expiry (0: never) is")
pending_calls = ranged(int, 1, 1_000_000, "calls", "the calls that may wait are")


def trusted_proxies(text: str) -> TrustedProxies:
    try:
        return TrustedProxies.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


stream_count = ranged(int, 1, 1_000_000, "streams", "the streams an address may hold are")
grace_seconds = ranged(float, 0.0, 3600.0, "seconds", "the reconnection grace is")
read_share = ranged(float, 0.01, 1.0, "", "the anonymous reads' share is")
house_seats = ranged(int, 0, MAX_SEATS, "seats", "the house seats played at once are")
house_workers = ranged(int, 1, MAX_WORKERS, "processes", "the house bots' workers are")
house_idle = ranged(float, 1.0, 86400.0, "seconds", "a practice match is left unattended")


match_count = ranged(int, 1, 10_000_000, "matches", "a budget of anonymous matches is")


def anonymous_matches(text: str) -> tuple[int, int]:
    """``PER_ADDRESS,TOTAL``: each a whole number of matches, the first no more than the second."""
    per_address, comma, total = text.partition(",")
    if not comma:
        raise argparse.ArgumentTypeError(f"expected PER_ADDRESS,TOTAL, got {text!r}")
    budget = match_count(per_address.strip()), match_count(total.strip())
    if budget[0] > budget[1]:
        raise argparse.ArgumentTypeError(
            f"one address may not hold more than all together, got {text!r}"
        )
    return budget


def admin_token(text: str) -> str:
    if not SECRET.fullmatch(text):
        raise argparse.ArgumentTypeError(f"an operator token is {SECRET_RULE}")
    return text


def rate(text: str) -> Rate:
    try:
        return Rate.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def store_url(text: str) -> str:
    """Checked here so a typo is a usage error, not a crash at start-up."""
    try:
        open_store(text, data_dir=Path())
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


@dataclass(frozen=True)
class Flag:
    """A ``serve`` setting whose default is read from ``CARDARENA_<NAME>`` (the flag's name in
    capitals, ``_`` for ``-``); ``default`` ``None``: unset unless the variable is (empty counts
    as unset). Its help names the variable, in its own words."""

    name: str
    field: str
    """The :class:`ServeConfig` field it sets; ``access.NAME``: a field of its :class:`Access`."""
    type: Callable[[str], Any]
    default: str | None
    help: str
    choices: Sequence[str] | None = None
    metavar: str | None = None

    @property
    def dest(self) -> str:
        """Where argparse keeps its value."""
        return self.name.removeprefix("--").replace("-", "_")

    @property
    def variable(self) -> str:
        return "CARDARENA_" + self.dest.upper()

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        default = os.environ.get(self.variable, self.default)
        if self.default is None:
            default = default or None  # an empty variable counts as unset
        parser.add_argument(
            self.name,
            type=self.type,
            default=default,
            help=self.help,
            choices=self.choices,
            metavar=self.metavar,
        )


FLAGS = (
    Flag(
        "--listen",
        "listen",
        listen_address,
        "127.0.0.1:50051",
        "gRPC address HOST:PORT, port 0 for any (env CARDARENA_LISTEN; default 127.0.0.1:50051)",
    ),
    Flag(
        "--data-dir",
        "data_dir",
        Path,
        "data",
        "where the SQLite event store lives (env CARDARENA_DATA_DIR; default ./data)",
    ),
    Flag(
        "--store",
        "store",
        store_url,
        None,
        "event store URL: postgresql://user@host:5432/db[?schema=NAME] runs this process as"
        " one of several replicas sharing that database (env CARDARENA_STORE; default SQLite"
        " in --data-dir)",
    ),
    Flag(
        "--advertise",
        "advertise",
        listen_address,
        None,
        "HOST:PORT other replicas use to forward actions to this one (env"
        " CARDARENA_ADVERTISE; default the --listen host and bound port)",
    ),
    Flag(
        "--lease-seconds",
        "lease_seconds",
        lease_seconds,
        "5",
        "how long a replica owns a match without renewing; a dead replica's matches move"
        " after at most this long (env CARDARENA_LEASE_SECONDS; default 5)",
    ),
    Flag(
        "--metrics-port",
        "metrics_port",
        port_number,
        "9464",
        "Prometheus metrics HTTP port on 127.0.0.1, 0 for any, -1 for none (env CARDARENA_METRICS_PORT; default 9464)",
    ),
    Flag(
        "--metrics-host",
        "metrics_host",
        str,
        "127.0.0.1",
        "address the metrics endpoint binds; 0.0.0.0 in a container (env CARDARENA_METRICS_HOST; default 127.0.0.1)",
    ),
    Flag(
        "--web",
        "web",
        listen_address,
        None,
        "serve the web app and a gRPC-Web gateway on HOST:PORT (env CARDARENA_WEB; default off)",
    ),
    Flag(
        "--admin-token",
        "access.operator_token",
        admin_token,
        None,
        "the operator token: when set, creating and cancelling matches need it as"
        " 'authorization: Bearer <token>'; prefer the env CARDARENA_ADMIN_TOKEN, which other"
        " users of the machine cannot read in the process list (default: none, an open"
        " server for local use)",
    ),
    Flag(
        "--create-rate",
        "access.create_rate",
        rate,
        "50/s,500",
        "CreateMatch calls per client address, CALLS/s[,BURST], 0 for no limit; the"
        " operator is never limited (env CARDARENA_CREATE_RATE; default 50/s,500)",
    ),
    Flag(
        "--join-rate",
        "access.join_rate",
        rate,
        "200/s,2000",
        "JoinMatch calls per client address, as --create-rate (env CARDARENA_JOIN_RATE;"
        " default 200/s,2000)",
    ),
    Flag(
        "--anonymous-matches",
        "access.anonymous_matches",
        anonymous_matches,
        f"{PER_ADDRESS},{TOTAL}",
        "PER_ADDRESS,TOTAL: how many matches created without the operator token may be"
        " unended at once, from one client address and from all together (an address gets at"
        " most its fair share of the total); the operator's, tournaments' and ladders' never"
        f" count (env CARDARENA_ANONYMOUS_MATCHES; default {PER_ADDRESS},{TOTAL})",
    ),
    Flag(
        "--read-share",
        "access.read_share",
        read_share,
        _plain(READ_SHARE),
        "the share of the server's time that anonymous reads (GetMatch, ListMatches,"
        " GetMatchLog, and tournaments and ladders read without the operator token) may take"
        " together: one runs at a time, each followed by a pause in proportion to its cost,"
        " waiting addresses served in turn; 1: no pause (env CARDARENA_READ_SHARE; default"
        f" {_plain(READ_SHARE)})",
    ),
    Flag(
        "--waiting-expiry",
        "waiting_expiry_seconds",
        expiry_seconds,
        "3600",
        "cancel a match whose seats are still free this many seconds after its creation,"
        " 0 for never (env CARDARENA_WAITING_EXPIRY; default 3600)",
    ),
    Flag(
        "--idle-expiry",
        "idle_expiry_seconds",
        expiry_seconds,
        "3600",
        "cancel a running match without a clock (no time control) that has gone this many"
        " seconds without a write (a move, a join, a fault), 0 for never; a timed match"
        " moves on by its clock (env CARDARENA_IDLE_EXPIRY; default 3600)",
    ),
    Flag(
        "--reconnect-grace",
        "reconnect_grace_seconds",
        grace_seconds,
        _plain(RECONNECT_GRACE_S),
        "after a restart with matches or tournaments under way, how long seats not yet back"
        " are not timed: each of their turns lasts what is left of it plus a full move, and a"
        " seat back gets a full move from then (env CARDARENA_RECONNECT_GRACE; default"
        f" {_plain(RECONNECT_GRACE_S)}; 0: the plain move clock at once)",
    ),
    Flag(
        "--max-pending-calls",
        "max_pending_calls",
        pending_calls,
        str(MAX_PENDING_CALLS),
        "calls the server holds while they wait for its event loop; beyond it gRPC"
        " refuses them at once, CANCELLED (env CARDARENA_MAX_PENDING_CALLS; default"
        f" {MAX_PENDING_CALLS}: a unary call for every seat of 5,000 four-seat matches)",
    ),
    Flag(
        "--watch-streams",
        "watch_streams",
        stream_count,
        str(WATCH_STREAMS),
        "spectator streams (WatchMatch, WatchTournament) one client address may hold open at"
        " once; beyond it RESOURCE_EXHAUSTED (env CARDARENA_WATCH_STREAMS; default"
        f" {WATCH_STREAMS}; through --web, each browser's address counts)",
    ),
    Flag(
        "--trusted-proxies",
        "trusted_proxies",
        trusted_proxies,
        "",
        "addresses (comma-separated, e.g. 10.1.2.3,10.1.2.4; or networks holding only"
        " proxies) of the proxies in front of the server or of --web, whose X-Forwarded-For"
        " names the client that rate limits and stream caps count; anyone else's is ignored"
        " (env CARDARENA_TRUSTED_PROXIES; default none: each call counts against the address"
        " it came from)",
        metavar="CIDR[,CIDR...]",
    ),
    Flag(
        "--house-bots",
        "house_bots",
        house_seats,
        "0",
        "seat the server's own reference bots (random, rules, mc) where CreateMatch asks for"
        " house seats, and play them in worker processes to the match's end, with or without"
        f" anyone watching: at most this many seats at once, 0..{MAX_SEATS} (env"
        " CARDARENA_HOUSE_BOTS; default 0: none, and house seats are refused)",
        metavar="N",
    ),
    Flag(
        "--house-workers",
        "house_workers",
        house_workers,
        "1",
        "the worker processes that play the house bots, each a share of --house-bots seats,"
        f" 1..{MAX_WORKERS} (env CARDARENA_HOUSE_WORKERS; default 1)",
        metavar="W",
    ),
    Flag(
        "--house-idle",
        "house_idle_seconds",
        house_idle,
        _plain(IDLE_SECONDS),
        "cancel a match with house seats once none of its other seats has had a stream open"
        " for this many seconds (env CARDARENA_HOUSE_IDLE; default"
        f" {_plain(IDLE_SECONDS)})",
        metavar="S",
    ),
    Flag(
        "--signing-key",
        "signing_key",
        Path,
        None,
        "the Ed25519 private key (PEM, mode 0600) that signs checkpoints and results"
        " (env CARDARENA_SIGNING_KEY; default signing-key.pem in --data-dir, made on first"
        " start); replicas may share one or each have their own",
        metavar="FILE",
    ),
    Flag(
        "--log-level",
        "log_level",
        str,
        "info",
        "(env CARDARENA_LOG_LEVEL; default info)",
        choices=LEVELS,
    ),
)


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """run the gRPC match server with its SQLite event store"""
    for flag in FLAGS:
        flag.add_to(parser)
    parser.add_argument(
        "--print-public-key",
        action="store_true",
        help="print the signing key's public half (ed25519:HEX, what audit --key takes) and exit",
    )
    return serve


def serve_config(args: argparse.Namespace) -> ServeConfig:
    """What the flags ask for: each flag sets the one field it names (a test holds that every
    field a flag may set has its flag), so a setting is declared once, in :data:`FLAGS`."""
    settings: dict[str, Any] = {}
    access: dict[str, Any] = {}
    for flag in FLAGS:
        section, _, name = flag.field.rpartition(".")
        (access if section == "access" else settings)[name] = getattr(args, flag.dest)
    return ServeConfig(access=Access(**access), **settings)


def serve(args: argparse.Namespace) -> int:
    config = serve_config(args)
    if args.print_public_key:
        try:
            print(server_signer(config).public_text)
        except SigningKeyError as error:
            print(f"cardarena serve: {error}", file=sys.stderr)
            return 2
        return 0
    unusable = unbindable_ports(config)
    if unusable is not None:
        print(f"cardarena serve: {unusable}", file=sys.stderr)
        return 1
    tune_collector()
    try:
        asyncio.run(run(config))
    except SigningKeyError as error:  # a bad --signing-key is a usage error, no key a failure
        print(f"cardarena serve: {error}", file=sys.stderr)
        return 2 if args.signing_key is not None else 1
    except (StoreError, OSError) as error:  # cannot start: say why in one line, no traceback
        print(f"cardarena serve: {error}", file=sys.stderr)
        return 1
    return 0
