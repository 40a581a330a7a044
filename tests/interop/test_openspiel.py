"""The games as OpenSpiel games: OpenSpiel's own checks on random simulations, for every game
and player count, and what those checks cannot see (the seed, hidden cards, the scores)."""

from __future__ import annotations

import json
import pickle
import random
import subprocess
import sys
from typing import Any

import numpy as np
import pyspiel
import pytest
from open_spiel.python.observation import make_observation

from cardarena.clients.interop import openspiel
from cardarena.clients.interop.params import ParameterError, setup_of
from cardarena.engine import GAMES, Projector, legal_actions_for, new_match, view
from cardarena.engine.copies import fork

from .games import EVERY_COUNT, VARIANTS

openspiel.register()


def load(game: str, params: dict[str, Any] | None = None) -> Any:
    return pyspiel.load_game(openspiel.short_name(game), params or {})


@pytest.mark.parametrize(("game", "players"), EVERY_COUNT)
def test_openspiel_random_simulations_pass_its_checks(game: str, players: int) -> None:
    """pyspiel.random_sim_test: legal actions and masks, chance outcomes summing to 1, copies,
    serialisation, observation and information-state strings and tensors at every step,
    returns within the utility bounds, the length within max_game_length."""
    pyspiel.random_sim_test(
        load(game, {"players": players}), num_sims=1, serialize=True, verbose=False
    )


@pytest.mark.parametrize(
    ("game", "params"), VARIANTS, ids=[f"{g}-{i}" for i, (g, _) in enumerate(VARIANTS)]
)
def test_openspiel_checks_pass_with_options(game: str, params: dict[str, Any]) -> None:
    pyspiel.random_sim_test(load(game, params), num_sims=1, serialize=True, verbose=False)


def test_parameters_reach_the_engine_and_survive_the_game_string() -> None:
    game = load(
        "crazy_sixes",
        {"players": 3, "options": '{"deck": 40; "pool": "rivals_only"}', "target_score": 30},
    )
    assert game.setup.players == 3
    assert game.setup.options["deck"] == 40
    assert game.setup.options["pool"] == "rivals_only"
    assert game.setup.options["target_score"] == 30
    again = pyspiel.load_game(str(game))
    assert again.setup == game.setup
    assert load("pentathlon", {"first_dealer": -1}).setup.options["first_dealer"] == "random"
    assert [
        r["type"] for r in load("hexathlon", {"rounds": "pass+grand"}).setup.options["rounds"]
    ] == ["pass", "grand"]


def test_bad_parameters_are_refused_naming_the_problem() -> None:
    with pytest.raises(ParameterError, match="rounds"):
        setup_of("pentathlon", {"rounds": "pass+hearts"})
    with pytest.raises(ParameterError, match="players"):
        setup_of("triathlon", {"players": 4})
    with pytest.raises(ParameterError, match="no parameter 'colour'"):
        setup_of("triathlon", {"colour": "red"})
    with pytest.raises(ParameterError, match="not JSON"):
        setup_of("hexathlon", {"options": "{nope"})
    with pytest.raises(ParameterError, match="seed"):
        load("hexathlon", {"seed": "abc"})


def _random_to_end(state: Any, rng: random.Random) -> Any:
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(outcomes, probabilities)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


SEEDED: list[tuple[str, int, dict[str, Any]]] = [(game, n, {}) for game, n in EVERY_COUNT] + [
    ("hexathlon", 5, {"first_dealer": "random"}),
    ("crazy_sixes", 3, {"first_dealer": "random", "deck": 40}),
]


@pytest.mark.parametrize(("game", "players", "options"), SEEDED)
def test_a_seeded_game_is_the_match_the_engine_deals_from_that_seed(
    game: str, players: int, options: dict[str, Any]
) -> None:
    """With ``seed`` every chance node (deal, trump draw, first dealer) has the fair-deal
    stream's one outcome: the same actions give the engine's own match, event for event, and
    returns are its signed totals."""
    seed = bytes(range(32))
    params = {"players": players, "seed": seed.hex(), "options": json.dumps(options)}
    state = load(game, params).new_initial_state()
    engine = new_match(game, players=players, seed=seed, options=options)
    rng = random.Random(players)
    while not state.is_terminal():
        if state.is_chance_node():
            ((outcome, probability),) = state.chance_outcomes()
            assert probability == 1.0
            state.apply_action(outcome)
            continue
        assert state.current_player() == engine.to_act is not None
        assert state.legal_actions() == legal_actions_for(engine, engine.to_act)
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        assert engine.to_act is not None
        engine.apply(engine.to_act, action)
    match = state.table.match
    assert match.log[1:] == engine.log[1:]  # all but MatchStarted's commitment
    sign = -1 if GAMES[game].lowest_wins else 1
    assert state.returns() == [sign * float(t) for t in engine.totals]


