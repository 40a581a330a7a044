"""The bot interface: one method, given only what the seat may know."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from .state import SeatState


@runtime_checkable
class Bot(Protocol):
    """A player. ``choose`` returns one of ``state.legal`` (action ids, see ``cardarena.engine``).

    A bot object plays one seat of one match at a time; the runner makes a fresh one per seat
    (``Bot()`` with no arguments, or ``Bot(seed=…)`` when it accepts a seed).
    """

    name: str

    def choose(self, state: SeatState) -> int: ...


def load_bot(spec: str, *, seed: int | None = None, params: Mapping[str, Any] | None = None) -> Bot:
    """Make a bot from ``path/to/bot.py:Class``, ``module:Class`` or a reference bot's short
    name (``random``, ``rules``, ``mc``); ``params`` are
    keyword arguments of its constructor (a tournament's ``NAME=SPEC,KEY=VALUE…``)."""
    module_name, _, class_name = REFERENCE.get(spec, spec).rpartition(":")
    if not module_name or not class_name:
        raise ValueError(
            f"a bot is path/to/bot.py:Class, module:Class or one of {', '.join(REFERENCE)};"
            f" got {spec!r}"
        )
    try:
        module = _module_of(module_name)
        factory = getattr(module, class_name)
    except (ImportError, AttributeError, OSError, SyntaxError) as error:
        hint = ""
        if isinstance(error, ModuleNotFoundError) and "/" not in module_name:
            hint = " (a bot in a file: path/to/bot.py:Class; a module: on PYTHONPATH)"
        raise ValueError(f"cannot load bot {spec!r}: {error}{hint}") from None
    extra = dict(params or {})
    accepted = keywords_of(factory)
    if accepted is not None:
        unknown = sorted(set(extra) - accepted)
        if unknown:
            options = ", ".join(sorted(accepted - {"seed"})) or "none"
            raise ValueError(
                f"bot {spec!r} has no option {', '.join(unknown)}; its options: {options}"
            )
    if seed is not None and (accepted is None or "seed" in accepted):
        extra["seed"] = seed
    bot = factory(**extra)
    if not isinstance(bot, Bot):
        raise ValueError(f"{spec!r} is not a bot: it needs a `name` and a `choose(state)` method")
    return bot


REFERENCE: dict[str, str] = {
    "random": "cardarena.clients.bots.random_bot:RandomBot",
    "rules": "cardarena.clients.bots.rules_bot:RuleBot",
    "mc": "cardarena.clients.bots.montecarlo:MonteCarloBot",
}


def _module_of(name: str) -> ModuleType:
    """A module by name, or the Python file ``name`` names (``….py``), loaded once."""
    if not name.endswith(".py"):
        return importlib.import_module(name)
    path = Path(name).resolve()
    key = "cardarena_bot_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{name} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[key]
        raise
    return module


def keywords_of(factory: Any) -> set[str] | None:
    """The keyword arguments ``factory`` takes; ``None`` if it takes any (``**kwargs``) or
    cannot be inspected."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name for p in parameters if p.kind in named}
