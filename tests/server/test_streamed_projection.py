"""Hidden cards never leak through the bytes the server streams (issue 11, "One projection").

``tests/engine/test_views.py`` checks that the engine's ``view``/``Projector`` independent of
the cards a reader cannot see. The server streams through another path: each stored log entry (a protobuf
``Event``) goes through ``codec.project_pb`` by way of ``PbProjector``/``project_for``, when
it is published live (one projector per write, started from the round's rule on passes
before it, as ``Readers.publish`` and ``api.service.projected`` do) and when a stream replays
the stored log from seq 1 (``api.streams``). This is the differential test on that path.

Each example plays a random match of one game with the engine, writes its log as the server
does (the opening with the clock and the reserved seats in MatchStarted, SeatJoined entries,
each action's events in one write, a TimedOut before an action the clock played, the seed
revealed at the end, or a MatchCancelled and the reveal when the match is cancelled), and
checks, for every seat and the spectator:

* the live path and the replay path give the same bytes, and projecting leaves the stored
  entries as they were;
* the reader sees its own hand exactly, every other hand as hidden with its size only, and
  every other entry as it is stored, except the reason of a pass in a round with voluntary
  passes, which is hidden: so the projection does hide something and hides nothing else;
* re-dealing the cards the reader cannot see (the other seats' hands of every Dealt, shuffled
  among those seats with every size kept, and nothing else changed) changes the full log but
  not one byte of what the reader is sent;
* in a round with voluntary passes, turning every pass's reason from forced to chosen and back
  changes the full log but not one byte of what any reader but the auditor is sent.

The re-dealt log is no longer a playable match (the cards played no longer match the deals),
which does not matter here: the projection reads one entry at a time, and the Dealt entries
are the only ones that name a card still in a hand (cards played, and the dead cards of Crazy
Sixes, are face up). What the server's own entries carry (seats, the clock, the seed once the
match is over, a cancellation's totals) is public.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardarena.engine import PASS, CardSet, Match, new_match
from cardarena.engine import events as ev
from cardarena.server.hosting import PbProjector, project_for
from cardarena.server.hosting.jokers import JokerLedger
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

MATCH_ID = "5eed0fca7da12e4a"
MAX_STEPS = 10_000
"""Generous bound on the seat actions of one match (Triathlon to 50 deals takes ~2,100)."""
TIMEOUT_CHANCE = 0.03
"""How often the clock plays a seat's move (its default action, after a TimedOut entry)."""
CANCEL_CHANCE = 0.2
"""How often a match is cancelled at a random step instead of being played to its end."""

Reader = int | None
"""A seat, or ``None``: a spectator (WatchMatch)."""


@dataclass(frozen=True)
class Config:
    game: str
    players: int
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def voluntary(self) -> bool:
        fan_tan = self.options.get("fan_tan", {})
        return bool(fan_tan.get("voluntary_pass", False))

    @property
    def id(self) -> str:
        extra = "-voluntary_pass" if self.voluntary else ""
        extra += "".join(f"-deck{v}" for k, v in self.options.items() if k == "deck")
        return f"{self.game}-{self.players}{extra}"


VOLUNTARY = {"fan_tan": {"voluntary_pass": True}}
CONFIGS = [
    *(
        Config(game, players, options)
        for game in ("pentathlon", "hexathlon", "heptathlon")
        for players in (3, 4, 5)
        for options in ({}, VOLUNTARY)
    ),
    *(Config("crazy_sixes", players, {"deck": deck}) for players in (3, 4) for deck in (48, 40)),
    Config("triathlon", 3),
]

SEEDS = st.binary(min_size=32, max_size=32)
RNG_SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""As in the engine's property tests (``test_properties``, ``test_views``): a few whole
matches per configuration, random examples (no ``derandomize``) and hypothesis's default
example database, so that a failure found once is tried first the next time."""


# -- the log as the server writes it ------------------------------------------------------------


@dataclass
class Write:
    """One append to the store: its entries, published together."""

    start: int
    """Index in the log of its first entry."""
    end: int
    voluntary_before: bool
    """Whether the round in play before it allowed voluntary passes (where a projector of
    the published entries starts)."""


@dataclass
class ServerLog:
    entries: list[pb.Event] = field(default_factory=list)
    engine_events: list[ev.Event | None] = field(default_factory=list)
    """The engine event each entry encodes; ``None`` for the server's own entries."""
    writes: list[Write] = field(default_factory=list)
    voluntary: bool = False
    """The rule on passes of the round in play (as ``Readers`` follows it)."""

    def write(self, batch: Sequence[tuple[pb.Event, ev.Event | None]]) -> None:
        start = len(self.entries)
        for seq, (entry, event) in enumerate(batch, start + 1):
            assert entry.seq == seq, "a write's entries follow the log without a gap"
            self.entries.append(entry)
            self.engine_events.append(event)
        self.writes.append(Write(start, len(self.entries), self.voluntary))
        for entry, _ in batch:
            if entry.WhichOneof("kind") == "round_started":
                self.voluntary = entry.round_started.voluntary_pass

    @property
    def next_seq(self) -> int:
        return len(self.entries) + 1


