"""A rule-based player that knows what each round type rewards.

Why rules at all: they are the cheap, readable baseline a search bot has to beat, and the
same mask-level decisions (``trick_card``, ``fan_tan_choice``, ``sixes_choice``) double as the
fast default policy of the Monte Carlo bot's playouts, where every hand is known.

Every decision reads only card masks, so it takes two kinds of "rival" knowledge alike:
``others`` is the cards the rivals may hold (a seat's ``unseen`` cards for :class:`RuleBot`,
the union of the other hands in a playout). Ties break on card id: the bot is deterministic.

What a round rewards is read from its traits (``SeatState.traits``, from the engine's
registry), never from its name: the cards a trick costs (``TrickScoring.card_points``),
whether tricks pay (``per_trick``) or feats decide (``feats``), and which layout strategy fits
(``Layout.jumps``: a layout whose cards may jump gaps, killing what they jump, is Crazy Sixes').
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, NamedTuple

from cardarena.engine.actions import CHOOSE_TRUMP, EXCLUDE, PASS
from cardarena.engine.cards import JOKER_MASK, SPANISH_BASE, SUIT_MASKS, cards_of
from cardarena.engine.fantan import fan_tan_card, fan_tan_rank
from cardarena.engine.games import kind_scoring
from cardarena.engine.traits import NO_SCORING, TrickScoring
from cardarena.engine.tricks import winning_card

from .state import SeatState

QUEENS_MASK: Final = sum(1 << (suit * 13 + 10) for suit in range(4))
QUEEN_OF_HEARTS: Final = 2 * 13 + 10

Scoring = TrickScoring | str
"""A trick round's scoring, or the name of a kind of round (its scoring with default options)."""


def scoring_of(kind: Scoring) -> TrickScoring:
    """``kind`` as a :class:`TrickScoring`: itself, or a kind's from the registry."""
    if isinstance(kind, TrickScoring):
        return kind
    return kind_scoring(kind) or NO_SCORING


def penalty(kind: Scoring, card: int) -> int:
    """What taking ``card`` costs in a round that scores so (the trick itself aside)."""
    points = scoring_of(kind).card_points
    return points[card] if card < len(points) else 0


def grabs(kind: Scoring) -> bool:
    """Whether a round's tricks are worth taking: they pay -1 each (lowest total wins)."""
    return scoring_of(kind).per_trick < 0


def suit_of_card(card: int) -> int:
    """French suit 0..3, or 8 for a Joker (Triathlon)."""
    return 8 if card >= 52 else card // 13


