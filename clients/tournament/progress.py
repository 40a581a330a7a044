"""A one-line progress bar on stderr: rich's in a terminal, else (when asked for) plain text.

Why it switches itself off when stderr is not a terminal: carriage-return redraws turn a log
file or a CI transcript into noise. Redraws are throttled, so thousands of quick matches cost
nothing to show.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from cardarena.v1 import tournament_pb2 as tpb

from .terminal import LiveBar, is_terminal

WIDTH = 28
REDRAW_S = 0.1


class Progress:
    """``[#########-------]  12/60  20%  faults 3  5.2 s  ETA 21 s``, redrawn in place."""

    def __init__(
        self,
        total: int,
        *,
        label: str = "",
        enabled: bool | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = max(total, 0)
        self.label = label
        self.done = 0
        self.faults = 0
        self.failed = 0
        self.started = time.monotonic()
        self.leaders = ""
        """The live standings' head (a hosted tournament's), shown after the counts."""
        self._drawn = 0.0
        self._width = 0
        self._live: LiveBar | None = None

    def advance(self, *, faults: int = 0, failed: bool = False) -> None:
        self.done += 1
        self.faults += faults
        self.failed += failed
        self.draw(force=self.done >= self.total)

    def line(self) -> str:
        fraction = self.done / self.total if self.total else 1.0
        filled = round(WIDTH * fraction)
        elapsed = time.monotonic() - self.started
        parts = [
            f"{self.label} " if self.label else "",
            f"[{'#' * filled}{'-' * (WIDTH - filled)}] {self.done}/{self.total} {fraction:4.0%}",
        ]
        if self.faults:
            parts.append(f"  faults {self.faults}")
        if self.failed:
            parts.append(f"  failed {self.failed}")
        parts.append(f"  {elapsed:.1f} s")
        if 0 < self.done < self.total:
            parts.append(f"  ETA {elapsed / self.done * (self.total - self.done):.0f} s")
        if self.leaders:
            parts.append(f"  {self.leaders}")
        return "".join(parts)

    def draw(self, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._drawn < REDRAW_S:
            return
        self._drawn = now
        if is_terminal(self.stream):
            if self._live is None:
                self._live = LiveBar(self.total, self.label or "matches", self.stream)
            self._live.update(self.done, self.notes())
            return
        text = self.line()
        self.stream.write("\r" + text + " " * max(self._width - len(text), 0))
        self.stream.flush()
        self._width = len(text)

    def notes(self) -> str:
        """What the bar shows beside the counts: faults, failures, the standings' head."""
        parts = [
            f"faults {self.faults}" if self.faults else "",
            f"failed {self.failed}" * bool(self.failed),
        ]
        return "  ".join(p for p in (*parts, self.leaders) if p)

    def close(self) -> None:
        """Leave the finished bar on its own line."""
        if self._live is not None:
            self.draw(force=True)
            self._live.close()
            self._live = None
            return
        if self.enabled and self._width:
            self.draw(force=True)
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


class LiveProgress:
    """A hosted tournament's progress line, fed every ``TournamentInfo`` the server sends:
    matches done, faults, the head of the live standings. Call it; ``close`` at the end."""

    def __init__(self, *, label: str = "", enabled: bool | None = None) -> None:
        self.label = label
        self.enabled = enabled
        self.bar: Progress | None = None
        self._seen = 0

    def __call__(self, info: tpb.TournamentInfo) -> None:
        if self.bar is None:
            self.bar = Progress(info.planned, label=self.label or info.game, enabled=self.enabled)
            self.bar.draw(force=True)
        bar = self.bar
        bar.faults = sum(s.faults for s in info.standings)
        bar.leaders = live_standings(info)
        for _ in range(info.finished + info.failed - self._seen):
            bar.advance()
        self._seen = info.finished + info.failed
        bar.draw()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def live_standings(info: tpb.TournamentInfo, shown: int = 3) -> str:
    """The head of the server's standings: ``rules 58.3 · mc 51.2 · random 24.9``."""
    rows = [s for s in info.standings if s.has_mean][:shown]
    return " · ".join(f"{s.entrant} {s.mean:.1f}" for s in rows)
