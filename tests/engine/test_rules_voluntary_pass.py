"""RULES.md "Forced pass" and §1.6 ``fan_tan.voluntary_pass``: where a seat may pass while able
to play, a seat that cannot play is asked like any other and passes itself.

Nobody may tell a forced pass from a chosen one there, by content (the views hide ``forced``),
grouping (the pass is never among another seat's events) or timing (the seat is asked, so it
takes its own time). The full log still says the pass was forced. Elsewhere a forced pass is
applied automatically, as before.
"""

from __future__ import annotations

import random
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardarena.engine import (
    GAMES,
    PASS,
    SPECTATOR,
    Match,
    Projector,
    ReplayError,
    replay,
    setup,
    view,
)
from cardarena.engine.cards import CardSet, parse_card, parse_cards
from cardarena.engine.determinize import Determinizer, sample_hands
from cardarena.engine.events import (
    CardPlayed,
    Dealt,
    Event,
    MatchStarted,
    Passed,
    RoundScored,
    RoundStarted,
)
from cardarena.engine.fairdeal import commitment
from cardarena.engine.match import ActionReader, action_of

# Three seats, dealer 0, so seat 1 gets the 18th card. After the opening 7H (seat 0) the
# playable cards are 6H 8H 7C 7D 7S: seat 1 holds none of them, seat 2 holds 7C 7D 7S.
DEAL = (
    "2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH 2C 3C 4C 5C",
    "8C 9C 10C JC QC KC AC 8D 9D 10D JD QD KD AD 8S 9S 10S JS",
    "6C 7C 2D 3D 4D 5D 6D 7D 2S 3S 4S 5S 6S 7S QS KS AS",
)


def cards(codes: str) -> list[int]:
    return [parse_card(c) for c in codes.split()]


def dealt_match(*, voluntary_pass: bool) -> Match:
    """A one-round Fan Tan match of three dealt ``DEAL`` (no seed: the deal comes from here)."""
    options = {"rounds": ["fan_tan"], "fan_tan": {"voluntary_pass": voluntary_pass}}
    config = setup("pentathlon", players=3, options=options)
    match = Match.from_start(MatchStarted(config.game, 3, config.options, commitment(bytes(32))))
    hands = tuple(CardSet.parse(h) for h in DEAL)
    match.resolve(Dealt(0, hands, tuple(len(h) for h in hands)))
    return match


def test_a_seat_that_cannot_play_is_asked_and_its_pass_looks_like_a_chosen_one() -> None:
    match = dealt_match(voluntary_pass=True)
    assert match.to_act == 0 and match.legal_actions() == [parse_card("7H")]
    # The opening returns the card alone: seat 1's pass is not applied along with it.
    assert match.apply(0, parse_card("7H")) == [CardPlayed(0, parse_card("7H"))]
    assert not match.hands[1] & parse_cards("6H 8H 7C 7D 7S")
    assert match.to_act == 1 and match.legal_actions() == [PASS]
    assert view(match, 1).legal_actions == (PASS,)
    assert match.default_action() == PASS, "a timeout passes for it"
    assert match.apply(1, PASS) == [Passed(1, True)], "the full log says it was forced"
    assert match.to_act == 2 and match.legal_actions() == [*cards("7C 7D 7S"), PASS]
    assert match.apply(2, PASS) == [Passed(2, False)]
    forced, chosen = match.log[-2], match.log[-1]
    # Seats (the passer itself included) and spectators see the same event for either pass.
    for viewer in (0, 1, 2, SPECTATOR):
        projector = Projector(viewer)
        seen = [projector.project(e) for e in match.log]
        assert seen[-2:] == [Passed(1, None), Passed(2, None)]
    auditor = Projector("auditor")
    assert [auditor.project(e) for e in match.log][-2:] == [forced, chosen]
    # Both passes are actions of their seats, read in the context of their round.
    assert action_of(forced, voluntary_pass=True) == (1, PASS)
    assert action_of(forced) is None, "without the round's context a forced pass is derived"
    assert match.recorded_action(forced) == (1, PASS)
    assert match.recorded_action(chosen) == (2, PASS)
    assert replay(match.log).log == match.log


