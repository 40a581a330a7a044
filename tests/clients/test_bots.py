"""The reference bots: legal in every game, deterministic with a seed, and sensible."""

from __future__ import annotations

import pytest

from cardarena.clients.bots import Bot, MonteCarloBot, RandomBot, SeatState, load_bot, play_local
from cardarena.clients.bots.rules_bot import (
    RuleBot,
    auction_action,
    fan_tan_choice,
    sixes_choice,
    triathlon_wants_trick,
    trick_card,
)
from cardarena.engine import GAMES, choose_trump, exclude
from cardarena.engine.cards import cards_of, parse_card, parse_cards

GAME_PLAYERS = [(game, n) for game, spec in GAMES.items() for n in spec.players]


def cards(codes: str) -> list[int]:
    return cards_of(parse_cards(codes))


def spanish(codes: str) -> int:
    return parse_cards(codes, spanish_deck=True)


# -- every bot plays legally everywhere ----------------------------------------------------


@pytest.mark.parametrize(("game", "players"), GAME_PLAYERS)
def test_rule_bots_finish_every_game(game: str, players: int) -> None:
    """play_local applies each choice through the engine, which refuses an illegal one."""
    match, states = play_local(game, [RuleBot() for _ in range(players)], bytes([players]) * 32)
    assert match.over and all(state.over for state in states)


@pytest.mark.parametrize(("game", "players"), GAME_PLAYERS)
def test_mc_bot_finishes_every_game_within_a_sample_cap(game: str, players: int) -> None:
    mc = MonteCarloBot(seed=1, budget_ms=2, samples=2)
    bots: list[Bot] = [mc, *(RuleBot() for _ in range(players - 2)), RandomBot(seed=2)]
    watched = SampleCap(mc)
    bots[0] = watched
    match, _ = play_local(game, bots, bytes([players, 1]) * 16)
    assert match.over
    assert mc.searches > 0 and mc.samples_total > 0, "the search ran"
    assert watched.most <= 2
    assert mc.failures == 0, "every determinization replayed the seat's log"


class SampleCap:
    """Wraps a Monte Carlo bot and records the most samples it took for one decision."""

    name = "mc-watched"

    def __init__(self, inner: MonteCarloBot) -> None:
        self.inner = inner
        self.most = 0

    def choose(self, state: SeatState) -> int:
        action = self.inner.choose(state)
        self.most = max(self.most, self.inner.last_samples)
        self.inner.last_samples = 0
        return action


def test_a_tight_budget_still_finishes_a_match() -> None:
    """With 1 ms per move the bot samples little, falls back to the rules, and still ends."""
    mc = MonteCarloBot(seed=3, budget_ms=1)
    match, _ = play_local("crazy_sixes", [mc, RuleBot(), RuleBot()], bytes([9]) * 32)
    assert match.over and mc.searches > 0


# -- determinism ---------------------------------------------------------------------------


SHORT = {"rounds": ["queens", "fan_tan"]}


def test_rule_bot_is_deterministic() -> None:
    logs = [
        play_local("hexathlon", [RuleBot(seed=s) for s in range(4)], bytes(32))[0].log
        for _ in range(2)
    ]
    assert logs[0] == logs[1]


def test_mc_bot_is_deterministic_when_the_sample_cap_binds() -> None:
    """The time budget is generous, so the cap (not the clock) ends each search."""

    def play() -> list[object]:
        bots: list[Bot] = [MonteCarloBot(seed=5, budget_ms=10_000, samples=3), RuleBot()]
        bots += [MonteCarloBot(seed=6, budget_ms=10_000, samples=3), RandomBot(seed=7)]
        return list(play_local("pentathlon", bots, bytes([3]) * 32, options=SHORT)[0].log)

    assert play() == play()


def test_reference_bots_load_by_short_name() -> None:
    assert load_bot("rules").name == "rules"
    mc = load_bot("mc", seed=4)
    assert isinstance(mc, MonteCarloBot) and mc.name == "mc"
    with pytest.raises(ValueError, match="policy"):
        MonteCarloBot(policy="minimax")


def test_random_playouts_also_work() -> None:
    mc = MonteCarloBot(seed=8, budget_ms=10_000, samples=2, policy="random")
    match, _ = play_local("triathlon", [mc, RuleBot(), RandomBot(seed=1)], bytes([4]) * 32)
    assert match.over and mc.samples_total > 0


