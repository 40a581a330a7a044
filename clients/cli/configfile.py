"""A command's flags from a TOML file (``--config cup.toml``), so that a competition is a file
that can be committed and run again.

Each key is a flag's name (``move_ms`` or ``move-ms``), each value what the flag would take:
a string, number or boolean, a table for a JSON flag (``[options]``), an array for a repeated
flag (``bot = ["random", "rules"]``). Values go through the flag's own checks, so a file is
refused exactly as the command line would be. A flag given on the command line wins over the
file; ``--bot`` there replaces the file's bots.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FILE_VALUES = "config_values"
"""Where the file's checked values wait on the namespace until :func:`merged` applies them."""


class LoadConfig(argparse.Action):
    """The ``--config FILE`` action: read the file now, check every value, keep them aside."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        path = Path(str(values))
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as error:
            parser.error(f"cannot read {path}: {error.strerror or error}")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            parser.error(f"{path} is not a TOML file: {error}")
        setattr(namespace, FILE_VALUES, checked(parser, table, path))


def checked(parser: argparse.ArgumentParser, table: dict[str, Any], path: Path) -> dict[str, Any]:
    """``table``'s values, each converted and checked by the flag it names."""
    actions = {
        a.dest: a
        for a in parser._actions
        if a.option_strings and a.dest not in ("help", "config") and a.dest != argparse.SUPPRESS
    }
    out: dict[str, Any] = {}
    for key, value in table.items():
        dest = key.replace("-", "_")
        action = actions.get(dest)
        if action is None:
            known = ", ".join(sorted(actions))
            parser.error(f"{path}: no flag {key!r} (the keys are the flags: {known})")
        out[dest] = _converted(parser, action, value, f"{path}: {key}")
    return out


def _converted(
    parser: argparse.ArgumentParser, action: argparse.Action, value: Any, where: str
) -> Any:
    if isinstance(action, argparse._StoreTrueAction):
        if not isinstance(value, bool):
            parser.error(f"{where} is true or false")
        return value
    if isinstance(action, argparse._AppendAction):
        items = value if isinstance(value, list) else [value]
        return [_one(parser, action, item, where) for item in items]
    return _one(parser, action, value, where)


def _one(parser: argparse.ArgumentParser, action: argparse.Action, value: Any, where: str) -> Any:
    if isinstance(value, dict | list):
        text = json.dumps(value)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    convert = action.type
    if convert is None:
        return text
    try:
        return convert(text)  # type: ignore[operator]
    except (argparse.ArgumentTypeError, ValueError) as error:
        parser.error(f"{where}: {error}")


def merged(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with the file's values where the command line left a flag at its default."""
    values: dict[str, Any] = getattr(args, FILE_VALUES, None) or {}
    for dest, value in values.items():
        if getattr(args, dest, None) == parser.get_default(dest):
            setattr(args, dest, value)
    return args