def test_forced_passes_count_in_succession_and_are_still_asked_after_it() -> None:
    """Pinned reading: forced and chosen passes alike make "every seat has passed in
    succession"; after that a seat that cannot play is asked (and passes), the next seat that
    can play must play."""
    match = dealt_match(voluntary_pass=True)
    match.apply(0, parse_card("7H"))
    assert match.apply(1, PASS) == [Passed(1, True)]
    assert match.apply(2, PASS) == [Passed(2, False)]
    assert match.apply(0, PASS) == [Passed(0, False)]  # three passes in succession
    assert match.to_act == 1 and match.legal_actions() == [PASS]
    assert match.apply(1, PASS) == [Passed(1, True)]
    assert match.to_act == 2 and match.legal_actions() == cards("7C 7D 7S")
    assert view(match, SPECTATOR).passes == (1, 2, 1)


def test_without_voluntary_passes_the_forced_pass_stays_automatic() -> None:
    match = dealt_match(voluntary_pass=False)
    assert match.apply(0, parse_card("7H")) == [CardPlayed(0, parse_card("7H")), Passed(1, True)]
    assert match.to_act == 2 and match.legal_actions() == cards("7C 7D 7S")
    assert action_of(match.log[-1]) is None and match.recorded_action(match.log[-1]) is None
    assert replay(match.log).log == match.log


def test_a_tampered_pass_reason_is_caught_on_replay() -> None:
    match = dealt_match(voluntary_pass=True)
    match.apply(0, parse_card("7H"))
    match.apply(1, PASS)
    match.apply(2, PASS)
    for index, lie in ((-2, Passed(1, False)), (-1, Passed(2, True))):
        log = list(match.log)
        log[index] = lie
        with pytest.raises(ReplayError, match=f"event {len(log) + index}"):
            replay(log)


def test_a_time_out_passes_whenever_the_pass_is_legal_even_for_a_seat_that_could_play() -> None:
    """The time-out default is the pass wherever the pass is legal, so a time-out tells nothing
    a chosen pass would not: seat 1 (no playable card), seat 2 (7C 7D 7S) and seat 0 (6H 8H)
    all pass by default, exactly as if each had chosen to, and every reader but the auditor
    sees the three passes alike. Once every seat has passed in succession the pass is legal
    only to a seat that cannot play, and the default of one that can is its lowest card."""
    match, chosen = dealt_match(voluntary_pass=True), dealt_match(voluntary_pass=True)
    assert match.default_action() == parse_card("7H"), "the opening is compulsory"
    for m in (match, chosen):
        m.apply(0, parse_card("7H"))
    holding = {1: [], 2: cards("7C 7D 7S"), 0: cards("6H 8H")}
    for seat, playable in holding.items():
        assert match.to_act == seat and match.legal_actions() == [*playable, PASS]
        assert match.default_action() == PASS, f"seat {seat} holds {playable}: still a pass"
        assert match.apply(seat, match.default_action()) == chosen.apply(seat, PASS)
    assert match.log[-3:] == [Passed(1, True), Passed(2, False), Passed(0, False)]
    assert match.log == chosen.log
    for viewer in (0, 1, 2, SPECTATOR):
        projector = Projector(viewer)
        seen = [projector.project(e) for e in match.log]
        assert seen[-3:] == [Passed(1, None), Passed(2, None), Passed(0, None)], viewer
    # Three passes in succession: seat 1 cannot play and passes; seat 2 can, so it must.
    assert match.legal_actions() == [PASS] and match.default_action() == PASS
    match.apply(1, PASS)
    assert match.legal_actions() == cards("7C 7D 7S")
    assert match.default_action() == parse_card("7C")


