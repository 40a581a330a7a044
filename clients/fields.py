"""Named attributes copied as they are: the one way a dict of settings or of JSON values takes
fields that need no converting, so that each is named once rather than written ``x=y.x``."""

from __future__ import annotations

from typing import Any


def fields_of(source: object | None, *names: str) -> dict[str, Any]:
    """The attributes ``names`` of ``source`` (each ``None`` without a source). A name
    ``source`` lacks raises ``AttributeError``: a renamed field fails, never defaults."""
    return {name: None if source is None else getattr(source, name) for name in names}
