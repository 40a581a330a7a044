"""Replays: a match log folded into the steps a person follows, shown as text or as HTML.

:mod:`.timeline` is the fold (lenient, so a log that fails its audit still shows);
:mod:`.text` draws it for a terminal, :mod:`.page` as one self-contained HTML page with the
inline style and script of :mod:`.assets`.
"""

from .page import html_page
from .text import render_text
from .timeline import Step, Timeline, Trick, build_timeline

__all__ = ["Step", "Timeline", "Trick", "build_timeline", "html_page", "render_text"]
