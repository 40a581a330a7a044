"""Determinization: full engine states that agree with everything one seat has seen.

A Monte Carlo player cannot search the real match (the rivals' hands are hidden), so it
searches many *possible* matches instead: each one a :class:`Match` in which the hidden hands
are filled with a sample of the seat's unseen cards, chosen so that the match replays the
seat's own projected log event for event. This module is pure like the rest of the engine:
chance enters only as a ``uniform(k) -> 0..k-1`` function passed in by the caller.

What a sample respects (:class:`Hidden`):

* every hand's current size, and the cards each seat has played or lost (dead) this round;
* what the round's plays and forced passes prove, as its core says through
  ``RoundTraits.inference`` (this module never asks which kind of round it is). In trick
  rounds a seat that did not follow the led suit (a Joker played to a led suit included)
  holds none of it, and a seat that played Joker ``j`` holds no lower Joker (the rules play
  the lowest Joker held, so the log's Joker ids must come out the same). On a layout (Fan
  Tan, Crazy Sixes) a seat whose pass was forced held no card that was playable at that
  moment; a card still in its hand now was in it then, so it cannot be one of those.

Earlier rounds are rebuilt exactly where the log shows every card (trick rounds; Crazy Sixes,
where unplayed cards die face up). Fan Tan ends with cards still in hand; they are assigned so
that every forced pass of that round stays forced (one consistent assignment, not a sample:
earlier rounds only set totals and schedule state, which do not depend on it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from .cards import CardSet, cards_of
from .copies import fork
from .events import (
    CardPlayed,
    CardsDead,
    DealerDrawn,
    Dealt,
    Event,
    MatchStarted,
    Passed,
    RoundStarted,
    TrickWon,
    TrumpDrawn,
)
from .match import Match
from .traits import RoundTraits

T = TypeVar("T")
Uniform = Callable[[int], int]
"""``uniform(k)`` returns a uniformly random integer in ``0..k-1`` (e.g. ``rng.randrange``)."""


SAMPLE_TRIES = 1000
"""Draws :meth:`Determinizer.sample` makes before it gives up on a deal that fits the turn:
a turn that reveals a card (who holds 6O) fits one draw in a few; a seat that must hold a
playable card late in a Fan Tan, seldom fewer than one in a hundred."""


class InconsistentDeal(ValueError):
    """The filled-in hands do not replay the seat's log (a sample broke a constraint)."""


@dataclass(frozen=True)
class Hidden:
    """What one seat knows about the hidden cards of the current round.

    ``pool`` holds exactly the cards in the other seats' hands now; seat ``s`` holds
    ``sizes[s]`` of them, none of ``forbidden[s]``. ``spent[s]`` is what ``s`` has played or
    lost this round, so its dealt hand was its current hand plus ``spent[s]``.
    """

    viewer: int
    round: int
    hand: int
    pool: int
    sizes: tuple[int, ...]
    forbidden: tuple[int, ...]
    spent: tuple[int, ...]

    @property
    def constrained(self) -> bool:
        """Whether any constraint beyond the hand sizes bites on the pool."""
        return any(
            f & self.pool
            for s, f in enumerate(self.forbidden)
            if s != self.viewer and self.sizes[s]
        )


# -- what a seat knows -----------------------------------------------------------------------


def round_starts(events: Sequence[Event]) -> list[int]:
    """Indices of every ``RoundStarted`` in a log."""
    return [i for i, e in enumerate(events) if isinstance(e, RoundStarted)]