# -- random play ------------------------------------------------------------------------------

NORWEGIAN = [(g, n) for g in ("pentathlon", "hexathlon", "heptathlon") for n in GAMES[g].players]
VOLUNTARY: dict[str, Any] = {"fan_tan": {"voluntary_pass": True}}
SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_every_norwegian_game_and_player_count_is_covered() -> None:
    assert {
        g for g, spec in GAMES.items() if "fan_tan" in spec.options.describe()["properties"]
    } == {g for g, _ in NORWEGIAN}
    assert {n for _, n in NORWEGIAN} == {3, 4, 5}


@pytest.mark.parametrize(("game", "players"), NORWEGIAN)
@SETTINGS
@given(seed=st.binary(min_size=32, max_size=32), rng_seed=st.integers(0, 2**32 - 1))
def test_every_pass_of_a_voluntary_round_comes_from_its_own_seat(
    game: str, players: int, seed: bytes, rng_seed: int
) -> None:
    """Random play (a pass half the time it is allowed): in a voluntary-pass round each pass
    is returned by the ``apply`` of the seat that passed, as the only pass there; it is forced
    exactly when the seat's one legal action was the pass; ``ActionReader`` reads the log's
    actions back as played; replay, with and without the seed, agrees."""
    _play_voluntary(game, players, seed, rng_seed)


@pytest.mark.parametrize(("game", "players"), NORWEGIAN)
def test_random_play_does_meet_forced_passes(game: str, players: int) -> None:
    """The property above checks forced passes only where random play meets them (not every
    example does: a seed whose Fan Tan never leaves a seat without a card to play is no
    failure); these fixed seeds make sure every game and player count meets some."""
    forced = sum(_play_voluntary(game, players, bytes([k]) * 32, k) for k in range(4))
    assert forced, "no seat was ever asked to make a forced pass: nothing was checked"


def _play_voluntary(game: str, players: int, seed: bytes, rng_seed: int) -> int:
    """One random match under the property's checks; the forced passes it asked for."""
    rng = random.Random(rng_seed)
    match = setup(game, players=players, options=VOLUNTARY).start(seed)
    played: list[tuple[int, int]] = []
    forced_passes = 0
    while not match.over:
        seat = match.to_act
        assert seat is not None and match.plan is not None
        voluntary = match.plan.voluntary_pass
        legal = match.legal_actions()
        pass_now = PASS in legal and (len(legal) == 1 or rng.random() < 0.5)
        action = PASS if pass_now else rng.choice([a for a in legal if a != PASS])
        assert match.default_action() == (PASS if PASS in legal else min(legal))
        events = match.apply(seat, action)
        played.append((seat, action))
        if voluntary:
            passes = [e for e in _this_round(events) if isinstance(e, Passed)]
            if action == PASS:
                assert passes == [Passed(seat, legal == [PASS])] and events[0] == passes[0]
                forced_passes += legal == [PASS]
            else:
                assert passes == [], f"seat {seat}'s card came with {passes}"
    read = ActionReader()
    assert [a for a in map(read, match.log) if a is not None] == played
    for again in (replay(match.log), replay(match.log, seed=seed)):
        assert again.log == match.log and again.totals == match.totals
    return forced_passes


def _this_round(events: list[Event]) -> list[Event]:
    """``events`` up to the end of the round they begin in."""
    end = next((i for i, e in enumerate(events) if isinstance(e, RoundScored)), len(events))
    return events[:end]