def higher_in_suit(card: int, mask: int) -> int:
    """The cards of ``mask`` in ``card``'s suit that rank above it (ids grow with rank)."""
    suit = SUIT_MASKS[card // 13]
    return mask & suit & ~((2 << card) - 1)


def lower_in_suit(card: int, mask: int) -> int:
    suit = SUIT_MASKS[card // 13]
    return mask & suit & ((1 << card) - 1)


def would_win(trick: Sequence[int], card: int, trump: int) -> bool:
    """Would ``card`` win ``trick`` (cards in play order) if the trick ended now?"""
    if not trick:
        return True
    taken = 1 << card
    for c in trick:
        taken |= 1 << c
    return winning_card(taken, trick[0], trump) == card


def trick_card(
    kind: Scoring,
    hand: int,
    legal: Sequence[int],
    trick: Sequence[int],
    players: int,
    trump: int,
    others: int,
    *,
    grab: bool | None = None,
) -> int:
    """The rule choice in a trick round; ``grab`` overrides whether tricks are wanted.

    Dodging (pass, clubs, queens, finale): play the highest card that still loses the trick
    (penalty cards first, to dump them on a rival), else the lowest; when void, shed the
    costliest card, then the highest. Grabbing (grand, trumps): lead a card nobody can beat,
    else win as cheaply as possible (the lowest winning card, the lowest trump that ruffs);
    when the trick cannot be won, throw the lowest card.
    """
    if len(legal) == 1:
        return legal[0]
    scoring = scoring_of(kind)
    want = grabs(scoring) if grab is None else grab
    play = _Play(hand, legal, trick, players, trump, others)
    return _grab(play) if want else _dodge(scoring, play)


def _rank(card: int) -> int:
    return -1 if card >= 52 else card % 13


class _Play(NamedTuple):
    """What a trick decision reads, the same for dodging and grabbing: the seat's ``hand``
    (a mask), its ``legal`` cards, the ``trick`` so far in play order, the table's number of
    ``players``, the ``trump`` suit (-1: none) and the cards the rivals may hold (``others``).
    A tuple, not a frozen dataclass: made once per decision of every playout, it is the
    cheapest immutable record."""

    hand: int
    legal: Sequence[int]
    trick: Sequence[int]
    players: int
    trump: int
    others: int


def _dodge(kind: TrickScoring, play: _Play) -> int:
    legal, trick, trump, others = play.legal, play.trick, play.trump, play.others
    if not trick:
        return min(legal, key=lambda c: _lead_risk(kind, c, play.hand, trump, others))
    losers = [c for c in legal if not would_win(trick, c, trump)]
    if losers:
        # Dump the costliest loser on the rival who takes this trick, else the highest.
        return max(losers, key=lambda c: (penalty(kind, c), _rank(c), c))
    last = len(trick) == play.players - 1
    safe_above = [c for c in legal if not higher_in_suit(c, others)]
    if last or len(safe_above) == len(legal):
        # This trick is ours whatever we play: shed the highest card that costs nothing.
        return max(legal, key=lambda c: (-penalty(kind, c), _rank(c), c))
    return min(legal, key=lambda c: (penalty(kind, c), _rank(c), c))


def _lead_risk(
    kind: TrickScoring, card: int, hand: int, trump: int, others: int
) -> tuple[int, int]:
    """How likely leading ``card`` is to win the trick (and what it would cost), lower is safer."""
    if card >= 52:
        return (1000, 0)  # a led Joker wins the trick
    suit = SUIT_MASKS[card // 13]
    rivals_in_suit = others & suit
    below = lower_in_suit(card, others).bit_count()
    above = higher_in_suit(card, others).bit_count()
    risk = 0
    if not rivals_in_suit:
        risk += 500  # nobody can follow: the trick is ours
    elif not above:
        risk += 200  # nothing out there beats it
    risk += below * 10 + penalty(kind, card) * (5 if above else 60)
    if trump >= 0 and card // 13 == trump:
        risk += 50
    if (1 << card) & QUEENS_MASK and penalty(kind, QUEEN_OF_HEARTS) and above:
        risk -= 40  # where queens cost, a queen led under an outstanding king or ace is given away
    return (risk, _rank(card))


def _grab(play: _Play) -> int:
    legal, trick, trump, others = play.legal, play.trick, play.trump, play.others
    if not trick:
        masters = [c for c in legal if c < 52 and not higher_in_suit(c, others)]
        plain = [c for c in masters if c // 13 != trump]
        if plain or masters:
            pool = plain or masters
            # Lead the master of the suit the rivals hold most of: they must follow.
            return max(pool, key=lambda c: ((others & SUIT_MASKS[c // 13]).bit_count(), -c))
        jokers = [c for c in legal if c >= 52]
        if jokers:
            return jokers[0]
        return min(legal, key=lambda c: (_rank(c), c))
    winners = [c for c in legal if would_win(trick, c, trump)]
    if not winners:
        return min(legal, key=lambda c: (_is_trump(c, trump), _rank(c), c))
    last = len(trick) == play.players - 1
    if not last:
        sure = [c for c in winners if not higher_in_suit(c, others)]
        if sure:
            return min(sure, key=lambda c: (_is_trump(c, trump), _rank(c), c))
    return min(winners, key=lambda c: (_is_trump(c, trump), _rank(c), c))


def _is_trump(card: int, trump: int) -> bool:
    return trump >= 0 and card < 52 and card // 13 == trump


def _best_card(legal: Sequence[int], value: Callable[[int], float]) -> int:
    """The legal card of highest ``value`` (the lowest id on a tie); a pass only when no card
    is legal, and no valuing at all when one card is."""
    cards = [c for c in legal if c != PASS]
    if not cards:
        return PASS
    if len(cards) == 1:
        return cards[0]
    return max(cards, key=lambda c: (value(c), -c))


# -- Fan Tan ---------------------------------------------------------------------------


def fan_tan_choice(hand: int, legal: Sequence[int], others: int, *, six_and_seven: bool) -> int:
    """Block the rivals: play the card that frees the most of one's own cards and opens the
    fewest of theirs; never pass voluntarily (a pass costs as much as a card kept).

    For each candidate, the run "beyond" it is the rest of its suit in the direction it grows
    (down from a low card or a low-stack six, up from a high card or a seven; a plain seven
    grows both ways). Own cards beyond it need it played; rival cards beyond it are helped by
    it, most of all when the very next card is not ours.
    """
    return _best_card(legal, lambda c: _fan_tan_value(c, hand, others, six_and_seven))


def _fan_tan_value(card: int, hand: int, others: int, six_and_seven: bool) -> float:
    suit, rank = card // 13, fan_tan_rank(card)
    if six_and_seven:
        directions = [-1] if rank <= 6 else [1]
    else:
        directions = [-1, 1] if rank == 7 else ([-1] if rank < 7 else [1])
    value = 0.0
    for step in directions:
        mine = theirs = 0
        r = rank + step
        next_is_mine = False
        while 1 <= r <= 13:
            bit = 1 << fan_tan_card(suit, r)
            if hand & bit:
                mine += 1
                if r == rank + step:
                    next_is_mine = True
            elif others & bit:
                theirs += 1
            r += step
        value += 2.0 * mine - theirs * (0.4 if next_is_mine else 1.0)
    return value


# -- Crazy Sixes -----------------------------------------------------------------------


def sixes_ends(table: int, suit_index: int) -> tuple[int, int]:
    """The lowest and highest rank of a Spanish suit on the table (0, 0 when unopened)."""
    cards = table >> (SPANISH_BASE + 12 * suit_index) & 0xFFF
    if not cards:
        return 0, 0
    return (cards & -cards).bit_length(), cards.bit_length()


def _ranks(suit_index: int, low: int, high: int) -> int:
    """Cards of the suit with ``low <= rank <= high`` (empty when low > high)."""
    if low > high:
        return 0
    return ((1 << (high - low + 1)) - 1) << (SPANISH_BASE + 12 * suit_index + low - 1)


def sixes_choice(hand: int, legal: Sequence[int], others: int, table: int) -> int:
    """Kill the rivals' cards, not one's own: every card jumped over dies in its holder's hand.

    Open suits one is long in; play the card whose jump kills the most rival cards and the
    fewest of one's own; keep aces and kings (which nothing can kill) for later.
    """
    return _best_card(legal, lambda c: _sixes_value(c, hand, others, table))


def _sixes_value(card: int, hand: int, others: int, table: int) -> float:
    offset = card - SPANISH_BASE
    suit_index, rank = offset // 12, offset % 12 + 1
    low, high = sixes_ends(table, suit_index)
    suit = SUIT_MASKS[4 + suit_index]
    if low == 0:  # opening the suit with its six
        return 0.6 * (hand & suit).bit_count() - 0.3 * (others & suit).bit_count()
    zone = (
        _ranks(suit_index, rank + 1, low - 1)
        if rank < low
        else _ranks(suit_index, high + 1, rank - 1)
    )
    killed_mine = (hand & zone).bit_count()
    killed_theirs = (others & zone).bit_count()
    value = killed_theirs - 1.6 * killed_mine
    if rank in (1, 12):
        value -= 0.5  # nothing can kill it: it can wait
    return value


# -- Triathlon -------------------------------------------------------------------------


def suit_strength(hand: int, suit: int) -> int:
    """Length counts double; honours add A 4, K 3, Q 2, J 1 (French ids: J=9 … A=12)."""
    cards = hand & SUIT_MASKS[suit]
    honours = sum(max(0, (c % 13) - 8) for c in cards_of(cards))
    return 2 * cards.bit_count() + honours


def auction_action(hand: int, legal: Sequence[int]) -> int:
    """Exclude one's weakest open suit; as the dealer, choose the strongest as trump."""
    if legal[0] >= CHOOSE_TRUMP:
        return max(legal, key=lambda a: (suit_strength(hand, a - CHOOSE_TRUMP), -a))
    return min(legal, key=lambda a: (suit_strength(hand, a - EXCLUDE), a))


def triathlon_wants_trick(tricks: int, tricks_left: int) -> bool:
    """Aim at the nearest reachable multiple of three; want the last trick whatever."""
    if tricks_left <= 1:
        return True
    target = max(3, -(-tricks // 3) * 3)
    if target - tricks > tricks_left:
        return False
    return tricks < target


# -- the bot ---------------------------------------------------------------------------


class RuleBot:
    """Plays by the rules of thumb above, from :class:`SeatState` alone; deterministic."""

    name = "rules"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed  # kept for the runner's interface: the rules need no chance

    def choose(self, state: SeatState) -> int:
        legal = state.legal
        if len(legal) == 1:
            return legal[0]
        traits = state.traits
        layout = traits.layout
        if layout is not None:
            if layout.jumps:
                return sixes_choice(state.hand, legal, state.unseen, state.table)
            return fan_tan_choice(
                state.hand, legal, state.unseen, six_and_seven=layout.six_and_seven
            )
        if legal[0] >= EXCLUDE:
            return auction_action(state.hand, legal)
        trick = [card for _, card in state.trick]
        trump = -1 if state.trump is None else state.trump
        others = state.unseen & ~JOKER_MASK
        scoring = traits.scoring or NO_SCORING
        grab: bool | None = None
        if scoring.feats:
            tricks_left = 13 - sum(state.tricks_won)  # the trick in play included
            grab = triathlon_wants_trick(state.tricks_won[state.seat], tricks_left)
        return trick_card(
            scoring, state.hand, legal, trick, state.players, trump, others, grab=grab
        )