def hidden_info(
    events: Sequence[Event],
    viewer: int,
    start: int,
    traits: RoundTraits,
    end: int | None = None,
) -> Hidden:
    """Fold the round whose ``RoundStarted`` is ``events[start]`` (up to ``end``) into
    :class:`Hidden` for ``viewer``; ``traits`` are the round's (its deck, and what a play or
    a pass shows, through :meth:`RoundTraits.inference`)."""
    started = events[0]
    assert isinstance(started, MatchStarted)
    opening = events[start]
    assert isinstance(opening, RoundStarted)
    players = started.players
    stop = len(events) if end is None else end
    inference = traits.inference()
    consecutive_passes = 0
    hand = 0
    sizes = [0] * players
    forbidden = [0] * players
    spent = [0] * players
    for event in events[start + 1 : stop]:
        if isinstance(event, Dealt):
            own = event.hands[viewer]
            hand = own.mask if own is not None else 0
            sizes = list(event.hand_sizes)
        elif isinstance(event, CardPlayed):
            seat, card = event.seat, event.card
            spent[seat] |= 1 << card
            sizes[seat] -= 1
            consecutive_passes = 0
            forbidden[seat] |= inference.play(seat, card)
        elif isinstance(event, Passed):
            # A projection may hide ``forced`` (voluntary passes): a pass after every seat
            # has passed in succession is forced all the same.
            forced = event.forced is True or (
                event.forced is None and consecutive_passes >= players
            )
            consecutive_passes += 1
            if forced:
                forbidden[event.seat] |= inference.passed()
        elif isinstance(event, CardsDead):
            spent[event.seat] |= event.cards.mask
            sizes[event.seat] -= len(event.cards)
        elif isinstance(event, TrickWon):
            inference.trick_won()
    seen = hand
    for cards in spent:
        seen |= cards
    return Hidden(
        viewer=viewer,
        round=opening.round,
        hand=hand & ~spent[viewer],
        pool=traits.deck_mask & ~seen,
        sizes=tuple(sizes),
        forbidden=tuple(forbidden),
        spent=tuple(spent),
    )


# -- sampling ----------------------------------------------------------------------------


def sample_hands(hidden: Hidden, uniform: Uniform, *, tries: int = 8) -> tuple[int, ...]:
    """Every seat's current hand: the viewer's own, and a sample of the pool for the others.

    Without constraints this is a uniformly random deal. With them, the most constrained
    cards are placed first, each on a seat drawn in proportion to its free places (a uniform
    deal when nothing bites); a dead end starts over, and after ``tries`` dead ends an
    augmenting-path matching finds a deal (always possible: the real one exists).
    Raises :class:`InconsistentDeal` if no deal fits at all.
    """
    seats = [s for s in range(len(hidden.sizes)) if s != hidden.viewer and hidden.sizes[s] > 0]
    cards = cards_of(hidden.pool)
    if sum(hidden.sizes[s] for s in seats) != len(cards):
        raise InconsistentDeal("the hidden hands' sizes do not add up to the unseen cards")
    hands = [0] * len(hidden.sizes)
    hands[hidden.viewer] = hidden.hand
    _shuffle(cards, uniform)
    if not hidden.constrained:
        k = 0
        for s in seats:
            for card in cards[k : k + hidden.sizes[s]]:
                hands[s] |= 1 << card
            k += hidden.sizes[s]
        return tuple(hands)
    allowed = {c: [s for s in seats if not hidden.forbidden[s] >> c & 1] for c in cards}
    order = sorted(cards, key=lambda c: len(allowed[c]))  # stable: random among equals
    for _ in range(tries):
        free = {s: hidden.sizes[s] for s in seats}
        chosen = [0] * len(hidden.sizes)
        for card in order:
            options = [s for s in allowed[card] if free[s]]
            if not options:
                break
            pick = uniform(sum(free[s] for s in options))
            for s in options:
                pick -= free[s]
                if pick < 0:
                    break
            free[s] -= 1
            chosen[s] |= 1 << card
        else:
            for s in seats:
                hands[s] = chosen[s]
            return tuple(hands)
    for s, cards_of_s in _match_cards(order, allowed, hidden, seats, uniform).items():
        hands[s] = cards_of_s
    return tuple(hands)


def _shuffle(items: list[int], uniform: Uniform) -> None:
    for i in range(len(items) - 1, 0, -1):
        j = uniform(i + 1)
        items[i], items[j] = items[j], items[i]


def _match_cards(
    cards: list[int],
    allowed: Mapping[int, list[int]],
    hidden: Hidden,
    seats: list[int],
    uniform: Uniform,
) -> dict[int, int]:
    """Kuhn's augmenting paths from cards to the seats' free places."""
    slots = [s for s in seats for _ in range(hidden.sizes[s])]
    owner = [-1] * len(slots)
    slots_of = {}
    for card in cards:
        mine = [i for i, s in enumerate(slots) if s in allowed[card]]
        _shuffle(mine, uniform)
        slots_of[card] = mine

    def place(card: int, seen: list[bool]) -> bool:
        for i in slots_of[card]:
            if not seen[i]:
                seen[i] = True
                if owner[i] < 0 or place(owner[i], seen):
                    owner[i] = card
                    return True
        return False

    for card in cards:
        if not place(card, [False] * len(slots)):
            raise InconsistentDeal(f"no seat may hold card {card} with the sizes left")
    out = dict.fromkeys(seats, 0)
    for i, card in enumerate(owner):
        out[slots[i]] |= 1 << card
    return out