def choose(rng: random.Random, legal: Sequence[int]) -> int:
    """A random legal action; a voluntary pass half the time, so that pass streaks happen."""
    if PASS in legal and len(legal) > 1 and rng.random() < 0.5:
        return PASS
    return rng.choice(list(legal))


def host(config: Config, seed: bytes, rng: random.Random) -> ServerLog:
    """A random match, written as ``HostedMatch`` writes it (``write_opening``, ``_join``,
    ``_record``, ``_cancel``)."""
    match: Match = new_match(config.game, players=config.players, seed=seed, options=config.options)
    out = ServerLog()
    move_ms = rng.choice([0, 2_000, 30_000])
    reserved = [rng.random() < 0.3 for _ in range(config.players)]
    out.write(
        [
            (codec.event_to_pb(e, i, MATCH_ID, move_ms=move_ms, reserved_seats=reserved), e)
            for i, e in enumerate(match.log, 1)
        ]
    )
    for seat in rng.sample(range(config.players), config.players):
        joined = pb.SeatJoined(seat=seat, name=f"bot-{seat}")
        out.write([(pb.Event(seq=out.next_seq, seat_joined=joined), None)])
    cancel_at = rng.randrange(1, 400) if rng.random() < CANCEL_CHANCE else None
    for step in range(MAX_STEPS):
        if step == cancel_at:
            cancelled = pb.MatchCancelled(
                reason="cancelled by the operator",
                totals=[codec.score_to_pb(t) for t in match.totals],
            )
            revealed = pb.SeedRevealed(seed=seed)
            out.write(
                [
                    (pb.Event(seq=out.next_seq, match_cancelled=cancelled), None),
                    (pb.Event(seq=out.next_seq + 1, seed_revealed=revealed), None),
                ]
            )
            return out
        to_act = match.to_act
        assert to_act is not None, "a match that is not over has a seat to act"
        batch: list[tuple[pb.Event, ev.Event | None]] = []
        if rng.random() < TIMEOUT_CHANCE:
            action = match.default_action()
            batch.append((pb.Event(seq=out.next_seq, timed_out=pb.TimedOut(seat=to_act)), None))
        else:
            action = choose(rng, match.legal_actions())
        events = match.apply(to_act, action)
        for event in events:
            batch.append((codec.event_to_pb(event, out.next_seq + len(batch), MATCH_ID), event))
        ended = any(isinstance(e, ev.MatchEnded) for e in events)
        if ended:
            revealed = pb.SeedRevealed(seed=seed)
            batch.append((pb.Event(seq=out.next_seq + len(batch), seed_revealed=revealed), None))
        out.write(batch)
        if ended:
            assert match.over
            return out
    raise AssertionError(f"the match did not end within {MAX_STEPS} actions")


# -- what a reader is sent ----------------------------------------------------------------------


def wire(entry: pb.Event) -> bytes:
    return entry.SerializeToString(deterministic=True)


def ledger_of(entries: Sequence[pb.Event]) -> JokerLedger:
    """The match's Jokers as the server follows them (each reader's names, by seq)."""
    ledger = JokerLedger()
    for entry in entries:
        ledger.follow(entry)
    return ledger


def replayed(entries: Sequence[pb.Event], reader: Reader) -> list[bytes]:
    """The stored log as a stream replays it to ``reader``: one projector from seq 1."""
    projector = PbProjector(jokers=ledger_of(entries))
    return [wire(project_for(entry, reader, projector)) for entry in entries]


