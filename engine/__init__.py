"""cardarena's rules engine: every game of RULES.md, pure, deterministic and fast.

No I/O, no clock, no global randomness: chance comes only from a match's seed through the
fair-deal stream (:mod:`.fairdeal`), and the resulting deals are themselves events.

>>> from cardarena.engine import new_match
>>> match = new_match("hexathlon", players=4, seed=bytes(32))
>>> seat, actions = match.to_act, match.legal_actions()
>>> events = match.apply(seat, actions[0])
"""

from .actions import (
    CHOOSE_TRUMP,
    EXCLUDE,
    PASS,
    Action,
    choose_trump,
    default_action,
    describe,
    exclude,
)
from .cards import Card, CardSet, card_code, parse_card
from .errors import (
    ActionError,
    EngineError,
    IllegalAction,
    MalformedAction,
    NotYourTurn,
    OptionError,
    ReplayError,
)
from .events import Event
from .fairdeal import RandomStream, commitment, mix_seed
from .games import GAMES, get_game
from .match import Match, MatchSetup, new_match, setup, validate_options
from .replay import replay
from .views import (
    AUDITOR,
    SPECTATOR,
    Projector,
    TableView,
    legal_actions_for,
    project_log,
    view,
)

__all__ = [
    "AUDITOR",
    "CHOOSE_TRUMP",
    "EXCLUDE",
    "GAMES",
    "PASS",
    "SPECTATOR",
    "Action",
    "ActionError",
    "Card",
    "CardSet",
    "EngineError",
    "Event",
    "IllegalAction",
    "MalformedAction",
    "Match",
    "MatchSetup",
    "NotYourTurn",
    "OptionError",
    "Projector",
    "RandomStream",
    "ReplayError",
    "TableView",
    "card_code",
    "choose_trump",
    "commitment",
    "default_action",
    "describe",
    "exclude",
    "get_game",
    "legal_actions_for",
    "mix_seed",
    "new_match",
    "parse_card",
    "project_log",
    "replay",
    "setup",
    "validate_options",
    "view",
]