def test_returns_are_the_signed_totals_and_zero_before_the_end() -> None:
    for game, players in EVERY_COUNT:
        state = load(game, {"players": players}).new_initial_state()
        assert state.returns() == [0.0] * players
        _random_to_end(state, random.Random(1))
        sign = -1 if GAMES[game].lowest_wins else 1
        assert state.returns() == [sign * float(t) for t in state.table.match.totals]


def _others_shuffled(match: Any, viewer: int, rng: random.Random) -> Any:
    """The match with the cards of every seat but ``viewer`` dealt among them anew (sizes kept)."""
    hands = list(match.hands)
    others = [s for s in range(match.players) if s != viewer]
    pool = [c for s in others for c in range(128) if hands[s] >> c & 1]
    rng.shuffle(pool)
    for s in others:
        size = hands[s].bit_count()
        hands[s] = sum(1 << c for c in pool[:size])
        pool = pool[size:]
    return match.with_hidden_hands(viewer, tuple(hands))


@pytest.mark.parametrize(("game", "players"), EVERY_COUNT)
def test_no_observation_shows_another_seats_hidden_cards(game: str, players: int) -> None:
    """Differential: deal the other seats' cards among them anew; nothing a seat observes
    (both strings, both tensors) changes. Giving the seat itself another card does change it,
    so the comparison can fail."""
    pygame = load(game, {"players": players})
    observation = openspiel.CardObserver(pygame.layout, recall=False, strings=pygame.strings)
    information = openspiel.CardObserver(pygame.layout, recall=True, strings=pygame.strings)
    rng = random.Random(7)
    state = pygame.new_initial_state()
    checked = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(outcomes, probabilities)[0])
            continue
        match = state.table.match
        if checked < 8 and rng.random() < 0.08 and sum(h.bit_count() > 0 for h in match.hands) >= 3:
            for viewer in range(players):
                seen = _observed(state, viewer, observation, information)
                other = state.clone()
                other.table.match = _others_shuffled(match, viewer, rng)
                assert _observed(other, viewer, observation, information) == seen
                mine = _swapped_own_card(match, viewer)
                if mine is not None:
                    other.table.match = mine
                    assert _observed(other, viewer, observation, information)[:2] != seen[:2]
                checked += 1
        state.apply_action(rng.choice(state.legal_actions()))
    assert checked > players


def _observed(state: Any, seat: int, *observers: Any) -> tuple[Any, ...]:
    out: list[Any] = []
    for observer in observers:
        observer.set_from(state, seat)
        out.append(observer.tensor.tobytes())
    for observer in observers:
        out.append(observer.string_from(state, seat))
    return tuple(out)


def _swapped_own_card(match: Any, viewer: int) -> Any:
    """The match with one card of ``viewer``'s hand exchanged for one of another seat's."""
    hands = list(match.hands)
    other = next((s for s in range(match.players) if s != viewer and hands[s]), None)
    if other is None or not hands[viewer]:
        return None
    mine, theirs = hands[viewer] & -hands[viewer], hands[other] & -hands[other]
    hands[viewer] ^= mine | theirs
    hands[other] ^= mine | theirs
    copy = fork(match)
    assert copy.round is not None
    for s in (viewer, other):
        copy.round.hands[s] = hands[s]
    copy.round.forget_legal()
    return copy


def test_the_hand_in_the_tensor_is_the_seats_hand() -> None:
    pygame = load("hexathlon")
    state = _random_to_first_decision(pygame)
    observer = openspiel.CardObserver(pygame.layout, recall=False, strings=pygame.strings)
    for seat in range(4):
        observer.set_from(state, seat)
        cards = {int(c) for c in np.flatnonzero(observer.dict["hand"])}
        assert cards == {c for c in range(55) if state.table.match.hands[seat] >> c & 1}


def _random_to_first_decision(pygame: Any) -> Any:
    state = pygame.new_initial_state()
    rng = random.Random(3)
    while state.is_chance_node():
        outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(rng.choices(outcomes, probabilities)[0])
    return state


def test_chance_deals_one_card_at_a_time_uniformly_over_the_rest() -> None:
    state = load("pentathlon", {"players": 3}).new_initial_state()
    seen = 0
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        assert len(outcomes) == 51 - seen
        assert sum(p for _, p in outcomes) == pytest.approx(1.0)
        state.apply_action(outcomes[-1][0])
        seen += 1
    assert seen == 51  # the 3-player trick deck has no 2D
    assert [h.bit_count() for h in state.table.match.hands] == [17, 17, 17]
    fresh = load("pentathlon", {"players": 3}).new_initial_state()
    with pytest.raises(ValueError, match="not an outcome"):
        fresh.apply_action(200)