def published(log: ServerLog, entries: Sequence[pb.Event], reader: Reader) -> list[bytes]:
    """The log as it is published live to ``reader``: each write projected on its own, from
    the rule on passes of the round before it."""
    out: list[bytes] = []
    ledger = ledger_of(entries)
    for write in log.writes:
        projector = PbProjector(write.voluntary_before, ledger)
        out += [wire(project_for(e, reader, projector)) for e in entries[write.start : write.end]]
    return out


def readers(players: int) -> list[Reader]:
    return [*range(players), None]


def voluntary_rounds(entries: Sequence[pb.Event]) -> list[bool]:
    """For each entry, whether it belongs to a round with voluntary passes."""
    out: list[bool] = []
    voluntary = False
    for entry in entries:
        if entry.WhichOneof("kind") == "round_started":
            voluntary = entry.round_started.voluntary_pass
        out.append(voluntary)
    return out


def played_voluntary_round(entries: Sequence[pb.Event]) -> bool:
    """Whether a round with voluntary passes was played to its end (not cancelled first)."""
    return any(
        voluntary and entry.WhichOneof("kind") == "round_scored"
        for entry, voluntary in zip(entries, voluntary_rounds(entries), strict=True)
    )


# -- the logs that differ only in what a reader cannot see ------------------------------------


def redeal(rng: random.Random, dealt: ev.Dealt, reader: Reader) -> ev.Dealt:
    """``dealt`` with the cards ``reader`` cannot see shuffled among the other seats."""
    hands = list(dealt.hands)
    hidden = [s for s in range(len(hands)) if s != reader]
    pool = [card for s in hidden for card in _cards(hands[s])]
    rng.shuffle(pool)
    start = 0
    for s in hidden:
        size = len(_cards(hands[s]))
        hands[s] = CardSet.of(pool[start : start + size])
        start += size
    return replace(dealt, hands=tuple(hands))


def _cards(hand: CardSet | None) -> list[int]:
    assert hand is not None, "the full log has every hand"
    return list(hand)


def redealt_log(rng: random.Random, log: ServerLog, reader: Reader) -> list[pb.Event]:
    """The full log with every Dealt re-dealt for ``reader``, encoded as the server does."""
    out: list[pb.Event] = []
    for entry, event in zip(log.entries, log.engine_events, strict=True):
        if isinstance(event, ev.Dealt):
            out.append(codec.event_to_pb(redeal(rng, event, reader), entry.seq, MATCH_ID))
        else:
            out.append(entry)
    return out


FLIPPED = {
    pb.PASS_REASON_FORCED: pb.PASS_REASON_CHOSEN,
    pb.PASS_REASON_CHOSEN: pb.PASS_REASON_FORCED,
}


def flipped_log(entries: Sequence[pb.Event]) -> tuple[list[pb.Event], int]:
    """The full log with the reason of every pass of a voluntary-pass round turned around;
    and how many passes that turned."""
    out: list[pb.Event] = []
    turned = 0
    for entry, voluntary in zip(entries, voluntary_rounds(entries), strict=True):
        if voluntary and entry.WhichOneof("kind") == "passed":
            copy = pb.Event()
            copy.CopyFrom(entry)
            copy.passed.reason = FLIPPED[entry.passed.reason]
            out.append(copy)
            turned += 1
        else:
            out.append(entry)
    return out, turned


# -- the checks ---------------------------------------------------------------------------------


def check_what_is_hidden(entries: Sequence[pb.Event], sent: Sequence[bytes], reader: Reader) -> int:
    """``reader`` gets its own hand, the size only of every other one, the reason of no pass
    of a voluntary-pass round, and every other entry as stored; returns how many Dealt
    entries its projection changed."""
    hiding = 0
    for entry, seen_bytes, voluntary in zip(entries, sent, voluntary_rounds(entries), strict=True):
        seen = pb.Event.FromString(seen_bytes)
        kind = entry.WhichOneof("kind")
        if kind == "dealt":
            assert seen.seq == entry.seq and seen.dealt.round == entry.dealt.round
            assert len(seen.dealt.hands) == len(entry.dealt.hands)
            for s, (full, hand) in enumerate(zip(entry.dealt.hands, seen.dealt.hands, strict=True)):
                assert not full.hidden and full.size == len(full.cards), "the log has every hand"
                if s == reader:  # its Jokers under its own numbers (test_joker_names)
                    assert unnumbered(hand.cards) == unnumbered(full.cards), f"seat {s}'s hand"
                else:
                    assert hand.hidden and not hand.cards, f"{reader!r} is sent seat {s}'s hand"
                    assert hand.size == full.size, "every hand's size is public"
            if seen_bytes != wire(entry):
                hiding += 1
            else:
                assert all(not h.cards for s, h in enumerate(entry.dealt.hands) if s != reader)
        elif kind == "passed" and voluntary:
            assert entry.passed.reason in FLIPPED, "the full log says why every pass was made"
            expected = pb.Event()
            expected.CopyFrom(entry)
            expected.passed.reason = pb.PASS_REASON_HIDDEN
            assert seen_bytes == wire(expected), "why a voluntary-round pass was made is hidden"
        elif kind in ("card_played", "trick_won"):  # a Joker under the reader's own number
            assert unnumbered(cards_in(seen)) == unnumbered(cards_in(entry)), f"seq {entry.seq}"
            assert wire(without_cards(seen)) == wire(without_cards(entry)), f"seq {entry.seq}"
        else:
            assert seen_bytes == wire(entry), f"{kind} at seq {entry.seq} is public"
    return hiding


