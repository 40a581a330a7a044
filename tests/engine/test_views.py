"""Views and projected logs: what each reader may see (ARCHITECTURE.md "Views", RULES.md).

The hard way: at random points of random matches of every game, re-deal the cards a seat
cannot see among the other seats (``Match.with_hidden_hands``) and check that the seat's view
does not change. A spectator sees no hand at all; an auditor sees everything. Projected logs
show a seat only its own deal, and hide whether a pass was forced where passing is voluntary.
Seats and spectators see Triathlon's Jokers under their own numbers, restated here from
docs/rules.md (:func:`names_known`), never the engine's.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from hypothesis import HealthCheck, settings

from cardarena.engine import AUDITOR, SPECTATOR, Match, legal_actions_for, project_log, view
from cardarena.engine.cards import JOKERS, CardSet
from cardarena.engine.events import CardPlayed, Dealt, Event, Passed, RoundStarted, TrickWon
from cardarena.engine.views import TableView, Viewer

from .properties_support import (
    CUSTOM_PENTATHLON,
    MAX_STEPS,
    PLAIN_NORWEGIAN,
    VOLUNTARY_PASS_RANDOM_DEALER,
    Config,
    choose,
    over_random_matches,
    play_random,
)
from .rules_model import RulesModel
from .rules_reference import cards_in, mask

FAN_TAN_ONLY = [
    Config(
        "pentathlon",
        4,
        {"rounds": ["fan_tan", {"type": "fan_tan", "voluntary_pass": True}]},
        name="fan_tan_only,voluntary_pass",
    ),
    Config(
        "hexathlon",
        3,
        {
            "rounds": [{"type": "fan_tan", "voluntary_pass": True}, "fan_tan"],
            "first_dealer": "random",
        },
        name="fan_tan_only,voluntary_pass,first_dealer=random",
    ),
    Config(
        "heptathlon",
        5,
        {
            "rounds": [
                "fan_tan",
                {"type": "fan_tan", "openers": "six_and_seven", "voluntary_pass": True},
            ]
        },
        name="fan_tan_only,six_and_seven,voluntary_pass",
    ),
]
VIEW_CONFIGS = [
    *PLAIN_NORWEGIAN,
    VOLUNTARY_PASS_RANDOM_DEALER,
    CUSTOM_PENTATHLON,
    *FAN_TAN_ONLY,
    Config("crazy_sixes", 3),
    Config("crazy_sixes", 4, {"deck": 40, "first_dealer": "random"}),
    Config("triathlon", 3),
    Config(
        "triathlon", 3, {"end": "triathlon_in_one_deal", "max_deals": 3, "first_dealer": "random"}
    ),
]
POINTS = 4
"""Random points per match for the differential test, besides the first and the last."""

SETTINGS = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def walk(
    config: Config, seed: bytes, rng_seed: int, points: int
) -> Iterator[tuple[Match, RulesModel]]:
    """Play a random match, then play it again and stop at ``points`` random steps (and at
    the first and the last), yielding the match and the rules model following its log."""
    actions = play_random(config.new(seed), random.Random(rng_seed))
    picks = random.Random(rng_seed).sample(range(1, len(actions)), min(points, len(actions) - 1))
    stops = {0, len(actions), *picks}
    match = config.new(seed)
    model = RulesModel(config, seed)
    for step in range(len(actions) + 1):
        if step in stops:
            model.feed_all(match.log)
            yield match, model
        if step < len(actions):
            match.apply(*actions[step])
    assert match.over


def redeal(rng: random.Random, hands: Sequence[int], viewer: int | None) -> tuple[int, ...]:
    """The cards ``viewer`` cannot see, shuffled among the other seats; every size kept."""
    hidden = [s for s in range(len(hands)) if s != viewer]
    pool = [c for s in hidden for c in cards_in(hands[s])]
    rng.shuffle(pool)
    out = list(hands)
    start = 0
    for s in hidden:
        size = hands[s].bit_count()
        out[s] = mask(pool[start : start + size])
        start += size
    return tuple(out)


class NamesKnown:
    """docs/rules.md's numbering of the Jokers, restated: a reader numbers its own dealt
    Jokers JK1.. in the engine's order, then each other Joker as it is played; a spectator
    every Joker as it is played; an auditor keeps the engine's numbers."""

    def __init__(self, viewer: Viewer) -> None:
        self.viewer = viewer
        self.names: dict[int, int] = {}

    def follow(self, event: Event) -> None:
        if self.viewer == AUDITOR:
            return
        if isinstance(event, RoundStarted):
            self.names = {}
        elif isinstance(event, Dealt) and isinstance(self.viewer, int):
            own = event.hands[self.viewer]
            assert own is not None
            for card in sorted(set(cards_in(own.mask)) & set(JOKERS)):
                self.names[card] = JOKERS[len(self.names)]
        elif (
            isinstance(event, CardPlayed) and event.card in JOKERS and event.card not in self.names
        ):
            self.names[event.card] = JOKERS[len(self.names)]

    def card(self, card: int) -> int:
        return self.names.get(card, card)

    def cards(self, cards: Sequence[int]) -> tuple[int, ...]:
        return tuple(self.card(c) for c in cards)

    def mask(self, cards: int) -> int:
        return mask([self.card(c) for c in cards_in(cards)])


