"""Ladders hosted by the server: competitions that never end (docs/ladders.md)."""

from .director import LadderDirector
from .registry import Ladders, SnapshotGone
from .spec import LadderSpec

__all__ = ["LadderDirector", "LadderSpec", "Ladders", "SnapshotGone"]