@pytest.mark.parametrize(("game", "players"), EVERY_COUNT)
def test_a_resampled_state_is_one_the_seat_cannot_tell_apart(game: str, players: int) -> None:
    """``resample_from_infostate`` (what OpenSpiel's IS-MCTS samples worlds with): the seat's
    information state, observation and legal actions stay; the hidden cards are dealt anew
    (some sample differs), among the same seats with the same sizes."""
    pygame = load(game, {"players": players})
    rng = random.Random(players)
    state = pygame.new_initial_state()
    checked = moved = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(outcomes, probabilities)[0])
            continue
        if checked < 4 and rng.random() < 0.05:
            seat = state.current_player()
            hands = state.table.match.hands
            own = view(state.table.match, seat).hands[seat]  # its Jokers under its numbers
            assert own is not None
            for _ in range(3):
                world = state.resample_from_infostate(seat, rng.random)
                assert world.information_state_string(seat) == state.information_state_string(seat)
                assert world.information_state_tensor(seat) == state.information_state_tensor(seat)
                assert world.observation_string(seat) == state.observation_string(seat)
                assert world.legal_actions() == state.legal_actions()
                other = world.table.match.hands
                assert other[seat] == own.mask
                assert [h.bit_count() for h in other] == [h.bit_count() for h in hands]
                moved += other != hands
            checked += 1
        state.apply_action(rng.choice(state.legal_actions()))
    assert checked > 0
    assert moved > 0


def test_a_state_is_resampled_only_at_a_decision() -> None:
    state = load("hexathlon").new_initial_state()
    with pytest.raises(ValueError, match="decision"):
        state.resample_from_infostate(0, random.random)


def test_information_strings_hide_forced_passes_in_a_voluntary_round_after_a_plain_one() -> None:
    """The strings' cache must not carry a pass's text from a plain Fan Tan (forced shown) into
    one with voluntary passes (forced hidden): the engine shares its event objects."""
    pygame = load(
        "pentathlon",
        {
            "players": 3,
            "options": '{"rounds": ["fan_tan"; {"type": "fan_tan"; "voluntary_pass": true}]}',
        },
    )
    strings = pygame.strings
    state = _random_to_end(pygame.new_initial_state(), random.Random(4))
    match = state.table.match
    for seat in range(3):
        text = strings(match, seat)
        projector = Projector(seat)
        assert text == "\n".join(repr(projector.project(e)) for e in match.log)
        voluntary = text.split("voluntary_pass=True")[1]
        assert "Passed(" in voluntary
        assert "forced=True" not in voluntary and "forced=False" not in voluntary


@pytest.mark.parametrize("game", list(GAMES))
def test_games_and_states_pickle_even_into_a_fresh_process(game: str) -> None:
    """A game pickles as its name and parameters (multiprocessing and Ray send games so); a
    process that never called ``register()`` unpickles it and plays it; a state pickles too."""
    pygame = load(game, {"first_dealer": -1})
    again = pickle.loads(pickle.dumps(pygame))
    assert str(again) == str(pygame)
    assert again.setup == pygame.setup
    state = _random_to_first_decision(pygame)
    copy = pickle.loads(pickle.dumps(state))
    assert copy.history() == state.history()
    assert copy.information_state_tensor(1) == state.information_state_tensor(1)
    code = (
        "import pickle, random, sys\n"
        "game = pickle.loads(sys.stdin.buffer.read())\n"
        "state, rng = game.new_initial_state(), random.Random(1)\n"
        "while not state.is_terminal():\n"
        "    if state.is_chance_node():\n"
        "        state.apply_action(rng.choice([o for o, _ in state.chance_outcomes()]))\n"
        "    else:\n"
        "        state.apply_action(rng.choice(state.legal_actions()))\n"
        "print(type(game).__name__, len(state.returns()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=pickle.dumps(pygame),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split() == [f"CardGame_{game}", str(pygame.num_players())]


def test_the_public_observer_shows_the_table_the_same_to_every_seat() -> None:
    """``private_info=NONE``: a spectator's view (no hand, no deal, no viewer), the same tensor
    and string for every seat; one for everybody (``ALL_PLAYERS``) is refused."""
    pygame = load("hexathlon", {"players": 3})
    state = _random_to_first_decision(pygame)
    for _ in range(20):
        state.apply_action(state.legal_actions()[0])
    for recall in (False, True):
        observer = make_observation(
            pygame,
            pyspiel.IIGObservationType(
                perfect_recall=recall, public_info=True, private_info=pyspiel.PrivateInfoType.NONE
            ),
        )
        assert not {"viewer", "hand", "dealt"} & set(observer.dict)
        seen = set()
        for seat in range(3):
            observer.set_from(state, seat)
            seen.add((observer.tensor.tobytes(), observer.string_from(state, seat)))
        ((_, text),) = seen
        assert "viewer=spectator" in text if not recall else "hands=(None, None, None)" in text
        assert observer.dict["trick"].any() or observer.dict["taken"].any()
    with pytest.raises(ValueError, match="private_info"):
        make_observation(
            pygame,
            pyspiel.IIGObservationType(
                perfect_recall=False,
                public_info=True,
                private_info=pyspiel.PrivateInfoType.ALL_PLAYERS,
            ),
        )