def cards_in(event: pb.Event) -> Sequence[pb.Card]:
    if event.HasField("card_played"):
        return [event.card_played.card]
    return event.trick_won.cards


def without_cards(event: pb.Event) -> pb.Event:
    out = pb.Event()
    out.CopyFrom(event)
    if out.HasField("card_played"):
        out.card_played.ClearField("card")
    else:
        del out.trick_won.cards[:]
    return out


def unnumbered(cards: Sequence[pb.Card]) -> list[tuple[int, int]]:
    """The cards, a Joker as any Joker (each reader numbers them its own way)."""
    return [(c.suit, 0 if c.suit == pb.SUIT_JOKER else c.rank) for c in cards]


def wire_hand(hand: pb.Hand) -> bytes:
    return hand.SerializeToString(deterministic=True)


def differences(a: Sequence[bytes], b: Sequence[bytes]) -> list[int]:
    assert len(a) == len(b)
    return [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


def first_leak(entries: Sequence[pb.Event], a: Sequence[bytes], b: Sequence[bytes]) -> str:
    changed = differences(a, b)
    if not changed:
        return ""
    i = changed[0]
    return f"seq {entries[i].seq} ({entries[i].WhichOneof('kind')}) and {len(changed) - 1} more"


@pytest.mark.parametrize("config", [pytest.param(c, id=c.id) for c in CONFIGS])
@SETTINGS
@given(seed=SEEDS, rng_seed=RNG_SEEDS)
def test_streamed_entries_do_not_depend_on_hidden_cards(
    config: Config, seed: bytes, rng_seed: int
) -> None:
    rng = random.Random(rng_seed)
    log = host(config, seed, rng)
    full = [wire(e) for e in log.entries]
    dealt = [i for i, e in enumerate(log.entries) if e.WhichOneof("kind") == "dealt"]
    assert dealt, "a match deals"
    flipped, turned = flipped_log(log.entries)
    flipped_full = [wire(e) for e in flipped]
    if turned:
        assert differences(full, flipped_full), "turning the reasons changed the full log"

    for reader in readers(config.players):
        sent = replayed(log.entries, reader)
        assert published(log, log.entries, reader) == sent, "live and replayed streams agree"
        assert [wire(e) for e in log.entries] == full, "projecting changed a stored entry"
        hiding = check_what_is_hidden(log.entries, sent, reader)
        assert hiding == len(dealt), f"{reader!r}'s projection hides nothing of some deal"

        other = redealt_log(random.Random(rng_seed ^ 0x5EED), log, reader)
        other_full = [wire(e) for e in other]
        changed = differences(full, other_full)
        assert changed, "no re-deal changed a hidden hand: the check would prove nothing"
        assert set(changed) <= set(dealt), "only the deals were re-dealt"
        other_sent = replayed(other, reader)
        assert other_sent == sent, (
            f"{reader!r} is sent bytes that depend on cards it cannot see: "
            f"{first_leak(log.entries, sent, other_sent)}"
        )
        assert published(log, other, reader) == other_sent

        flipped_sent = replayed(flipped, reader)
        assert flipped_sent == sent, (
            f"{reader!r} is sent why a seat passed in a voluntary-pass round: "
            f"{first_leak(log.entries, sent, flipped_sent)}"
        )
        assert published(log, flipped, reader) == flipped_sent

    if config.voluntary and played_voluntary_round(log.entries):
        assert turned, "a voluntary-pass round without a pass checked nothing"
    elif not config.voluntary:
        assert not turned
