"""The engine's errors: each tells a person what went wrong and what would be accepted."""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error the engine raises on bad input."""


class OptionError(EngineError, ValueError):
    """An option is unknown, of the wrong type or out of range; ``path`` names it."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"option {path or '(root)'}: {message}")
        self.path = path


class ActionError(EngineError):
    """An action was refused; the match is unchanged."""


class MalformedAction(ActionError):
    """The action names nothing this game knows (not a card of this deck, not an action id)."""


class NotYourTurn(ActionError):
    """A seat acted while another seat (or nobody) is to act."""


class IllegalAction(ActionError):
    """A well-formed action that the rules forbid now."""


class ReplayError(EngineError):
    """A recorded log disagrees with the rules; ``index`` is the position of the first bad event."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(f"event {index}: {message}")
        self.index = index
