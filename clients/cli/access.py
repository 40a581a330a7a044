"""Which server, and with which secret: ``--server``, the operator token and a creator secret.

Why a module: every tournament action (the launcher, ``create``, ``cancel``, ``status`` …)
takes the same server flag and the same operator token, and a secret must be read, and
refused, in the same careful words everywhere. A secret is never a value this prints: an
error names the file or the flag, never its content; the token is best given in a file
(``--admin-token-file``) or the environment (``$CARDARENA_ADMIN_TOKEN``), since a flag
shows in the process list.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

from .argtypes import server_address

TOKEN_ENV = "CARDARENA_ADMIN_TOKEN"
SERVER_ENV = "CARDARENA_SERVER"
DEFAULT_SERVER = "127.0.0.1:50051"
MAX_SECRET = 128
"""The longest secret the server takes (32 to 128 printable ASCII characters)."""


def add_server(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        type=server_address,
        default=os.environ.get(SERVER_ENV, DEFAULT_SERVER),
        metavar="HOST:PORT",
        help="the server, or several replicas' comma-separated (calls are spread"
        f" round robin; default: ${SERVER_ENV} or {DEFAULT_SERVER})",
    )


def add_operator(parser: argparse.ArgumentParser) -> None:
    """``--admin-token-file`` and ``--admin-token``; with neither, ``$CARDARENA_ADMIN_TOKEN``."""
    parser.add_argument(
        "--admin-token-file",
        type=secret_file,
        metavar="FILE",
        help=f"a file holding the server's operator token (default: ${TOKEN_ENV})",
    )
    parser.add_argument(
        "--admin-token",
        metavar="TOKEN",
        help=f"the server's operator token (prefer --admin-token-file or ${TOKEN_ENV}: a flag"
        " shows in the process list)",
    )


def operator_token(args: argparse.Namespace) -> str | None:
    """The operator token: ``--admin-token``, else ``--admin-token-file``'s, else the
    environment's; ``None`` for an open server. Both flags at once: ``ValueError``."""
    given = getattr(args, "admin_token", None)
    from_file = getattr(args, "admin_token_file", None)
    if given and from_file:
        raise ValueError("give the operator token once: --admin-token-file or --admin-token")
    return given or from_file or os.environ.get(TOKEN_ENV) or None


def secret_file(text: str) -> str:
    """A flag's type: the secret a file holds (its one line, stripped), read now so that a
    missing file is refused before any call. Never part of a message."""
    path = Path(text)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SECRET * 4 + 1)
    except OSError as error:
        raise argparse.ArgumentTypeError(f"cannot read {text}: {error.strerror or error}") from None
    try:
        secret = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise argparse.ArgumentTypeError(f"{text} does not hold a secret: not ASCII") from None
    if not secret:
        raise argparse.ArgumentTypeError(f"{text} is empty: it should hold the secret")
    if len(secret) > MAX_SECRET or any(not 0x21 <= ord(c) <= 0x7E for c in secret):
        raise argparse.ArgumentTypeError(
            f"{text} does not hold a secret: a secret is one line of at most {MAX_SECRET}"
            " printable ASCII characters, no spaces"
        )
    return secret


def write_secret(path: Path, secret: str) -> None:
    """Write ``secret`` to a new file only its owner may read (an existing one is refused, so
    that no secret is overwritten by mistake; a file left half written is removed)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            handle.write(secret + "\n")
    except OSError:
        with contextlib.suppress(OSError):
            path.unlink()
        raise