def names_known(log: Sequence[Event], viewer: Viewer) -> NamesKnown:
    known = NamesKnown(viewer)
    for event in log:
        known.follow(event)
    return known


def viewers(players: int) -> list[Viewer]:
    return [*range(players), SPECTATOR, AUDITOR]


def check_public_fields(match: Match, model: RulesModel, spectator: TableView) -> None:
    """What everybody sees agrees with the log (as followed by the rules model)."""
    named = names_known(match.log, SPECTATOR)
    assert spectator.to_act == match.to_act
    assert spectator.over == match.over and spectator.winners == match.winners
    assert spectator.totals == tuple(model.totals)
    assert spectator.round_scores == tuple(model.round_scores)
    r = model.round
    if r is None:
        return
    assert (spectator.round, spectator.kind, spectator.dealer) == (r.index, r.kind, r.dealer)
    assert spectator.trump == r.trump
    assert spectator.hand_sizes == tuple(h.bit_count() for h in r.hands)
    if r.tricky:
        assert spectator.trick == named.cards(r.trick)
        assert spectator.tricks_won == tuple(r.tricks)
        assert spectator.taken == tuple(CardSet(named.mask(t)) for t in r.taken)
        assert spectator.excluded_suits == tuple(r.excluded)
        assert spectator.trick_leader == (r.leader if match.to_act is not None else None)
    else:
        assert spectator.table == CardSet(r.table)
    if r.kind == "fan_tan":
        assert spectator.passes == tuple(r.passes)
    if r.kind == "hand":
        assert spectator.dead == tuple(CardSet(d) for d in r.dead)
        assert spectator.placed == tuple(r.placed)


def check_views_at(match: Match, model: RulesModel, rng: random.Random) -> bool:
    """Every reader's view now, and the differential check; True if a re-deal changed hands."""
    rnd = match.round
    assert rnd is not None
    n = match.players
    hands = tuple(rnd.hands)
    to_act = match.to_act
    legal = tuple(match.legal_actions())
    changed = False

    spectator = view(match, SPECTATOR)
    assert spectator.hands == (None,) * n, "a spectator sees no hand"
    assert spectator.legal_actions == ()
    check_public_fields(match, model, spectator)
    everyone = match.with_hidden_hands(None, redeal(rng, hands, None))
    assert view(everyone, SPECTATOR) == spectator, "a spectator's view depends on hidden cards"

    auditor = view(match, AUDITOR)
    assert auditor.hands == tuple(CardSet(h) for h in hands), "an auditor sees every hand"
    assert auditor.legal_actions == ()
    assert everyone.round is not None
    assert view(everyone, AUDITOR).hands == tuple(CardSet(h) for h in everyone.round.hands)

    for seat in range(n):
        mine = view(match, seat)
        named = names_known(match.log, seat)
        assert mine.hands == tuple(
            CardSet(named.mask(h)) if s == seat else None for s, h in enumerate(hands)
        )
        assert mine.hand_sizes == tuple(h.bit_count() for h in hands)
        # (c) legal actions: the seat to act sees exactly match.legal_actions() (its Jokers
        # under its numbers), nobody else any.
        assert mine.legal_actions == (named.cards(legal) if seat == to_act else ())
        other_hands = redeal(rng, hands, seat)
        changed |= other_hands != hands
        alt = match.with_hidden_hands(seat, other_hands)
        assert alt.round is not None and tuple(alt.round.hands) == other_hands
        theirs = view(alt, seat)
        if seat != to_act:
            assert mine.legal_actions == theirs.legal_actions == ()
        assert theirs == mine, f"seat {seat}'s view depends on cards it cannot see"
    return changed


@over_random_matches(VIEW_CONFIGS, SETTINGS)
def test_views_do_not_depend_on_hidden_cards(config: Config, seed: bytes, rng_seed: int) -> None:
    """(a) Differential test at random points (and the first and the last): re-dealing the
    cards a seat cannot see leaves its view unchanged; a spectator sees no hand (and nothing
    that depends on any), an auditor every hand; the public fields agree with the log; (c) the
    seat to act's view lists its legal actions, nobody else's any."""
    rng = random.Random(rng_seed ^ 0x5EED)
    changed = False
    for match, model in walk(config, seed, rng_seed, POINTS):
        changed |= check_views_at(match, model, rng)
    assert changed, "no re-deal ever changed a hand: the differential test checked nothing"