# -- rebuilding a match ------------------------------------------------------------------


def with_hands(match: Match, viewer: int, hands: Sequence[int]) -> Match:
    """A fork of ``match`` whose hidden hands are replaced by ``hands`` (the viewer's kept).

    Like :meth:`Match.with_hidden_hands` (same checks), on a :func:`fork`. The log keeps the
    first sample's deal: the fork is for playing on, not for auditing.
    """
    rnd = match.round
    if rnd is None:
        raise ValueError("no hands have been dealt yet")
    hidden = [s for s in range(match.players) if s != viewer]
    old_pool = new_pool = 0
    for s in hidden:
        if hands[s].bit_count() != rnd.hands[s].bit_count():
            raise ValueError("each hidden hand must keep its size")
        old_pool |= rnd.hands[s]
        new_pool |= hands[s]
    if old_pool != new_pool:
        raise ValueError("the hidden hands must hold the same cards between them")
    other = fork(match)
    assert other.round is not None
    for s in hidden:
        other.round.hands[s] = hands[s]
    other.round.forget_legal()
    return other


class Determinizer:
    """Rebuilds full states for one seat from its projected log, round by round.

    The match as it stood before the current round's deal (every earlier round folded in) is
    kept between calls, so each new decision folds only the current round's events.
    """

    def __init__(self, viewer: int) -> None:
        self.viewer = viewer
        self._prefix: Match | None = None
        self._prefix_end = 0
        """Index in the log of the first event the prefix has not folded."""
        self._expected: deque[Event] = deque()
        """Events the prefix's rules produced that the log has not shown yet."""
        self._round_start = -1
        self._events: Sequence[Event] = ()
        self.hidden: Hidden | None = None

    def update(self, events: Sequence[Event]) -> Hidden:
        """Read the log (which only grows) and return what is hidden in the current round."""
        starts = round_starts(events)
        if not starts:
            raise ValueError("no round has started")
        current = starts[-1]
        deal_at = _deal_index(events, current, len(events))
        if deal_at < 0:
            raise ValueError("the current round has not been dealt")
        if self._prefix is None or self._round_start > current or self._events[:1] != events[:1]:
            first = events[0]
            if not isinstance(first, MatchStarted):
                raise ValueError("a log starts with MatchStarted")
            self._prefix = Match.from_start(first)
            self._prefix_end = 1
            self._expected = deque(self._prefix.log[1:])
            self._round_start = -1
        if self._round_start != current:
            self._advance(events, starts, deal_at)
            self._round_start = current
        assert self._prefix is not None and self._prefix.plan is not None
        self._events = events
        self.hidden = hidden_info(events, self.viewer, current, _traits(self._prefix))
        return self.hidden

    def _advance(self, events: Sequence[Event], starts: list[int], deal_at: int) -> None:
        """Fold every event before the current round's deal into the prefix.

        A finished round's deal is rebuilt from its log: every played and dead card where it
        was, and Fan Tan's leftovers placed so that every forced pass stays forced.
        """
        prefix = self._prefix
        assert prefix is not None
        for k, start in enumerate(starts[:-1]):
            end = starts[k + 1]
            if end <= self._prefix_end:
                continue  # folded on an earlier call
            dealt_at = _deal_index(events, start, end)
            self._fold_prefix(events, dealt_at, {})
            hidden = hidden_info(events, self.viewer, start, _traits(prefix), end)
            hands = sample_hands(hidden, lambda _k: 0)
            dealt = tuple(hands[s] | hidden.spent[s] for s in range(len(hands)))
            self._fold_prefix(events, end, {hidden.round: dealt})
        self._fold_prefix(events, deal_at, {})

    def _fold_prefix(
        self, events: Sequence[Event], stop: int, deals: Mapping[int, tuple[int, ...]]
    ) -> None:
        assert self._prefix is not None
        if stop > self._prefix_end:
            _fold(self._prefix, events, self._prefix_end, stop, deals, self._expected)
            self._prefix_end = stop

    def build(self, hands: Sequence[int]) -> Match:
        """The match now, with the current hands ``hands`` (as :func:`sample_hands` gives).

        Raises :class:`InconsistentDeal` if the hands do not replay the seat's log.
        """
        assert self._prefix is not None and self.hidden is not None
        hidden = self.hidden
        dealt = tuple(hands[s] | hidden.spent[s] for s in range(len(hands)))
        match = fork(self._prefix)
        expected = deque(self._expected)
        _fold(
            match,
            self._events,
            self._prefix_end,
            len(self._events),
            {hidden.round: dealt},
            expected,
        )
        if expected:
            raise InconsistentDeal(f"the rules go on with {expected[0]!r} where the log stops")
        return match

    def sample(self, uniform: Uniform, *, to_act: int | None = None) -> Match:
        """A full state consistent with the log read by :meth:`update` and, if given, with
        whose turn it is (``to_act``).

        The pool's constraints (sizes, voids, forced passes) leave out what the turn itself
        says, which the rules may make depend on the hands: the holder of Crazy Sixes' 6O
        starts its first hand, and a seat asked to act where passes are forced holds a card
        it may play. A sample that breaks either is drawn again, which keeps the draw
        uniform among the deals that fit; :class:`InconsistentDeal` after
        :data:`SAMPLE_TRIES` draws that do not."""
        assert self.hidden is not None
        why = f"seat {to_act} is not to act"
        for _ in range(SAMPLE_TRIES):
            try:
                match = self.build(sample_hands(self.hidden, uniform))
            except InconsistentDeal as error:
                why = str(error)
                continue
            if to_act is None or match.to_act == to_act:
                return match
        raise InconsistentDeal(f"no deal in {SAMPLE_TRIES} samples fits the log: {why}")


