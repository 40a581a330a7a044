"""What ``--bot`` names: a Python class or an external program, under a name for the standings.

Forms (the first that applies wins):

* ``exec:NAME=COMMAND ARGS…``: an external program speaking ``docs/bot-protocol.md``; the
  command is split like a shell would (``shlex``) but run without one, so nothing is expanded.
* ``[NAME=]SPEC[,KEY=VALUE…]``: a Python bot, ``SPEC`` being ``module:Class`` or a short name
  of :data:`~cardarena.clients.bots.REFERENCE`; ``KEY=VALUE`` pairs become keyword
  arguments of its constructor (numbers and ``true``/``false`` are converted), which is how a
  tournament sets e.g. a Monte Carlo budget without a new class.

Why names are explicit and unique: the standings, JSON and CSV are keyed by them, and the same
class with two budgets is two contestants.
"""

from __future__ import annotations

import re
import shlex
import shutil
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..bots.base import REFERENCE, Bot, load_bot

NAME = re.compile(r"^[A-Za-z0-9_.+#@-]{1,40}$")


@dataclass(frozen=True)
class BotEntry:
    """One contestant. ``target`` is the Python spec or the program's argument list."""

    name: str
    kind: Literal["python", "exec"]
    spec: str
    target: str = ""
    command: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    named: bool = True
    """Whether the spec named the bot; if not, a Python bot is known by its own ``name``."""

    def describe(self) -> str:
        if self.kind == "exec":
            return "exec: " + shlex.join(self.command)
        extra = ",".join(f"{k}={v}" for k, v in self.params.items())
        return self.target + (f" ({extra})" if extra else "")


def parse_bot(text: str) -> BotEntry:
    """Parse one ``--bot`` value; raise ``ValueError`` with a message a person can act on."""
    if text.startswith("exec:"):
        name, sep, command = text[len("exec:") :].partition("=")
        if not sep or not command.strip():
            raise ValueError(f"an external bot is exec:NAME=COMMAND, got {text!r}")
        try:
            argv = tuple(shlex.split(command))
        except ValueError as error:
            raise ValueError(f"cannot split the command of {text!r}: {error}") from None
        return BotEntry(_checked_name(name, text), "exec", text, command=argv)
    head, _, rest = text.partition(",")
    name, sep, target = head.partition("=")
    if not sep:
        name, target = "", head
    params = _params(rest, text) if rest else {}
    if not target:
        raise ValueError(f"no bot in {text!r}")
    named = bool(name) or target in REFERENCE
    if not name:
        name = target if target in REFERENCE else target.rpartition(":")[2]
    return BotEntry(
        _checked_name(name, text), "python", text, target=target, params=params, named=named
    )


def check_unique(entries: list[BotEntry]) -> None:
    seen: set[str] = set()
    for entry in entries:
        if entry.name in seen:
            raise ValueError(
                f"two bots are named {entry.name!r}: name them, e.g. --bot a={entry.target or '…'}"
                f" --bot b=…"
            )
        seen.add(entry.name)


def make_python_bot(entry: BotEntry, *, seed: int | None) -> Bot:
    """A fresh bot for one seat of one match, its ``KEY=VALUE`` pairs as constructor arguments."""
    return load_bot(entry.target, seed=seed, params=entry.params)


def check_bot(entry: BotEntry) -> BotEntry:
    """Fail before the first match on a bot that cannot possibly play; the entry as it will
    play (a Python bot the spec did not name is known by its own ``name``)."""
    if entry.kind == "exec":
        if shutil.which(entry.command[0]) is None:
            raise ValueError(f"bot {entry.name}: no program {entry.command[0]!r} to run")
        return entry
    bot = make_python_bot(entry, seed=0)
    own = str(getattr(bot, "name", ""))
    if entry.named or not NAME.match(own):
        return entry
    return replace(entry, name=own)


def _checked_name(name: str, text: str) -> str:
    if not NAME.match(name):
        raise ValueError(f"bot name {name!r} (in {text!r}) must be 1-40 letters, digits or _.+#@-")
    return name


def _params(text: str, whole: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for pair in text.split(","):
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"bot parameters are KEY=VALUE, got {pair!r} in {whole!r}")
        params[key] = _value(value)
    return params


def _value(text: str) -> Any:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
