"""One match of any game behind one small API.

* :attr:`Match.to_act`: the seat to act (``None`` while a deal is pending or when over);
* :meth:`Match.legal_actions`: that seat's legal actions, sorted;
* :meth:`Match.apply`: play an action, get the events it caused;
* :attr:`Match.over`, :attr:`Match.totals`, :attr:`Match.winners`.

Chance is explicit. With a seed the match deals itself from the fair-deal stream; without one
(replaying a log) it stops at each chance point until :meth:`Match.resolve` is given the
recorded deal or draw, which is checked for consistency but not re-derived.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .actions import PASS, choose_trump, default_in, describe, exclude, is_action
from .cards import (
    FRENCH_CARD_LISTS,
    FRENCH_ONLY,
    SPANISH_BASE,
    SPANISH_CARD_LISTS,
    SPANISH_ONLY,
    CardSet,
    card_code,
    cards_of,
)
from .copies import fill
from .decks import deal_bits, deck_bits, deck_mask, hand_sizes
from .errors import IllegalAction, MalformedAction, NotYourTurn, OptionError
from .events import (
    CardPlayed,
    DealerDrawn,
    Dealt,
    Event,
    MatchEnded,
    MatchStarted,
    Passed,
    RoundStarted,
    Score,
    SuitExcluded,
    TrumpChosen,
    TrumpDrawn,
    dealt,
    round_scored,
    round_started,
)
from .exact import add_all
from .fairdeal import (
    DEALER_LABEL,
    RandomStream,
    check_seed,
    commitment,
    deal_label,
    shuffled,
    trump_label,
)
from .games import get_game
from .options import check_seat, whole_number
from .schedule import GameSpec, Round, RoundPlan, Schedule, best_seats
from .traits import Trump

DRAWN = Trump.DRAWN

ChanceEvent = DealerDrawn | TrumpDrawn | Dealt
_CLUBS, _DIAMONDS, _HEARTS, _SPADES = FRENCH_CARD_LISTS
_OROS, _COPAS, _ESPADAS, _BASTOS = SPANISH_CARD_LISTS


MATCH_SHARED = (
    *("game", "players", "options", "_seed", "first_dealer", "round_index", "to_act", "plan"),
    *("_trump", "dealer", "pending", "totals", "over", "winners"),
)
"""What :meth:`Match.clone` shares with the original: numbers, tuples, immutable objects."""
MATCH_COPIED = ("log", "round_scores")
"""What it copies (lists); the schedule and the round copy themselves."""


class Match:
    """A match in progress. Create one with :func:`new_match` (or :meth:`from_start` on replay).

    Invariant: ``round`` is ``None`` while a deal or draw is pending, so a round that is set is
    the one in play (or the last one, finished, once the match is over). The per-action paths
    below rely on it to ask one question instead of three.
    """

    def __init__(self, started: MatchStarted, *, seed: bytes | None = None) -> None:
        self.game: GameSpec = get_game(started.game)
        self.players = started.players
        self.options: Mapping[str, Any] = started.options
        self._seed = seed
        self.schedule: Schedule = self.game.make_schedule(self.options, self.players)
        self.log: list[Event] = [started]
        self.first_dealer = 0
        self.round_index = -1
        self.round: Round | None = None
        self.to_act: int | None = None
        """The seat to act, or ``None`` (a deal is pending, or the match is over). It is read
        before every action, so it is a plain attribute, kept current by ``apply`` and ``_auto``."""
        self.plan: RoundPlan | None = None
        self._trump = -1
        self.dealer = 0
        self.pending: str | None = None
        self.totals: tuple[Score, ...] = (0,) * self.players
        self.round_scores: list[tuple[Score, ...]] = []
        self.over = False
        self.winners: tuple[int, ...] = ()
        out: list[Event] = []
        first_dealer = self.options["first_dealer"]
        if first_dealer == "random":
            self.pending = "dealer"
        else:
            self.first_dealer = first_dealer
            self._begin_round(0, out)
        self._auto(out)
        self.log.extend(out)

    @classmethod
    def from_start(cls, started: MatchStarted) -> Match:
        """A match that takes its deals from a log (see :mod:`replay`)."""
        return cls(started)

    # -- the API -----------------------------------------------------------------------

    @property
    def hands(self) -> tuple[int, ...]:
        """Every seat's hand as a card mask (all empty between deals). Hidden information:
        only :mod:`views` may show it to anyone."""
        if self.round is None:
            return (0,) * self.players
        return tuple(self.round.hands)

    @property
    def trump(self) -> int:
        """The current round's trump suit, or -1 (none, or not yet drawn or chosen)."""
        return int(getattr(self.round, "trump", self._trump))

    def legal_mask(self) -> int:
        """Legal actions of the seat to act as a bitmask over action ids (0: nobody is to act).

        A finished round (and so an ended match) has nobody to act, so its mask is 0.
        """
        rnd = self.round
        return 0 if rnd is None else rnd.legal

    def legal_actions(self) -> list[int]:
        """The legal actions of the seat to act, sorted (empty when nobody is to act)."""
        rnd = self.round
        if rnd is None:
            return []
        cards = rnd.legal_cards
        if cards is not None:
            return [*cards]
        legal = rnd.legal
        if legal < FRENCH_ONLY:
            # cards_of(legal), its French-deck case written out: this is asked before every
            # action, and a call costs as much as the lookups
            # (tests/engine/test_engine_fastpaths.py).
            return [
                *_CLUBS[legal & 8191],
                *_DIAMONDS[legal >> 13 & 8191],
                *_HEARTS[legal >> 26 & 8191],
                *_SPADES[legal >> 39],
            ]
        spanish = legal >> SPANISH_BASE
        if legal < SPANISH_ONLY and spanish << SPANISH_BASE == legal:
            # And its Spanish-deck case (Crazy Sixes), for the same reason.
            return [
                *_OROS[spanish & 4095],
                *_COPAS[spanish >> 12 & 4095],
                *_ESPADAS[spanish >> 24 & 4095],
                *_BASTOS[spanish >> 36],
            ]
        return cards_of(legal)

    def default_action(self) -> int:
        """The time-out default of the seat to act: the pass whenever it is legal, else the
        lowest legal action (:func:`.actions.default_in`). A function of what the seat knows
        (the public table and its own hand), as its legal actions are."""
        mask = self.legal_mask()
        if not mask:
            raise NotYourTurn("nobody is to act")
        return default_in(mask)

    def apply(self, seat: int, action: int) -> list[Event]:
        """Apply ``seat``'s ``action``; return every event it caused (deals included).

        Raises :class:`MalformedAction`, :class:`NotYourTurn` or :class:`IllegalAction`,
        leaving the match unchanged.
        """
        rnd = self.round
        if (
            type(action) is int
            and type(seat) is int
            and rnd is not None
            and seat == rnd.to_act
            and action >= 0
            and rnd.legal >> action & 1
        ):
            # The common case, decided by one mask test; everything else explains itself below.
            out: list[Event] = []
            rnd.play(action, out)
            if rnd.finished:
                self._auto(out)
            else:
                self.to_act = rnd.to_act
            self.log.extend(out)
            return out
        return self._apply_checked(seat, action)

    def _apply_checked(self, seat: int, action: int) -> list[Event]:
        """``apply`` for everything but a plain legal action: refuse it clearly, or normalise it."""
        rnd = self.round
        if not is_action(action):
            raise MalformedAction(f"{action!r} is not an action: play a card, pass or name a suit")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.players:
            raise MalformedAction(f"seat {seat!r} does not exist (seats 0..{self.players - 1})")
        if self.over:
            raise NotYourTurn("the match is over")
        if rnd is None or self.pending is not None or rnd.to_act is None:
            raise NotYourTurn("nobody is to act until the deal is made")
        if seat != rnd.to_act:
            raise NotYourTurn(f"seat {rnd.to_act} is to act, not seat {seat}")
        assert self.plan is not None  # a round is in play
        if action < PASS and not deck_mask(self.plan.deck) >> action & 1:
            raise MalformedAction(f"{card_code(action)} is not a card of this game's deck")
        normal = rnd.normalize(action)
        if normal == action or not rnd.legal >> normal & 1:
            raise IllegalAction(f"{describe(action)} is not legal: {rnd.why_illegal(action)}")
        return self.apply(seat, normal)

    def resolve(self, event: ChanceEvent) -> list[Event]:
        """Supply the pending deal or draw from a log; raises ``ValueError`` if it cannot be."""
        if self.pending is None:
            raise ValueError("no deal or draw is pending")
        expected = {"dealer": DealerDrawn, "trump": TrumpDrawn, "deal": Dealt}[self.pending]
        if not isinstance(event, expected):
            raise ValueError(f"expected {expected.__name__}, got {type(event).__name__}")
        self._check_chance(event)
        out: list[Event] = []
        self._take_chance(event, out)
        self._auto(out)
        self.log.extend(out)
        return out

    @property
    def dealing(self) -> bool:
        """Whether the match deals itself (it has its deal seed); else its deals and draws
        wait for :meth:`deal_from` or come from a log (:meth:`resolve`)."""
        return self._seed is not None

    def deal_from(self, deal_seed: bytes) -> list[Event]:
        """Give a match started without its deal seed (a host waiting for every seat's
        contribution, RULES.md §4) that seed: it deals, and draws, from now on. Returns the
        events that follow at once (the first deal, and any draw before it)."""
        if self._seed is not None:
            raise ValueError("the match already has its deal seed")
        self._seed = check_seed(deal_seed)
        out: list[Event] = []
        self._auto(out)
        self.log.extend(out)
        return out

    def recorded_action(self, event: Event) -> tuple[int, int] | None:
        """The ``(seat, action)`` that ``event``, the next event of a log being fed to this
        match, records; ``None`` for chance and derived events (see :func:`action_of`).

        The match knows the round the event belongs to: every event up to the next action is
        already produced when an action event is read, so the round in play is the action's.
        """
        plan = self.plan
        return action_of(event, voluntary_pass=plan is not None and plan.traits.voluntary_pass)

    def __new__(cls, *args: object, **kwargs: object) -> Match:
        """``Match.__new__(Match)``: an empty match for :meth:`clone` to fill, also in the
        compiled build, whose own ``__new__`` would run ``__init__`` (see :mod:`.copies`)."""
        return super().__new__(cls)

    def clone(self) -> Match:
        """An independent copy to play on: not a deep copy (milliseconds: the log, the options
        schema), but each attribute, with what play changes copied (the log list, the round and
        schedule by their own ``copy``) and what it never changes shared (the game, the options,
        the plan, the events and tuples). Monte Carlo bots clone before every playout."""
        other = fill(Match.__new__(Match), self, MATCH_SHARED, MATCH_COPIED)
        other.schedule = self.schedule.copy()
        other.round = None if self.round is None else self.round.copy()
        return other

    def with_hidden_hands(self, viewer: int | None, hands: tuple[int, ...]) -> Match:
        """A copy in which the hands ``viewer`` cannot see are replaced by ``hands``.

        The replacement must keep every hand's size and the same cards among the hidden hands
        (the viewer's own hand is kept). Monte Carlo players and the view tests use this.
        """
        if self.round is None:
            raise ValueError("no hands have been dealt yet")
        current = self.round.hands
        hidden = [s for s in range(self.players) if s != viewer]
        if len(hands) != self.players or any(
            hands[s].bit_count() != current[s].bit_count() for s in hidden
        ):
            raise ValueError("each hidden hand must keep its size")
        old_pool = new_pool = 0
        for s in hidden:
            old_pool |= current[s]
            new_pool |= hands[s]
        if old_pool != new_pool:
            raise ValueError("the hidden hands must hold the same cards between them")
        other = self.clone()
        assert other.round is not None
        for s in hidden:
            other.round.hands[s] = hands[s]
        other.round.forget_legal()
        return other

    # -- chance ------------------------------------------------------------------------

    def _auto(self, out: list[Event]) -> None:
        """Do whatever needs no seat (seeded draws, round ends, next rounds), then note who acts."""
        while not self.over:
            pending = self.pending
            if pending is not None:
                if self._seed is None:
                    break
                if pending == "deal":
                    self._deal(out)
                else:
                    self._take_chance(self._draw(), out)
            elif self.round is not None and self.round.finished:
                self._end_round(out)
            else:
                break
        rnd = self.round
        self.to_act = None if rnd is None else rnd.to_act

    def _draw(self) -> DealerDrawn | TrumpDrawn:
        """The pending draw (of the first dealer, or of a trump) from the seed."""
        assert self._seed is not None
        if self.pending == "dealer":
            return DealerDrawn(RandomStream(self._seed, DEALER_LABEL).uniform(self.players))
        return TrumpDrawn(
            self.round_index, RandomStream(self._seed, trump_label(self.round_index)).uniform(4)
        )

    def _deal(self, out: list[Event]) -> None:
        """The pending deal from the seed: its event, then its round, built from the hands as
        they were dealt (a deal from a log reads them off its event, :meth:`_take_chance`)."""
        assert self._seed is not None and self.plan is not None
        # The deck shuffled as its cards' bits: the same order, and each hand a sum.
        bits, shift = deck_bits(self.plan.traits.deck)
        order = shuffled(self._seed, deal_label(self.round_index), bits)
        hands = deal_bits(order, shift, self.dealer, self.players)
        sizes = tuple(map(int.bit_count, hands))
        out.append(dealt(self.round_index, tuple(map(CardSet, hands)), sizes))
        self._start_round(hands, out)

    def _check_chance(self, event: ChanceEvent) -> None:
        if isinstance(event, DealerDrawn):
            if not 0 <= event.seat < self.players:
                raise ValueError(f"dealer seat {event.seat} does not exist")
            return
        if event.round != self.round_index:
            raise ValueError(f"expected round {self.round_index}, got round {event.round}")
        if isinstance(event, TrumpDrawn):
            if not 0 <= event.suit < 4:
                raise ValueError(f"trump suit {event.suit} does not exist")
            return
        assert self.plan is not None
        sizes = hand_sizes(len(self.plan.deck), self.dealer, self.players)
        if len(event.hands) != self.players or any(h is None for h in event.hands):
            raise ValueError("a deal must show every hand")
        union = 0
        for seat, hand in enumerate(event.hands):
            assert hand is not None
            if len(hand) != sizes[seat]:
                raise ValueError(
                    f"seat {seat} was dealt {len(hand)} cards, the rules give {sizes[seat]}"
                )
            if union & hand.mask:
                raise ValueError("a card was dealt twice")
            union |= hand.mask
        if union != deck_mask(self.plan.deck):
            raise ValueError("the hands are not this round's deck")
        if event.hand_sizes != sizes:
            raise ValueError("hand sizes disagree with the hands")

    def _take_chance(self, event: ChanceEvent, out: list[Event]) -> None:
        out.append(event)
        if isinstance(event, DealerDrawn):
            self.first_dealer = event.seat
            self.pending = None
            self._begin_round(0, out)
        elif isinstance(event, TrumpDrawn):
            self._trump = event.suit
            self.pending = "deal"
        else:
            self._start_round(tuple([h.mask if h is not None else 0 for h in event.hands]), out)

    def _start_round(self, hands: tuple[int, ...], out: list[Event]) -> None:
        """The round of the pending deal, dealt ``hands``, begins."""
        assert self.plan is not None
        self.pending = None
        self.round = self.plan.build(hands, self.dealer, self._trump)
        self.round.start(out)

    # -- rounds ------------------------------------------------------------------------

    def _begin_round(self, index: int, out: list[Event]) -> None:
        plan = self.schedule.next_round(index, self.totals, self.round)
        if plan is None:
            self._end_match(out)
            return
        self.round_index = index
        self.plan = plan
        self.round = None
        self.dealer = (self.first_dealer + index) % self.players
        traits = plan.traits
        trump = traits.trump_suit
        self._trump = trump if trump is not None else -1
        out.append(
            round_started(
                index, traits.kind, self.dealer, trump, plan.multiplier, traits.voluntary_pass
            )
        )
        self.pending = "trump" if traits.trump is DRAWN else "deal"

    def _end_round(self, out: list[Event]) -> None:
        assert self.round is not None and self.plan is not None
        scores, extra = self.schedule.score(self.round_index, self.round, self.plan)
        self.totals = add_all(self.totals, scores)
        self.round_scores.append(scores)
        out.extend(extra)
        out.append(round_scored(self.round_index, scores, self.totals))
        self._begin_round(self.round_index + 1, out)

    def _end_match(self, out: list[Event]) -> None:
        self.winners = best_seats(self.totals, lowest_wins=self.game.lowest_wins)
        self.over = True
        self.pending = None
        out.append(MatchEnded(self.totals, self.winners))