@over_random_matches(VIEW_CONFIGS, SETTINGS)
def test_seat_view_legal_actions(config: Config, seed: bytes, rng_seed: int) -> None:
    """(c) At every step, the view of the seat to act lists exactly match.legal_actions();
    every other seat, the spectator and the auditor see none."""
    rng = random.Random(rng_seed)
    match = config.new(seed)
    steps = 0
    while not match.over:
        steps += 1
        assert steps <= MAX_STEPS
        seat = match.to_act
        assert seat is not None
        legal = match.legal_actions()
        offered = legal_actions_for(match, seat)
        assert view(match, seat).legal_actions == tuple(offered)
        assert offered == list(names_known(match.log, seat).cards(legal))
        other = rng.choice([v for v in viewers(config.players) if v != seat])
        assert view(match, other).legal_actions == ()
        match.apply(seat, choose(rng, legal))
    assert all(view(match, v).legal_actions == () for v in viewers(config.players))


@over_random_matches(VIEW_CONFIGS, SETTINGS)
def test_projected_logs(config: Config, seed: bytes, rng_seed: int) -> None:
    """(b) project_log: a seat's Dealt events show only its own hand, a spectator's none, an
    auditor's all (the auditor's log is the log); in a round with voluntary passes a Passed
    event's ``forced`` is None for everybody but the auditor; nothing else changes."""
    match = config.new(seed)
    play_random(match, random.Random(rng_seed))
    log = match.log
    voluntary_passes = 0
    for viewer in viewers(config.players):
        projected = project_log(log, viewer)
        assert len(projected) == len(log)
        if viewer == AUDITOR:
            assert projected == log
            continue
        voluntary = False
        named = NamesKnown(viewer)
        for original, seen in zip(log, projected, strict=True):
            named.follow(original)
            if isinstance(original, RoundStarted):
                voluntary = original.voluntary_pass
            if isinstance(original, Dealt):
                assert isinstance(seen, Dealt)
                assert (seen.round, seen.hand_sizes) == (original.round, original.hand_sizes)
                assert seen.hands == tuple(
                    CardSet(named.mask(h.mask)) if s == viewer and h is not None else None
                    for s, h in enumerate(original.hands)
                ), f"{viewer!r} sees a hand that is not its own"
            elif isinstance(original, CardPlayed):
                assert seen == CardPlayed(original.seat, named.card(original.card))
            elif isinstance(original, TrickWon):
                assert seen == TrickWon(
                    original.trick, original.leader, named.cards(original.cards), original.seat
                )
            elif isinstance(original, Passed) and voluntary:
                assert seen == Passed(original.seat, None), "forced would tell who could play"
                voluntary_passes += 1
            else:
                assert seen == original
    round_kinds = [e for e in log if isinstance(e, RoundStarted)]
    if any(e.voluntary_pass for e in round_kinds):
        assert voluntary_passes > 0, "a voluntary-pass round with no pass checked nothing"
    assert all(not e.voluntary_pass or e.kind == "fan_tan" for e in round_kinds)


@over_random_matches(VIEW_CONFIGS, SETTINGS)
def test_hidden_hands_copy_has_its_own_legal_actions(
    config: Config, seed: bytes, rng_seed: int
) -> None:
    """A copy from with_hidden_hands is a match of its own (Monte Carlo players play it out):
    when the seat to act is not the viewer, the copy's legal actions are the ones RULES.md
    gives for the copy's hands, not the real hidden hand's, even when the real match has
    already been asked for its legal actions."""
    rng = random.Random(rng_seed ^ 0x5EED)
    for match, model in walk(config, seed, rng_seed, 2 * POINTS):
        seat, r = match.to_act, model.round
        if seat is None or r is None or (not r.tricky and r.last_turn is None):
            continue  # nobody to act, or the opener (7H / 6O), whose seat is public
        match.legal_actions()  # what any client asks first
        viewer = rng.choice([s for s in range(config.players) if s != seat])
        alt = match.with_hidden_hands(viewer, redeal(rng, r.hands, viewer))
        assert alt.round is not None
        real_hands = r.hands
        r.hands = list(alt.round.hands)
        try:
            expected = sorted(model.legal(seat))
        finally:
            r.hands = real_hands
        assert alt.legal_actions() == expected, (
            f"seat {seat} in the copy: legal {alt.legal_actions()}, its hand gives {expected}"
        )
