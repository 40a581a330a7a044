"""What a person at a terminal sees: tables, a live progress bar and errors drawn by ``rich``;
the same words as plain text everywhere else.

Why plain text when the stream is not a terminal: a pipe, a log file, a CI transcript or a
test reads the columns it always read (and ``--json`` output is never touched), while a
person gets aligned, coloured tables, a bar that redraws in place, and errors that stand out.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from rich.table import Table
from rich.text import Text


def is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or a stream-like object
        return False


@dataclass(frozen=True)
class Column:
    title: str
    width: int
    """The plain text's width: numbers right-aligned, text left-aligned to it."""
    numeric: bool = False


def write_table(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], out: IO[str], *, first: str = ""
) -> None:
    """``rows`` under ``columns``: a rich table in a terminal, fixed-width text elsewhere
    (a header, a rule as wide, one line per row). ``first`` styles that column's cells."""
    if is_terminal(out):
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for column in columns:
            table.add_column(
                column.title,
                justify="right" if column.numeric else "left",
                style="bold" if column.title == first else None,
                no_wrap=True,
            )
        for row in rows:
            table.add_row(*row)
        # Never an ellipsis in a cell: a terminal narrower than the table wraps its lines.
        widest = [max([len(c.title), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
        console = Console(file=out, highlight=False)
        needed = sum(widest) + 3 * len(columns)
        if console.width < needed:
            console = Console(file=out, highlight=False, width=needed)
        console.print(table)
        return
    header = "  ".join(_cell(c, c.title) for c in columns).rstrip()
    out.write(header + "\n" + "-" * len(header) + "\n")
    for row in rows:
        out.write("  ".join(_cell(c, v) for c, v in zip(columns, row, strict=True)).rstrip() + "\n")


def _cell(column: Column, value: str) -> str:
    return value.rjust(column.width) if column.numeric else value.ljust(column.width)


def print_error(prefix: str, message: str, stream: IO[str] | None = None) -> None:
    """One line, ``prefix: message``, the prefix in bold red in a terminal."""
    out = stream if stream is not None else sys.stderr
    if is_terminal(out):
        line = Text(f"{prefix}: ", style="bold red") + Text(message)
        Console(file=out, highlight=False, soft_wrap=True).print(line)
    else:
        print(f"{prefix}: {message}", file=out)


class LiveBar:
    """A redrawn-in-place bar (rich) for :class:`.progress.Progress` in a terminal."""

    def __init__(self, total: int, label: str, stream: IO[str]) -> None:
        self._progress = RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[notes]}"),
            console=Console(file=stream, highlight=False),
            transient=False,
        )
        self._task = self._progress.add_task(label, total=total, notes="")
        self._progress.start()

    def update(self, done: int, notes: str) -> None:
        self._progress.update(self._task, completed=done, notes=notes)

    def close(self) -> None:
        self._progress.stop()