def validate_options(
    game: GameSpec, players: int, options: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Validate and normalise options once, at creation; raise :class:`OptionError` naming the problem."""
    allowed = ", ".join(str(p) for p in game.players)
    if whole_number(players, "players") not in game.players:
        raise OptionError("players", f"{game.name} is played by {allowed} players, not {players!r}")
    normalized = game.options.validate({} if options is None else options, "")
    check_seat(normalized["first_dealer"], players, "first_dealer")
    return normalized


@dataclass(frozen=True)
class MatchSetup:
    """A validated configuration: validate once, then start any number of matches from it.

    The normalised options are shared by every match started here; treat them as read-only.
    """

    game: str
    players: int
    options: Mapping[str, Any]

    def start(self, seed: bytes, *, dealing: bool = True) -> Match:
        """A match committed to ``seed`` (32 bytes) that deals itself from it through the
        fair-deal stream; with ``dealing=False`` it waits, before its first deal or draw, for
        the deal seed that mixes ``seed`` with the seats' contributions (:meth:`Match.deal_from`)."""
        started = MatchStarted(self.game, self.players, self.options, commitment(check_seed(seed)))
        return Match(started, seed=seed if dealing else None)


def setup(
    game: str, *, players: int | None = None, options: Mapping[str, Any] | None = None
) -> MatchSetup:
    """Validate ``options`` for ``game`` and ``players`` (default: 4 where allowed, else the only count)."""
    spec = get_game(game)
    count = spec.default_players if players is None else players
    normalized = validate_options(spec, count, options)
    return MatchSetup(spec.name, int(count), normalized)


def new_match(
    game: str,
    *,
    seed: bytes,
    players: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> Match:
    """Create a match that deals itself from ``seed`` (32 bytes) through the fair-deal stream."""
    return setup(game, players=players, options=options).start(seed)


def action_of(event: Event, *, voluntary_pass: bool = False) -> tuple[int, int] | None:
    """The ``(seat, action)`` an event records, or ``None`` for chance and derived events.

    ``voluntary_pass`` says whether the event belongs to a round with voluntary passes
    (its ``RoundStarted.voluntary_pass``). There every pass is the seat's own action, a forced
    one too: the seat was asked (RULES.md, "Forced pass"). Elsewhere a forced pass is derived,
    applied by the rules within the action before it. A pass whose ``forced`` is hidden
    (``None``: a seat's or a spectator's view) only occurs in such a round, so it is an action.
    A full log read without its rounds needs :class:`ActionReader` or
    :meth:`Match.recorded_action`, which supply ``voluntary_pass``.
    """
    if isinstance(event, CardPlayed):
        return event.seat, event.card
    if isinstance(event, Passed) and (event.forced is not True or voluntary_pass):
        return event.seat, PASS
    if isinstance(event, SuitExcluded):
        return event.seat, exclude(event.suit)
    if isinstance(event, TrumpChosen):
        return event.seat, choose_trump(event.suit)
    return None


class ActionReader:
    """:func:`action_of` for a log read in order from its start: it follows ``RoundStarted``
    to know which passes are actions (all of them, in a round with voluntary passes).

    ``voluntary_pass`` is the state to start from when reading begins mid-round.
    """

    __slots__ = ("voluntary_pass",)

    def __init__(self, *, voluntary_pass: bool = False) -> None:
        self.voluntary_pass = voluntary_pass

    def __call__(self, event: Event) -> tuple[int, int] | None:
        if isinstance(event, RoundStarted):
            self.voluntary_pass = event.voluntary_pass
            return None
        return action_of(event, voluntary_pass=self.voluntary_pass)