def _deal_index(events: Sequence[Event], start: int, stop: int) -> int:
    return next((i for i in range(start, stop) if isinstance(events[i], Dealt)), -1)


def _traits(match: Match) -> RoundTraits:
    """The traits of the round ``match`` is in: the engine's own, as its rules play it."""
    assert match.plan is not None
    return match.plan.traits


def determinize(
    events: Sequence[Event], viewer: int, uniform: Uniform, *, to_act: int | None = None
) -> Match:
    """One full state, now, consistent with ``viewer``'s projected log ``events`` (and with
    ``to_act`` to act, if given: :meth:`Determinizer.sample`)."""
    determinizer = Determinizer(viewer)
    determinizer.update(events)
    return determinizer.sample(uniform, to_act=to_act)


def _fold(
    match: Match,
    events: Sequence[Event],
    start: int,
    stop: int,
    deals: Mapping[int, tuple[int, ...]],
    expected: deque[Event],
) -> None:
    """Feed ``events[start:stop]`` (a seat's projection) to ``match``, checking that the
    rules produce the same events; deals come from ``deals`` by round. ``expected`` holds
    produced events not yet matched against the log, and is left holding the rest."""
    i = start
    while i < stop:
        event = events[i]
        if expected:
            produced = expected.popleft()
            if not _same(produced, event):
                raise InconsistentDeal(f"event {i}: the log has {event!r}, the rules {produced!r}")
            i += 1
            continue
        try:
            if isinstance(event, DealerDrawn | TrumpDrawn):
                out = match.resolve(event)
            elif isinstance(event, Dealt):
                hands = deals.get(event.round)
                if hands is None:
                    raise InconsistentDeal(f"event {i}: no deal given for round {event.round}")
                out = match.resolve(
                    Dealt(event.round, tuple(CardSet(h) for h in hands), event.hand_sizes)
                )
            else:
                # In a round with voluntary passes every pass is the seat's action, a forced
                # one too, whether the log shows ``forced`` (a full log) or hides it.
                recorded = match.recorded_action(event)
                if recorded is None:
                    raise InconsistentDeal(f"event {i}: the rules do not produce {event!r}")
                out = match.apply(*recorded)
        except InconsistentDeal:
            raise
        except Exception as error:  # an engine refusal: the sample does not fit the log
            raise InconsistentDeal(f"event {i}: {error}") from error
        expected.extend(out)


def _same(produced: Event, recorded: Event) -> bool:
    """Equal, up to what a projection hides: other hands in a deal, a pass's ``forced``."""
    if isinstance(produced, Dealt) and isinstance(recorded, Dealt):
        return produced.round == recorded.round and produced.hand_sizes == recorded.hand_sizes
    if isinstance(produced, Passed) and isinstance(recorded, Passed):
        return produced.seat == recorded.seat and recorded.forced in (None, produced.forced)
    return produced == recorded
