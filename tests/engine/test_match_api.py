"""The uniform match API: errors that tell malformed, not-your-turn and illegal apart."""

from __future__ import annotations

import pytest

from cardarena.engine import (
    PASS,
    IllegalAction,
    MalformedAction,
    NotYourTurn,
    default_action,
    exclude,
    new_match,
)
from cardarena.engine.actions import describe, parse
from cardarena.engine.cards import parse_card

from ..helpers import actor, play_out
from .differential_play import LAYOUTS_COPY_AS_THEMSELVES


def test_errors_leave_the_match_unchanged_and_say_what_to_do() -> None:
    match = new_match("hexathlon", players=4, seed=bytes(32))
    seat = match.to_act
    assert seat is not None
    before = list(match.log)
    other = (seat + 1) % 4
    with pytest.raises(NotYourTurn, match=f"seat {seat} is to act, not seat {other}"):
        match.apply(other, match.legal_actions()[0])
    with pytest.raises(MalformedAction, match="seat 9 does not exist"):
        match.apply(9, match.legal_actions()[0])
    with pytest.raises(MalformedAction, match="not an action"):
        match.apply(seat, 999)
    with pytest.raises(MalformedAction, match="not an action"):
        match.apply(seat, True)
    with pytest.raises(MalformedAction, match="not a card of this game"):
        match.apply(seat, 70)
    not_held = next(c for c in range(52) if not match.hands[seat] >> c & 1)
    with pytest.raises(IllegalAction, match="you do not hold"):
        match.apply(seat, not_held)
    with pytest.raises(IllegalAction, match="must play a card"):
        match.apply(seat, PASS)
    assert match.log == before


def test_follow_suit_error_names_the_suit() -> None:
    for seed in range(30):
        match = new_match("pentathlon", players=4, seed=bytes([seed]) * 32)
        lead = match.legal_actions()[0]
        match.apply(actor(match), lead)
        seat = actor(match)
        hand = match.hands[seat]
        off_suit = [c for c in range(52) if hand >> c & 1 and c // 13 != lead // 13]
        if match.legal_actions() != sorted(c for c in range(52) if hand >> c & 1) and off_suit:
            with pytest.raises(IllegalAction, match=r"(clubs|diamonds|hearts|spades) was led"):
                match.apply(seat, off_suit[0])
            return
    pytest.fail("no seed gave a follow-suit situation")


def test_default_action_is_the_pass_where_legal_else_the_lowest_legal_action() -> None:
    match = new_match("pentathlon", players=4, seed=bytes(32))
    assert match.default_action() == min(match.legal_actions())
    assert default_action([parse_card("2C"), parse_card("AC")]) == parse_card("2C")
    assert default_action([parse_card("2C"), PASS]) == PASS, "a voluntary pass is the default"
    assert default_action([exclude(3), exclude(0)]) == exclude(0)
    with pytest.raises(ValueError, match="no legal action"):
        default_action([])
    play_out(match)
    with pytest.raises(NotYourTurn):
        match.default_action()
    with pytest.raises(NotYourTurn, match="over"):
        match.apply(0, 0)


def test_actions_read_and_write_as_text() -> None:
    for text in ("QC", "10H", "pass", "exclude:S", "trump:H"):
        assert describe(parse(text)) == text
    assert describe(parse("6c", spanish_deck=True)) == "6C"
    assert parse("6O", spanish_deck=True) == parse_card("6O", spanish_deck=True)
    for bad in ("", "1C", "11X", "exclude:Z", "QQ"):
        with pytest.raises(ValueError):
            parse(bad)


def test_same_seed_same_actions_same_log() -> None:
    logs = [
        play_out(new_match("heptathlon", players=5, seed=bytes(range(32))), rng_seed=7)
        for _ in range(2)
    ]
    assert logs[0] == logs[1]


def test_first_dealer_random_comes_from_the_dealer_label() -> None:
    from cardarena.engine.events import DealerDrawn, RoundStarted
    from cardarena.engine.fairdeal import RandomStream

    seed = bytes(range(32))
    match = new_match("crazy_sixes", players=3, seed=seed, options={"first_dealer": "random"})
    drawn = RandomStream(seed, "dealer").uniform(3)
    assert match.log[1] == DealerDrawn(drawn)
    assert isinstance(match.log[2], RoundStarted) and match.log[2].dealer == drawn


def test_a_layout_copies_and_unpickles_as_itself(capsys: pytest.CaptureFixture[str]) -> None:
    exec(LAYOUTS_COPY_AS_THEMSELVES, {})  # its own globals, as in the compiled child
    assert capsys.readouterr().out.strip() == "True"