# -- the rules beat chance -----------------------------------------------------------------


def test_rules_beat_random_in_a_duplicate_pair() -> None:
    """Both seatings of the same deals; fully seeded, so this cannot flake."""
    diff = 0
    for lineup in (("rules", "random") * 2, ("random", "rules") * 2):
        bots = [
            RuleBot() if name == "rules" else RandomBot(seed=i) for i, name in enumerate(lineup)
        ]
        match, _ = play_local("pentathlon", bots, bytes([11]) * 32)
        for seat, name in enumerate(lineup):
            diff += int(match.totals[seat]) * (1 if name == "rules" else -1)
    assert diff < 0, "lowest total wins: the rule bots' seats scored less"


# -- the rules of thumb --------------------------------------------------------------------


def test_dodging_plays_the_highest_loser_and_dumps_queens() -> None:
    led = [parse_card("KH")]
    hand = parse_cards("QH 10H 2H")
    legal = cards("QH 10H 2H")
    assert trick_card("pass", hand, legal, led, 4, -1, 0) == parse_card("QH")
    assert trick_card("queens", hand, legal, led, 4, -1, 0) == parse_card("QH")
    led = [parse_card("5H")]
    assert trick_card("pass", hand, legal, led, 4, -1, 0) == parse_card("2H")
    # Void: shed the costliest card on someone else's trick.
    hand = parse_cards("QC AS 3D")
    assert trick_card("finale", hand, cards("QC AS 3D"), led, 4, -1, 0) == parse_card("QC")
    assert trick_card("pass", hand, cards("QC AS 3D"), led, 4, -1, 0) == parse_card("AS")


def test_last_to_a_trick_it_must_win_sheds_its_highest() -> None:
    trick = cards("2H 3H 4H")
    hand = parse_cards("9H KH")
    assert trick_card("pass", hand, cards("9H KH"), trick, 4, -1, 0) == parse_card("KH")


def test_grabbing_wins_cheaply_and_ruffs_low() -> None:
    trick = [parse_card("10H")]
    hand = parse_cards("QH AH 3H")
    legal = cards("QH AH 3H")
    others = parse_cards("KH 5D")
    # Not last: the queen could be beaten by the outstanding king, the ace cannot.
    assert trick_card("grand", hand, legal, trick, 4, -1, others) == parse_card("AH")
    assert trick_card("grand", hand, legal, [*trick, 1, 2], 4, -1, others) == parse_card("QH")
    # Void in hearts with spades trump: ruff with the lowest spade that wins.
    hand = parse_cards("3S 9S 4D")
    legal = cards("3S 9S 4D")
    trick = cards("10H 2S")
    assert trick_card("trumps", hand, legal, trick, 4, 3, 0) == parse_card("3S")
    trick = [parse_card("10H"), parse_card("5S")]
    assert trick_card("trumps", hand, legal, trick, 4, 3, 0) == parse_card("9S")


def test_fan_tan_prefers_cards_that_free_its_own() -> None:
    # 8H frees 9H and 10H (ours); 6S would open 5S..AS for the rivals.
    hand = parse_cards("8H 9H 10H 6S")
    others = parse_cards("5S 4S 3S")
    assert fan_tan_choice(hand, cards("8H 6S"), others, six_and_seven=False) == parse_card("8H")


def test_crazy_sixes_kills_rival_cards_not_its_own() -> None:
    table = spanish("6O")
    hand = spanish("2O 4O 10O")
    others = spanish("7O 8O 9O 3O")
    legal = cards_of(spanish("2O 4O 10O"))
    # 10O kills 7O 8O 9O (theirs); 2O would kill our own 4O.
    assert sixes_choice(hand, legal, others, table) == parse_card("10O", spanish_deck=True)


def test_triathlon_auction_and_targets() -> None:
    hand = parse_cards("AS KS QS JS 10S 6H")
    excl = [exclude(s) for s in range(4)]
    assert auction_action(hand, excl) == exclude(0)  # clubs: none held, weakest
    assert auction_action(hand, [choose_trump(2), choose_trump(3)]) == choose_trump(3)
    assert triathlon_wants_trick(2, 8) and not triathlon_wants_trick(3, 8)
    assert triathlon_wants_trick(3, 1), "the last trick is always wanted"
