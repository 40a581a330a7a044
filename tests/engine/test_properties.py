"""Property-based tests: random play of every game, every player count and the interesting options.

Each example draws a 32-byte match seed and a seed for the random player, plays the match to
its end with random legal actions, and checks properties that every match must have:

* cards are conserved at every step (hands, table, trick, tricks taken, dead piles);
* the legal actions are sorted, never empty for the seat to act, never a lone (forced) pass
  except where passes may be voluntary (a seat that cannot play is asked there), equal to
  what RULES.md allows, and anything else is refused without touching the match;
* the whole log follows the rules, checked by a small independent model of RULES.md: the
  deals and draws of §4, turn order, follow suit, trick winners, forced passes, dead cards,
  every round's scores (§1.3, §1.4, §2.3, §3.4) and the end of the match;
* the round-total invariants of §1.3, the hand totals of §2.3 and the feats of §3.4;
* every match ends, and its winners are the seats with the best total;
* same seed and same actions give the same log; ``replay`` reproduces a match, with and
  without the seed, and from any prefix.

The configurations and random play are in ``properties_support``, the model of the rules in
``rules_model``, and what it is written from (cards, decks, deals, scores) in
``rules_reference``.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardarena.engine import (
    CHOOSE_TRUMP,
    EXCLUDE,
    PASS,
    NotYourTurn,
    ReplayError,
    replay,
)
from cardarena.engine import events as ev

from .properties_support import (
    ALL_CONFIGS,
    FEW,
    MAX_STEPS,
    NORWEGIAN_CONFIGS,
    RNG_SEEDS,
    SEEDS,
    SIXES_CONFIGS,
    SOME,
    TRIATHLON_CONFIGS,
    TRICKS_PER_PLAYER,
    Config,
    action_event,
    check_conservation,
    choose,
    over_random_matches,
    params,
    play_random,
    probe_refusals,
    rounds_of,
)
from .rules_model import RulesModel
from .rules_reference import CLUBS, FEATS, JOKERS, MULTIPLES_OF_THREE, mask

# -- the tests --------------------------------------------------------------------------------


@over_random_matches(ALL_CONFIGS, SOME)
def test_cards_conserved_and_state_matches_the_rules(
    config: Config, seed: bytes, rng_seed: int
) -> None:
    """(a) Card conservation at every step, plus the engine's state against the rules model:
    the seat to act, the hands, and the legal actions (exactly RULES.md's, sorted)."""
    rng = random.Random(rng_seed)
    match = config.new(seed)
    model = RulesModel(config, seed)
    for _ in range(MAX_STEPS):
        model.feed_all(match.log)
        assert model.round is not None or model.over
        if model.round is not None:
            deck = model.round.deck
            check_conservation(match, mask(deck), len(deck))
            assert match.round is not None and list(match.round.hands) == model.round.hands
        assert match.to_act == model.to_act()
        if match.over:
            break
        seat = match.to_act
        assert seat is not None
        legal = match.legal_actions()
        assert legal == sorted(model.legal(seat)), "legal actions differ from RULES.md's"
        match.apply(seat, choose(rng, legal))
    else:
        raise AssertionError("the match did not end")
    assert model.over and model.count == len(match.log)


@over_random_matches(ALL_CONFIGS, FEW)
def test_legal_actions_and_refusals(config: Config, seed: bytes, rng_seed: int) -> None:
    """(h) legal_actions() is sorted, duplicate-free, non-empty, never a lone pass (a forced pass
    is applied automatically) except where passes may be voluntary (then a seat that cannot
    play is asked); an action outside it raises the right ActionError subclass and changes
    nothing; apply returns exactly the new log events, starting with the action."""
    rng = random.Random(rng_seed)
    match = config.new(seed)
    model = RulesModel(config, seed)
    steps = 0
    while not match.over:
        steps += 1
        assert steps <= MAX_STEPS
        model.feed_all(match.log)
        assert model.round is not None
        seat = match.to_act
        assert seat is not None
        legal = match.legal_actions()
        assert legal, "the seat to act always has a legal action"
        assert legal == sorted(set(legal)), "legal actions are sorted and distinct"
        voluntary = model.round.voluntary_pass
        if not voluntary:
            assert legal != [PASS], "a lone pass is forced: it must be applied automatically"
        if steps % 3 == 1:
            # Every action outside legal_actions now and then, a few at random otherwise.
            count = None if steps % 60 == 1 else 3
            probe_refusals(match, config, mask(model.round.deck), rng, count=count)
        action = choose(rng, legal)
        alias = next((j for j in JOKERS if action in JOKERS and j != action), None)
        alias_events = None
        if alias is not None and rng.random() < 0.3:
            alias_events = match.clone().apply(seat, alias)
        before = len(match.log)
        events = match.apply(seat, action)
        assert match.log[before:] == events, "apply returns exactly the events it appended"
        if alias_events is not None:
            # Any Joker id means "a Joker" (RULES.md §3.3): the same events as the legal one.
            assert alias_events == events
        first = events[0]
        if action == PASS:
            # Only a round with voluntary passes asks a seat that cannot play (RULES.md).
            assert first == ev.Passed(seat, legal == [PASS])
        elif action >= CHOOSE_TRUMP:
            assert first == ev.TrumpChosen(seat, action - CHOOSE_TRUMP)
        elif action >= EXCLUDE:
            assert first == ev.SuitExcluded(seat, action - EXCLUDE)
        else:
            assert first == ev.CardPlayed(seat, action)
        in_round = True
        for later in events[1:]:
            # Nothing is ever played or chosen for a seat; only forced passes are automatic,
            # and none where passes may be voluntary (its grouping would show it was forced).
            assert not isinstance(later, ev.CardPlayed | ev.SuitExcluded | ev.TrumpChosen), later
            assert not (isinstance(later, ev.Passed) and not later.forced), later
            assert not (in_round and voluntary and isinstance(later, ev.Passed)), later
            in_round = in_round and not isinstance(later, ev.RoundScored)
    assert match.to_act is None and match.legal_actions() == []
    length = len(match.log)
    last_deal = [e for e in match.log if isinstance(e, ev.Dealt)][-1]
    a_card = min(c for hand in last_deal.hands if hand is not None for c in hand)
    for seat in range(config.players):
        for action in (a_card, PASS):
            with pytest.raises(NotYourTurn):
                match.apply(seat, action)
    assert len(match.log) == length


@over_random_matches(NORWEGIAN_CONFIGS, SOME)
def test_norwegian_round_totals(config: Config, seed: bytes, rng_seed: int) -> None:
    """(b) RULES.md §1.3 invariants from the RoundScored events: pass sums to h, clubs 13,
    queens 16, grand -h, trumps -h (each times the round's multiplier); h = 17/13/10. Fan Tan:
    passes plus cards left, the player who went out scoring 0 (§1.4)."""
    match = config.new(seed)
    play_random(match, random.Random(rng_seed))
    h = TRICKS_PER_PLAYER[config.players]
    plans = config.rounds()
    segments = rounds_of(match.log)
    assert [seg[0].kind for seg in segments if isinstance(seg[0], ev.RoundStarted)] == [
        p["type"] for p in plans
    ]
    for plan, seg in zip(plans, segments, strict=True):
        started, scored = seg[0], seg[-1]
        assert isinstance(started, ev.RoundStarted) and isinstance(scored, ev.RoundScored)
        kind, mult, total = plan["type"], plan["multiplier"], sum(scored.scores)
        tricks = [e for e in seg if isinstance(e, ev.TrickWon)]
        if kind == "fan_tan":
            assert not tricks
            dealt = next(e for e in seg if isinstance(e, ev.Dealt))
            plays = [e for e in seg if isinstance(e, ev.CardPlayed)]
            passes = [e.seat for e in seg if isinstance(e, ev.Passed)]
            out = plays[-1].seat
            left = [len(h) if h else 0 for h in dealt.hands]
            for p in plays:
                left[p.seat] -= 1
            assert left[out] == 0 and all(left[s] > 0 for s in range(config.players) if s != out)
            own = 0 if plan["winner_scores_zero"] else passes.count(out)
            expected = [
                own if s == out else passes.count(s) + left[s] for s in range(config.players)
            ]
            assert list(scored.scores) == [x * mult for x in expected]
            continue
        assert len(tricks) == h and all(len(t.cards) == config.players for t in tricks)
        won = [sum(t.seat == s for t in tricks) for s in range(config.players)]
        if kind == "pass":
            assert total == h * mult and list(scored.scores) == [w * mult for w in won]
        elif kind == "clubs":
            clubs = [0] * config.players
            for t in tricks:
                clubs[t.seat] += sum(c // 13 == CLUBS for c in t.cards)
            if plan["all_taken_zero"] and 13 in clubs:
                assert list(scored.scores) == [0] * config.players
            else:
                assert total == 13 * mult and list(scored.scores) == [c * mult for c in clubs]
        elif kind == "queens":
            assert total == 4 * plan["points_per_queen"] * mult
            if plan["points_per_queen"] == 4:
                assert total == 16 * mult
        elif kind in ("grand", "trumps"):
            assert total == -h * mult and list(scored.scores) == [-w * mult for w in won]
        else:
            assert kind == "finale"
            assert total == (plan["queen_of_clubs"] + 24) * mult
            if plan["queen_of_clubs"] == 8:
                assert total == 32 * mult


@over_random_matches(SIXES_CONFIGS, SOME)
def test_crazy_sixes_hand_totals(config: Config, seed: bytes, rng_seed: int) -> None:
    """(c) RULES.md §2.3: every card ends placed or dead; with split exact and pool
    all_unplaced a hand's scores sum to the deck size + 5 per winner without dead cards;
    with the other options the winners' share is the (floored, rivals') pool."""
    match = config.new(seed)
    play_random(match, random.Random(rng_seed))
    size = 48 if config.options.get("deck", 48) == 48 else 40
    exact = config.options.get("split", "exact") == "exact"
    everything = config.options.get("pool", "all_unplaced") == "all_unplaced"
    for seg in rounds_of(match.log):
        scored = seg[-1]
        assert isinstance(scored, ev.RoundScored)
        placed = [0] * config.players
        dead = [0] * config.players
        for e in seg:
            if isinstance(e, ev.CardPlayed):
                placed[e.seat] += 1
            elif isinstance(e, ev.CardsDead):
                dead[e.seat] += len(e.cards)
        assert sum(placed) + sum(dead) == size, "every card is placed or dead at the end"
        best = max(placed)
        winners = [s for s in range(config.players) if placed[s] == best]
        clean = sum(1 for s in winners if dead[s] == 0)
        total = sum(scored.scores)
        if exact and everything:
            assert total == size + 5 * clean
        pool = sum(dead) if everything else sum(d for s, d in enumerate(dead) if s not in winners)
        share = Fraction(pool, len(winners)) if exact else Fraction(pool // len(winners))
        for s in range(config.players):
            bonus = share + 5 * (dead[s] == 0) if s in winners else 0
            assert scored.scores[s] == placed[s] + bonus
        assert all(isinstance(x, Fraction) for x in scored.scores)
    totals = [e.totals for e in match.log if isinstance(e, ev.RoundScored)]
    target = config.options.get("target_score", 100)
    assert all(max(t) < target for t in totals[:-1]) and max(totals[-1]) >= target


@over_random_matches(TRIATHLON_CONFIGS, SOME)
def test_triathlon_feats(config: Config, seed: bytes, rng_seed: int) -> None:
    """(d) RULES.md §3.4: per deal the trick counts sum to 13, exactly one seat earns
    "middle", exactly one "last" (the winner of trick 13), "multiple" goes with 3/6/9/12."""
    match = config.new(seed)
    play_random(match, random.Random(rng_seed))
    zero = bool(config.options.get("zero_is_multiple"))
    multiples = MULTIPLES_OF_THREE | ({0} if zero else set())
    for seg in rounds_of(match.log):
        tricks = [e for e in seg if isinstance(e, ev.TrickWon)]
        feats = [e for e in seg if isinstance(e, ev.FeatsEarned)]
        assert len(tricks) == 13 and len(feats) == 1
        counts = [sum(t.seat == s for t in tricks) for s in range(3)]
        assert sum(counts) == 13
        earned = feats[0].feats
        assert all(set(f) <= set(FEATS) for f in earned)
        assert sum("middle" in f for f in earned) == 1
        assert [s for s in range(3) if "last" in earned[s]] == [tricks[-1].seat]
        assert [("multiple" in f) for f in earned] == [c in multiples for c in counts]
        middle = next(s for s in range(3) if "middle" in earned[s])
        others = sorted(counts[s] for s in range(3) if s != middle)
        if len(set(counts)) == 3:
            assert others[0] < counts[middle] < others[1]
        else:
            assert others[0] == others[1] != counts[middle]


@over_random_matches(ALL_CONFIGS, FEW)
def test_match_ends_with_best_totals(config: Config, seed: bytes, rng_seed: int) -> None:
    """(e) Every match ends (within MAX_STEPS actions) with one MatchEnded, last in the log,
    whose totals are the sums of the round scores and whose winners are exactly the seats with
    the best total: lowest for the Norwegian family, highest otherwise."""
    match = config.new(seed)
    play_random(match, random.Random(rng_seed))
    assert match.over
    ended = match.log[-1]
    assert isinstance(ended, ev.MatchEnded)
    assert sum(isinstance(e, ev.MatchEnded) for e in match.log) == 1
    scored = [e.scores for e in match.log if isinstance(e, ev.RoundScored)]
    totals = tuple(sum((s[i] for s in scored), Fraction(0)) for i in range(config.players))
    assert ended.totals == match.totals == totals
    best = min(totals) if config.lowest_wins else max(totals)
    assert (
        ended.winners
        == match.winners
        == tuple(s for s in range(config.players) if totals[s] == best)
    )
    assert ended.winners, "somebody wins"


@over_random_matches(ALL_CONFIGS, FEW)
def test_same_seed_same_actions_same_log(config: Config, seed: bytes, rng_seed: int) -> None:
    """(f) Determinism: the same seed and the same action sequence give identical logs (and
    the same random player sees the same legal actions); another seed deals differently."""
    first = config.new(seed)
    actions = play_random(first, random.Random(rng_seed))
    again = config.new(bytes(bytearray(seed)))
    for seat, action in actions:
        again.apply(seat, action)
    assert again.log == first.log
    third = config.new(seed)
    assert play_random(third, random.Random(rng_seed)) == actions
    assert third.log == first.log
    other = config.new(hashlib.sha256(seed).digest())
    deals = [e for e in first.log if isinstance(e, ev.Dealt)][:1]
    assert deals != [e for e in other.log if isinstance(e, ev.Dealt)][:1]


@pytest.mark.parametrize("config", params(ALL_CONFIGS))
@FEW
@given(seed=SEEDS, rng_seed=RNG_SEEDS, data=st.data())
def test_replay_reproduces_the_match(
    config: Config, seed: bytes, rng_seed: int, data: st.DataObject
) -> None:
    """(g) replay(log) and replay(log, seed=seed) rebuild the match (log, totals, winners); a
    prefix ending after any action replays to the same seat to act and legal actions, and the
    replayed match carries on to the same log; a wrong seed or a forged score is refused."""
    rng = random.Random(rng_seed)
    match = config.new(seed)
    marks: list[tuple[int, int | None, list[int]]] = [
        (len(match.log), match.to_act, match.legal_actions())
    ]
    while not match.over:
        assert len(marks) <= MAX_STEPS
        seat = match.to_act
        assert seat is not None
        match.apply(seat, choose(rng, match.legal_actions()))
        marks.append((len(match.log), match.to_act, match.legal_actions()))
    for replayed in (replay(match.log), replay(match.log, seed=seed)):
        assert replayed.over and replayed.log == match.log
        assert (replayed.totals, replayed.winners) == (match.totals, match.winners)
    cut, to_act, legal = data.draw(st.sampled_from(marks), label="prefix")
    partial = replay(
        match.log[:cut], seed=data.draw(st.sampled_from([None, seed]), label="with seed")
    )
    assert partial.log == match.log[:cut]
    assert (partial.to_act, partial.legal_actions()) == (to_act, legal)
    voluntary = False
    for index, event in enumerate(match.log):
        if isinstance(event, ev.RoundStarted):
            voluntary = event.voluntary_pass
        if index < cut:
            continue
        if (
            isinstance(event, ev.DealerDrawn | ev.TrumpDrawn | ev.Dealt)
            and partial.pending is not None
        ):
            partial.resolve(event)  # without the seed, a replayed match waits for each deal
        seat = getattr(event, "seat", None)
        action = action_event(event, voluntary=voluntary)
        if action is not None and seat is not None:
            partial.apply(seat, action)
    assert partial.log == match.log
    with pytest.raises(ReplayError) as info:
        replay(match.log, seed=hashlib.sha256(seed).digest())
    assert info.value.index == 0
    where = data.draw(
        st.sampled_from([i for i, e in enumerate(match.log) if isinstance(e, ev.RoundScored)]),
        label="forged",
    )
    forged = list(match.log)
    scored = forged[where]
    assert isinstance(scored, ev.RoundScored)
    forged[where] = replace(scored, scores=(scored.scores[0] + 1, *scored.scores[1:]))
    with pytest.raises(ReplayError) as info:
        replay(forged)
    assert info.value.index == where
