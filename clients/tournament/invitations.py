"""Invitations to a hosted tournament: for each entrant, what it needs to play from its own
machine (the server, the tournament, its key) and the command that does it.

Why files of their own, made unreadable to others: an invitation holds the entrant's key, and
whoever holds the key plays as that entrant. Each entrant gets two files, ``NAME.toml`` (the
invitation, readable by people and by ``tomllib``) and ``NAME.key`` (the key alone, which
``cardarena bot connect --key-file`` reads, so the key is never a flag in the process list
nor a line in a shell's history). Both are created new (never over an existing file) with
mode 0600, in a folder made with 0700. Nothing here logs or prints a key: ``repr`` hides it,
and only :meth:`Invitation.toml` writes it, for the file or the terminal it was asked for.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cardarena.v1 import tournament_pb2 as tpb

MAX_ENTRANT_NAME = 64
UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
BOT = "BOT"
"""Where the entrant's own bot goes in the command: only the entrant knows it."""


def check_entrant_name(name: str) -> str:
    """An entrant's name as the server takes it: 1 to 64 printable characters (spaces
    allowed, not only spaces); ``ValueError`` otherwise."""
    if not 1 <= len(name) <= MAX_ENTRANT_NAME or not name.isprintable() or not name.strip():
        raise ValueError(
            f"an entrant's name is 1 to {MAX_ENTRANT_NAME} printable characters, not only"
            f" spaces, got {name!r}"
        )
    return name


@dataclass(frozen=True)
class Invitation:
    """One entrant's invitation. ``stem`` names its files: ``STEM.toml`` and ``STEM.key``."""

    server: str
    tournament_id: str
    entrant: str
    key: str
    stem: str
    game: str
    players: int
    deals: int
    move_ms: int
    entry_closes_unix_ms: int

    def __repr__(self) -> str:
        return f"Invitation(entrant={self.entrant!r}, tournament_id={self.tournament_id!r}, key=…)"

    @property
    def key_file(self) -> str:
        return f"{self.stem}.key"

    def command(self) -> str:
        """The line the entrant runs, in the folder of its key file, ``BOT`` its bot."""
        argv = ["cardarena", "bot", "connect", "--server", self.server]
        argv += ["--tournament", self.tournament_id, "--key-file", self.key_file]
        return f"{shlex.join(argv)} {BOT}"

    def toml(self, *, key_file_written: bool = True) -> str:
        """The invitation as a TOML document, comments saying what to do with it."""
        closes = datetime.fromtimestamp(self.entry_closes_unix_ms / 1000, UTC)
        where = (
            f"The key is also alone in {self.key_file}, which --key-file reads"
            if key_file_written
            else f"Save the key alone in {self.key_file} (chmod 600), which --key-file reads"
        )
        lines = [
            f"# An invitation to cardarena tournament {self.tournament_id}, for the entrant"
            f" {self.entrant}.",
            "# Keep it secret: whoever holds the key plays as this entrant.",
            f"# {where}. In its folder, run the command",
            "# below with BOT replaced by your bot (path/to/bot.py:Class, a reference bot such",
            "# as rules, or 'exec:NAME=COMMAND' for a program; see docs/bots.md), before the",
            "# entry closes: an entrant who is away has its seats played by their clocks.",
            f"#   {self.command()}",
            f"server = {_string(self.server)}",
            f"tournament = {_string(self.tournament_id)}",
            f"entrant = {_string(self.entrant)}",
            f"key = {_string(self.key)}",
            f"key_file = {_string(self.key_file)}",
            f"command = {_string(self.command())}",
            f"game = {_string(self.game)}",
            f"players = {self.players}",
            f"deals = {self.deals}",
            f"move_ms = {self.move_ms}",
            f"entry_closes = {closes.strftime('%Y-%m-%dT%H:%M:%SZ')}",
        ]
        return "\n".join(lines) + "\n"


def invitations(info: tpb.TournamentInfo, keys: Sequence[str], server: str) -> list[Invitation]:
    """One invitation per entrant of the tournament ``info`` describes, ``keys`` in entrant
    order, ``server`` the address the entrants are to connect to."""
    names = list(info.entrants)
    return [
        Invitation(
            server=server,
            tournament_id=info.tournament_id,
            entrant=name,
            key=key,
            stem=stem,
            game=info.game,
            players=info.players,
            deals=info.deals,
            move_ms=info.time_control.move_ms,
            entry_closes_unix_ms=info.created_unix_ms + info.entry_ms,
        )
        for name, key, stem in zip(names, keys, file_stems(names), strict=True)
    ]


def file_stems(names: Sequence[str]) -> list[str]:
    """A file name for each entrant: its name where that is a safe file name, else its
    letters, digits, ``.``, ``_`` and ``-`` with ``_`` for the rest; never starting with a
    dot or a dash, and unique even where case does not count (``-2``, ``-3`` … after a
    name another already took)."""
    taken: set[str] = set()
    stems = []
    for name in names:
        base = UNSAFE.sub("_", name).lstrip(".-")[:MAX_ENTRANT_NAME] or "entrant"
        stem, number = base, 1
        while stem.lower() in taken:
            number += 1
            stem = f"{base}-{number}"
        taken.add(stem.lower())
        stems.append(stem)
    return stems


def paths_of(folder: Path, invitation: Invitation) -> tuple[Path, Path]:
    """The invitation's two files: the TOML and the key."""
    return folder / f"{invitation.stem}.toml", folder / invitation.key_file


def existing(folder: Path, stems: Sequence[str]) -> list[Path]:
    """The files of these stems already in ``folder``: an invitation is never written over
    one, so they are refused before the tournament is created."""
    return [
        path
        for stem in stems
        for path in (folder / f"{stem}.toml", folder / f"{stem}.key")
        if path.exists() or path.is_symlink()
    ]


def write_invitations(folder: Path, sent: Sequence[Invitation]) -> list[Path]:
    """Write every invitation's two files into ``folder`` (made, 0700, if missing), each new
    and 0600; the TOML files' paths, in entrant order. If one cannot be written, those
    already written are removed again (their tournament will not be played) and the error
    is raised."""
    folder.mkdir(mode=0o700, exist_ok=True)
    written: list[Path] = []
    try:
        for invitation in sent:
            toml_path, key_path = paths_of(folder, invitation)
            _write_new(key_path, invitation.key + "\n")
            written.append(key_path)
            _write_new(toml_path, invitation.toml())
            written.append(toml_path)
    except OSError:
        for path in written:
            with contextlib.suppress(OSError):
                path.unlink()
        raise
    return written[1::2]


def _write_new(path: Path, text: str) -> None:
    """Write a new file only its owner may read; a file left half written is removed."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError:
        with contextlib.suppress(OSError):
            path.unlink()
        raise


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, but for DEL, which TOML escapes too,
    and characters beyond the BMP, which stay themselves (TOML has no surrogate escapes)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")
