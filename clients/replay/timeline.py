"""A match log folded into the steps a person follows: each deal, trick, turn and score.

Why a fold over the log rather than the engine's state: the log is what is being shown, and
after a round's last trick the engine has already dealt the next one. The fold is lenient
(a card not in a hand is simply not removed), so a log that fails its audit still shows.

Steps: a deal (with its trump draw), each trick of a trick round, each play or pass of a
Fan Tan round or a Crazy Sixes hand (with the cards it kills), each Triathlon trump call,
each round's scores, and the end (or the cancellation, for a match that was cancelled).
The server's time-outs, faults and forfeits are notes of the step whose action follows them
(a play the server made for a seat is marked ``(timed out)``, or ``(forfeited)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from cardarena.engine import card_code
from cardarena.engine import events as ev
from cardarena.engine.cards import SPANISH_BASE
from cardarena.engine.errors import EngineError
from cardarena.engine.games import round_traits
from cardarena.engine.match import ActionReader
from cardarena.engine.traits import Layout
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..logs.text import event_text, seat_names, server_event_text


@dataclass
class Trick:
    leader: int
    cards: list[tuple[int, int]] = field(default_factory=list)  # (seat, card) in play order
    winner: int | None = None
    number: int = 0  # 1-based, within the round


@dataclass
class Step:
    """What one step shows; the lists are copies, so later steps never change it."""

    what: str  # deal, trick, turn, call, scores, end, cancelled
    round: int
    kind: str
    dealer: int
    trump: int | None
    lines: list[str]
    hands: list[list[int]]
    layout: Layout | None = None
    """The round's layout when it is played onto a shared table (its traits'), else None."""
    trick: Trick | None = None
    plays: list[tuple[int, str]] = field(default_factory=list)  # (seat, "QC" | "pass")
    table: list[int] = field(default_factory=list)
    dead: list[list[int]] = field(default_factory=list)
    passes: list[int] = field(default_factory=list)
    tricks_won: list[int] = field(default_factory=list)
    round_scores: list[str] | None = None
    totals: list[str] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)
    turn: int = 0  # turn steps: 1-based, within the round
    notes: list[str] = field(default_factory=list)
    """The server's entries before this step's action: time-outs, faults, forfeits."""


@dataclass
class Timeline:
    game: str
    players: int
    match_id: str
    names: list[str]
    steps: list[Step]
    spanish: bool = False
    """Whether the match is played with Spanish cards (its rounds' decks say so)."""
    policy: str = ""
    """The fault policy and tournament in words (MatchStarted's), or empty for none."""


def decoded_entries(resp: spb.GetMatchLogResponse) -> list[tuple[pb.Event, ev.Event | None]]:
    """Every entry that decodes, with its engine event; the others are left out."""
    out: list[tuple[pb.Event, ev.Event | None]] = []
    for entry in resp.entries:
        try:
            event = pb.Event.FromString(entry.event)
            out.append((event, codec.event_from_pb(event)))
        except Exception:  # shown leniently; the audit reports it
            continue
    return out


def cancelled_text(reason: str) -> str:
    """The line of a MatchCancelled (a server event: no engine event to put in words)."""
    return f"match cancelled: {reason}" if reason else "match cancelled"


def build_timeline(resp: spb.GetMatchLogResponse) -> Timeline:
    info = resp.match
    players = info.players
    names = seat_names([s.name for s in sorted(info.seats, key=lambda s: s.seat)], players)
    fold = _Fold(players, names)
    policy = ""
    for event, decoded in decoded_entries(resp):
        kind = event.WhichOneof("kind")
        note = server_event_text(event, names)
        if note is not None and not (kind == "timed_out" and event.timed_out.forfeited):
            fold.notes.append(note)  # a forfeited seat's every play is marked: no note each
        if kind == "timed_out":
            fold.timed_out = event.timed_out.seat
            fold.late = " (forfeited)" if event.timed_out.forfeited else " (timed out)"
        elif kind == "match_cancelled":
            fold.cancel(event.match_cancelled.reason)
        elif kind == "match_started":
            policy = policy_text(event.match_started)
        if decoded is not None:
            fold.take(decoded)
    steps = fold.finish()
    return Timeline(info.game, players, info.match_id, names, steps, fold.spanish, policy)


def policy_text(started: pb.MatchStarted) -> str:
    """A match's fault policy and tournament, as MatchStarted records them; empty for none."""
    parts = [f"tournament {started.tournament_id}"] if started.tournament_id else []
    if started.forfeit_after:
        after = started.forfeit_after
        parts.append(f"a seat forfeits after {after} fault{'s' if after != 1 else ''}")
    return "; ".join(parts)


class _Fold:
    def __init__(self, players: int, names: Sequence[str]) -> None:
        self.players = players
        self.names = list(names)
        self.steps: list[Step] = []
        self.current: Step | None = None
        self.timed_out: int | None = None
        self.late = " (timed out)"
        """How the play after the time-out is marked: timed out, or played for a forfeit."""
        self.notes: list[str] = []
        """The server's entries in words, for the step of the next action."""
        self.reader = ActionReader()
        self.started: ev.MatchStarted | None = None
        self.round, self.kind, self.dealer = -1, "", 0
        self.layout: Layout | None = None
        self.spanish = False
        self.trump: int | None = None
        self.hands: list[set[int]] = [set() for _ in range(players)]
        self.table: set[int] = set()
        self.dead: list[set[int]] = [set() for _ in range(players)]
        self.passes = [0] * players
        self.tricks_won = [0] * players
        self.trick: Trick | None = None
        self.turns = 0
        self.totals: list[str] = ["0"] * players

    def _open(self, what: str) -> Step:
        self._close()
        self.current = Step(
            what, self.round, self.kind, self.dealer, self.trump, [], [], self.layout
        )
        if what == "turn":
            self.turns += 1
            self.current.turn = self.turns
        return self.current

    def _close(self) -> None:
        step = self.current
        if step is None:
            return
        step.dealer, step.trump, step.round, step.kind, step.layout = (
            self.dealer,
            self.trump,
            self.round,
            self.kind,
            self.layout,
        )
        step.hands = [sorted(h) for h in self.hands]
        step.table = sorted(self.table)
        step.dead = [sorted(d) for d in self.dead]
        step.passes = list(self.passes)
        step.tricks_won = list(self.tricks_won)
        step.totals = list(self.totals)
        if step.trick is not None:
            step.trick = replace(step.trick, cards=list(step.trick.cards))
        self.steps.append(step)
        self.current = None

    def cancel(self, reason: str) -> None:
        """The match stops here: no winners, the totals as they stand."""
        step = self._open("cancelled")
        self._note(step)
        step.lines.append(cancelled_text(reason))

    def finish(self) -> list[Step]:
        last = self.current or (self.steps[-1] if self.steps else None)
        if self.notes and last is not None:  # after the last action: the last step's
            self._note(last)
        self._close()
        return self.steps

    def _note(self, step: Step) -> None:
        """The notes so far go to ``step``, before its own lines."""
        step.notes.extend(self.notes)
        step.lines.extend(self.notes)
        self.notes = []

    def take(self, event: ev.Event) -> None:
        """Fold one engine event in: open a new step where one begins, then apply it."""
        step = self.current
        solitaire = self.layout is not None
        late = ""
        recorded = self.reader(event)  # fed every event, so it knows the round's passes
        if self.timed_out is not None and recorded is not None:
            late, self.timed_out = self.late, None
        match event:
            case ev.RoundStarted():
                step = self._open("deal")
                self.round, self.kind, self.dealer, self.trump = (
                    event.round,
                    event.kind,
                    event.dealer,
                    event.trump,
                )
                self._look_up(event.round)
                self.hands = [set() for _ in range(self.players)]
                self.table, self.trick, self.turns = set(), None, 0
                self.dead = [set() for _ in range(self.players)]
                self.passes, self.tricks_won = [0] * self.players, [0] * self.players
            case ev.TrumpDrawn() | ev.TrumpChosen():
                if isinstance(event, ev.TrumpChosen):
                    step = self._open("call")
                self.trump = event.suit
            case ev.SuitExcluded():
                step = self._open("call")
            case ev.Dealt():
                self.hands = [set(h) if h is not None else set() for h in event.hands]
            case ev.CardPlayed():
                if solitaire or step is None or self.trick is None or step.trick is not self.trick:
                    step = self._open("turn" if solitaire else "trick")
                    if not solitaire:
                        step.trick = self.trick = Trick(event.seat)
                self.hands[event.seat].discard(event.card)
                if solitaire:
                    self.table.add(event.card)
                elif self.trick is not None:
                    self.trick.cards.append((event.seat, event.card))
                step.plays.append((event.seat, card_code(event.card) + late))
            case ev.Passed():
                step = self._open("turn")
                self.passes[event.seat] += 1
                step.plays.append((event.seat, "pass" + late))
            case ev.TrickWon():
                if self.trick is not None and step is not None and step.trick is self.trick:
                    self.trick.winner, self.trick.number = event.seat, event.trick + 1
                    self.trick = None
                self.tricks_won[event.seat] += 1
            case ev.CardsDead():
                self.dead[event.seat] |= set(event.cards)
                self.hands[event.seat] -= set(event.cards)
            case ev.FeatsEarned():
                step = self._open("scores")
            case ev.RoundScored():
                if step is None or step.what != "scores":
                    step = self._open("scores")
                step.round_scores = [str(s) for s in event.scores]
                self.totals = [str(t) for t in event.totals]
            case ev.MatchEnded():
                step = self._open("end")
                step.winners = list(event.winners)
                self.totals = [str(t) for t in event.totals]
            case ev.MatchStarted():
                self.started = event
            case ev.DealerDrawn():
                pass
        if step is not None:
            if self.notes and recorded is not None:
                self._note(step)
            step.lines.append(event_text(event, self.names) + late)

    def _look_up(self, index: int) -> None:
        """The round's traits, from the registry; a log the registry cannot read (one that
        fails its audit) is shown as a trick round."""
        self.layout = None
        started = self.started
        if started is None:
            return
        try:
            traits = round_traits(started.game, started.players, started.options, index)
        except (EngineError, LookupError, TypeError):
            return
        self.layout = traits.layout
        self.spanish |= any(card >= SPANISH_BASE for card in traits.deck)