def test_determinized_samples_all_replay_a_voluntary_round() -> None:
    """A seat's rebuilt states fit its log whatever the rivals were dealt: a rival's pass
    there never says whether it could play, so no sample contradicts one."""
    match = setup("pentathlon", players=4, options={"rounds": ["fan_tan"], **VOLUNTARY}).start(
        bytes(range(32))
    )
    rng = random.Random(5)
    determinizer = Determinizer(0)
    projector = Projector(0)
    seen: list[Event] = []
    built = 0
    while not match.over:
        seen.extend(projector.project(e) for e in match.log[len(seen) :])
        seat = match.to_act
        assert seat is not None
        if seat == 0 and any(isinstance(e, Passed) for e in seen):
            hidden = determinizer.update(seen)
            for _ in range(5):
                sample = determinizer.build(sample_hands(hidden, rng.randrange))
                assert sample.to_act == 0 and sample.legal_actions() == match.legal_actions()
                assert sample.default_action() == match.default_action()
                built += 1
        legal = match.legal_actions()
        match.apply(seat, PASS if PASS in legal and rng.random() < 0.5 else rng.choice(legal))
    assert built > 20
    assert any(isinstance(e, RoundStarted) and e.voluntary_pass for e in match.log)


# -- a table of timed-out seats -----------------------------------------------------------------

ENABLED: dict[str, dict[str, Any]] = {
    "every_fan_tan_round": VOLUNTARY,
    "rounds_of_a_schedule": {
        "first_dealer": "random",
        "rounds": [
            "pass",
            {"type": "fan_tan", "openers": "seven", "voluntary_pass": True},
            "fan_tan",
            {"type": "fan_tan", "openers": "six_and_seven", "voluntary_pass": True},
        ],
    },
}
"""The two ways to allow voluntary passes (docs/rules.md 1.6): ``fan_tan.voluntary_pass`` for
every Fan Tan round of the game, or ``voluntary_pass`` in one round's object of ``rounds``
(here both openers, beside a Fan Tan round without voluntary passes)."""


@pytest.mark.parametrize("enabled", list(ENABLED))
@pytest.mark.parametrize(("game", "players"), NORWEGIAN)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.binary(min_size=32, max_size=32))
def test_a_table_of_timed_out_seats_ends_every_voluntary_pass_round(
    game: str, players: int, enabled: str, seed: bytes
) -> None:
    """Every seat times out on every turn (as a table of forfeited seats is played): each
    plays only its default action, the pass whenever it is legal. The match still ends, and
    each voluntary-pass round within ``52 + 51 * (2n - 1)`` actions for ``n`` seats.

    Why: the opening 7H is the only legal action. After any card, the pass is legal to the
    next ``n`` seats (fewer than ``n`` passes in succession), so they pass; then it is legal
    only to a seat that cannot play (``FanTanRound`` offers it to a seat with a card only
    while ``consecutive_passes < players``), so the seats that cannot play pass and the first
    that can plays its lowest card, within ``n - 1`` more seats: one seat can always play,
    since every card not on the table is in a hand and each unfinished suit has a next card.
    So between two cards come ``n`` to ``2n - 1`` passes, and a round has at most 52 cards.
    A table that passes whenever it may is the longest any table can make a round last, so
    forfeited seats among live ones cannot make it last longer either.
    """
    match = setup(game, players=players, options=ENABLED[enabled]).start(seed)
    bound = 52 + 51 * (2 * players - 1)
    played: dict[int, list[int]] = {}  # each voluntary-pass round's actions, in order
    while not match.over:
        seat, plan, legal = match.to_act, match.plan, match.legal_actions()
        assert seat is not None and plan is not None
        action = match.default_action()
        assert action == (PASS if PASS in legal else legal[0])
        if plan.voluntary_pass:
            actions = played.setdefault(match.round_index, [])
            actions.append(action)
            assert len(actions) <= bound, f"round {match.round_index} does not end"
        match.apply(seat, action)
    assert played, "no round with voluntary passes was played"
    for index, actions in played.items():
        assert actions[0] == parse_card("7H") and actions[-1] != PASS, index
        cards_at = [k for k, a in enumerate(actions) if a != PASS]
        gaps = [b - a - 1 for a, b in pairwise(cards_at)]
        assert all(players <= gap <= 2 * players - 1 for gap in gaps), (index, gaps)
    assert replay(match.log, seed=seed).log == match.log
