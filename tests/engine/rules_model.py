"""An independent model of the rules, fed with the (full) log of a match: it follows every
event as RULES.md says it must come (deals and draws, turn order, following suit, trick
winners, forced passes, dead cards, scores, the end) and fails naming the first that does not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from cardarena.engine import (
    PASS,
)
from cardarena.engine.events import (
    CardPlayed,
    CardsDead,
    DealerDrawn,
    Dealt,
    Event,
    FeatsEarned,
    MatchEnded,
    MatchStarted,
    Passed,
    RoundScored,
    RoundStarted,
    SuitExcluded,
    TrickWon,
    TrumpChosen,
    TrumpDrawn,
)

from .rules_reference import (
    CLUBS_MASK,
    QUEEN_OF_CLUBS,
    QUEENS,
    SIX_OF_OROS,
    SPANISH_ACES_AND_KINGS,
    Stream,
    cards_in,
    mask,
    reference_deal,
    sixes_scores,
    spanish,
    spanish_rank,
    spanish_suit,
    triathlon_feats,
    triathlon_scores,
    trick_winner,
)
from .rules_state import RoundState, RulesState


class RulesModel(RulesState):
    """Follows a match's full log event by event and asserts that each event obeys RULES.md.

    ``seed`` (when known) lets it recompute every deal and draw (§4). It can also say who must
    act next and what they may do, to compare with the engine at any point.
    """

    # -- the log ------------------------------------------------------------------------------

    def feed_all(self, log: Sequence[Event]) -> None:
        for event in log[self.count :]:
            self.feed(event)

    def feed(self, event: Event) -> None:
        where = f"event {self.count} ({event!r})"
        self.count += 1
        assert not self.over, f"{where}: after MatchEnded"
        r = self.round
        if r is not None and r.pending_dead and not isinstance(event, CardsDead):
            raise AssertionError(f"{where}: expected CardsDead for {r.pending_dead}")
        if self.count == 1:
            assert isinstance(event, MatchStarted), f"{where}: a log starts with MatchStarted"
            assert (event.game, event.players) == (self.config.game, self.n)
            if self.seed is not None:
                expected = hashlib.sha256(b"cardarena-seed-v1" + self.seed).hexdigest()
                assert event.commitment == expected, f"{where}: wrong seed commitment"
            return
        handler: Any = {
            MatchStarted: self._match_started,
            DealerDrawn: self._dealer_drawn,
            RoundStarted: self._round_started,
            TrumpDrawn: self._trump_drawn,
            Dealt: self._dealt,
            SuitExcluded: self._suit_excluded,
            TrumpChosen: self._trump_chosen,
            CardPlayed: self._card_played,
            CardsDead: self._cards_dead,
            Passed: self._passed,
            TrickWon: self._trick_won,
            FeatsEarned: self._feats_earned,
            RoundScored: self._round_scored,
            MatchEnded: self._match_ended,
        }[type(event)]
        handler(event, where)

    def _match_started(self, event: MatchStarted, where: str) -> None:
        raise AssertionError(f"{where}: a second MatchStarted")

    def _dealer_drawn(self, event: DealerDrawn, where: str) -> None:
        assert self.first_dealer is None and self.round is None, f"{where}: unexpected dealer draw"
        assert 0 <= event.seat < self.n
        if self.seed is not None:
            assert event.seat == Stream(self.seed, "dealer").uniform(self.n), (
                f"{where}: not §4's draw"
            )
        self.first_dealer = event.seat

    def _round_started(self, event: RoundStarted, where: str) -> None:
        assert self.first_dealer is not None, f"{where}: the first dealer was never drawn"
        assert self.round is None, f"{where}: the previous round was not scored"
        index = self.rounds_played
        assert not self._match_should_end(), f"{where}: the match should have ended"
        assert event.round == index, f"{where}: expected round {index}"
        assert event.dealer == (self.first_dealer + index) % self.n, f"{where}: wrong dealer"
        params: dict[str, Any] = {}
        trump: int | None = None
        draw = False
        if self.config.norwegian:
            params = self.config.rounds()[index]
            kind = params["type"]
            if kind == "trumps":
                if params["trump"]["mode"] == "fixed":
                    trump = "CDHS".index(params["trump"]["suit"])
                else:
                    draw = True
            multiplier = params["multiplier"]
            voluntary = kind == "fan_tan" and params["voluntary_pass"]
        else:
            kind = "hand" if self.config.game == "crazy_sixes" else "deal"
            multiplier, voluntary = 1, False
        assert (event.kind, event.multiplier, event.voluntary_pass, event.trump) == (
            kind,
            multiplier,
            voluntary,
            trump,
        ), f"{where}: expected {kind} x{multiplier} voluntary_pass={voluntary} trump={trump}"
        self.round = RoundState(
            index,
            kind,
            event.dealer,
            multiplier,
            voluntary,
            params,
            self.config.deck(kind),
            trump=trump,
            trump_pending=draw,
        )

    def _trump_drawn(self, event: TrumpDrawn, where: str) -> None:
        r = self.round
        assert r is not None and r.trump_pending and not r.hands, f"{where}: unexpected trump draw"
        assert event.round == r.index and 0 <= event.suit < 4
        if self.seed is not None:
            expected = Stream(self.seed, f"trump/{r.index}").uniform(4)
            assert event.suit == expected, f"{where}: §4 draws suit {expected}"
        r.trump = event.suit
        r.trump_pending = False

    def _dealt(self, event: Dealt, where: str) -> None:
        r = self.round
        assert r is not None and not r.hands and not r.trump_pending, f"{where}: unexpected deal"
        assert event.round == r.index
        hands = [h.mask if h is not None else -1 for h in event.hands]
        assert len(hands) == self.n and min(hands) >= 0, f"{where}: a full log shows every hand"
        union = 0
        for h in hands:
            assert not union & h, f"{where}: a card was dealt twice"
            union |= h
        assert union == mask(r.deck), f"{where}: the hands are not the round's deck"
        base, extra = divmod(len(r.deck), self.n)
        sizes = tuple(
            base + (1 if (s - r.dealer - 1) % self.n < extra else 0) for s in range(self.n)
        )
        assert tuple(h.bit_count() for h in hands) == sizes == event.hand_sizes, f"{where}: sizes"
        if self.seed is not None:
            expected = reference_deal(self.seed, r.index, r.deck, r.dealer, self.n)
            assert hands == expected, f"{where}: not the deal §4 gives"
        r.dealt = list(hands)
        r.hands = list(hands)
        zeros = [0] * self.n
        r.tricks, r.taken, r.passes, r.placed, r.dead = (list(zeros) for _ in range(5))
        r.leader = (r.dealer + 1) % self.n
        r.auction = r.kind == "deal"
        if r.kind == "hand":
            r.starter = (
                next(s for s in range(self.n) if hands[s] >> SIX_OF_OROS & 1)
                if self.previous_starter is None
                else (self.previous_starter + 1) % self.n
            )

    def _suit_excluded(self, event: SuitExcluded, where: str) -> None:
        r = self.round
        assert r is not None and r.auction and len(r.excluded) < 2, f"{where}: not now"
        assert event.seat == self.to_act(), f"{where}: seat D+{len(r.excluded) + 1} excludes"
        assert 0 <= event.suit < 4 and event.suit not in r.excluded, f"{where}: bad suit"
        r.excluded.append(event.suit)

    def _trump_chosen(self, event: TrumpChosen, where: str) -> None:
        r = self.round
        assert r is not None and r.auction and len(r.excluded) == 2, f"{where}: not now"
        assert event.seat == r.dealer, f"{where}: the dealer chooses the trump"
        assert 0 <= event.suit < 4 and event.suit not in r.excluded, f"{where}: bad suit"
        r.trump = event.suit
        r.auction = False

    def _card_played(self, event: CardPlayed, where: str) -> None:
        r = self.round
        assert r is not None and r.hands and not r.done, f"{where}: no round in play"
        assert event.seat == self.to_act(), f"{where}: seat {self.to_act()} is to act"
        assert r.hands[event.seat] >> event.card & 1, f"{where}: the seat does not hold the card"
        assert event.card in self.legal(event.seat), f"{where}: not legal per RULES.md"
        r.hands[event.seat] ^= 1 << event.card
        if r.tricky:
            r.trick.append(event.card)
            return
        r.last_turn = event.seat
        r.consecutive_passes = 0
        r.table |= 1 << event.card
        r.placed[event.seat] += 1
        if r.kind == "fan_tan":
            if not r.hands[event.seat]:
                r.went_out = event.seat
                r.done = True
            return
        suit = spanish_suit(event.card)
        ranks = [spanish_rank(c) for c in cards_in(r.table) if spanish_suit(c) == suit]
        zone = mask([spanish(suit, x) for x in range(min(ranks) + 1, max(ranks))]) & ~r.table
        r.pending_dead = {s: r.hands[s] & zone for s in range(self.n) if r.hands[s] & zone}
        if r.table & SPANISH_ACES_AND_KINGS == SPANISH_ACES_AND_KINGS:
            r.done = True

    def _cards_dead(self, event: CardsDead, where: str) -> None:
        r = self.round
        assert r is not None and r.kind == "hand", f"{where}: dead cards outside Crazy Sixes"
        assert r.pending_dead.get(event.seat) == event.cards.mask, (
            f"{where}: the cards strictly between a suit's ends are {r.pending_dead}"
        )
        del r.pending_dead[event.seat]
        r.hands[event.seat] ^= event.cards.mask
        r.dead[event.seat] |= event.cards.mask

    def _passed(self, event: Passed, where: str) -> None:
        r = self.round
        assert r is not None and r.kind in ("fan_tan", "hand") and not r.done, f"{where}: no pass"
        assert event.seat == self.to_act(), f"{where}: seat {self.to_act()} is to act"
        legal = self.legal(event.seat)
        if event.forced:
            assert legal == [PASS], f"{where}: a forced pass by a seat that could play {legal}"
        else:
            assert event.forced is False, f"{where}: a full log says whether a pass was forced"
            assert PASS in legal and len(legal) > 1, f"{where}: a voluntary pass is not allowed"
        r.last_turn = event.seat
        r.passes[event.seat] += 1
        r.consecutive_passes += 1

    def _trick_won(self, event: TrickWon, where: str) -> None:
        r = self.round
        assert r is not None and r.tricky and len(r.trick) == self.n, f"{where}: trick not complete"
        assert (event.trick, event.leader, event.cards) == (
            r.trick_number,
            r.leader,
            tuple(r.trick),
        )
        winner = (r.leader + trick_winner(r.trick, r.trump)) % self.n
        assert event.seat == winner, f"{where}: seat {winner} wins this trick"
        r.taken[winner] |= mask(r.trick)
        r.tricks[winner] += 1
        r.trick = []
        r.trick_number += 1
        r.leader = r.last_trick_winner = winner
        if r.trick_number == r.dealt[0].bit_count():
            r.done = True

    def _feats_earned(self, event: FeatsEarned, where: str) -> None:
        r = self.round
        assert r is not None and r.kind == "deal" and r.done and r.feats is None, f"{where}"
        expected = triathlon_feats(
            r.tricks, r.last_trick_winner, zero=bool(self.config.options.get("zero_is_multiple"))
        )
        assert event.round == r.index and event.feats == expected, f"{where}: expected {expected}"
        r.feats = expected

    def _round_scored(self, event: RoundScored, where: str) -> None:
        r = self.round
        assert r is not None and r.done and not r.trick, f"{where}: the round is not over"
        assert event.round == r.index
        expected = self._round_scores(r)
        assert event.scores == expected, f"{where}: RULES.md scores {expected}"
        self.totals = [t + s for t, s in zip(self.totals, expected, strict=True)]
        assert event.totals == tuple(self.totals), f"{where}: totals"
        self.round_scores.append(expected)
        if r.kind == "hand":
            assert not any(r.hands), f"{where}: every card is placed or dead at the end of a hand"
            self.previous_starter = r.starter
        if r.kind == "deal":
            assert r.feats is not None, f"{where}: no FeatsEarned before the score"
            self.last_deal_feats = [set(f) for f in r.feats]
            for seat, f in enumerate(r.feats):
                self.feats_ever[seat] |= set(f)
        self.rounds_played += 1
        self.round = None

    def _match_ended(self, event: MatchEnded, where: str) -> None:
        assert self.round is None and self.rounds_played > 0, f"{where}: a round is unfinished"
        assert self._match_should_end(), f"{where}: the match should go on"
        assert event.totals == tuple(self.totals), f"{where}: totals"
        best = min(self.totals) if self.config.lowest_wins else max(self.totals)
        assert event.winners == tuple(s for s, t in enumerate(self.totals) if t == best)
        self.over = True

    # -- rules of scoring and ending ----------------------------------------------------------

    def _match_should_end(self) -> bool:
        played = self.rounds_played
        options = self.config.options
        if self.config.norwegian:
            return played == len(self.config.rounds())
        if self.config.game == "crazy_sixes":
            return played > 0 and max(self.totals) >= options.get("target_score", 100)
        if played == 0:
            return False
        if played >= options.get("max_deals", 50):
            return True
        if options.get("end", "all_feats_cumulative") == "all_feats_cumulative":
            return any(len(f) == 3 for f in self.feats_ever)
        return any(len(f) == 3 for f in self.last_deal_feats)

    def _round_scores(self, r: RoundState) -> tuple[Fraction, ...]:
        n, p = self.n, r.params
        raw: list[Fraction]
        if r.kind == "pass":
            raw = [Fraction(t) for t in r.tricks]
        elif r.kind in ("grand", "trumps"):
            raw = [Fraction(-t) for t in r.tricks]
        elif r.kind == "clubs":
            counts = [(t & CLUBS_MASK).bit_count() for t in r.taken]
            raw = [Fraction(0 if c == 13 and p["all_taken_zero"] else c) for c in counts]
        elif r.kind == "queens":
            raw = [Fraction((t & QUEENS).bit_count() * p["points_per_queen"]) for t in r.taken]
        elif r.kind == "finale":
            raw = [
                Fraction(
                    (p["queen_of_clubs"] if t >> QUEEN_OF_CLUBS & 1 else 0)
                    + 4 * (t & QUEENS & ~(1 << QUEEN_OF_CLUBS)).bit_count()
                    + (t & CLUBS_MASK & ~(1 << QUEEN_OF_CLUBS)).bit_count()
                )
                for t in r.taken
            ]
        elif r.kind == "fan_tan":
            assert r.went_out is not None
            raw = [
                Fraction(
                    (0 if p["winner_scores_zero"] else r.passes[s])
                    if s == r.went_out
                    else r.passes[s] + r.hands[s].bit_count()
                )
                for s in range(n)
            ]
        elif r.kind == "hand":
            options = self.config.options
            raw = list(
                sixes_scores(
                    r.placed,
                    [d.bit_count() for d in r.dead],
                    split=options.get("split", "exact"),
                    pool=options.get("pool", "all_unplaced"),
                )
            )
        else:
            assert r.feats is not None
            raw = list(triathlon_scores(r.tricks, r.feats))
        return tuple(x * r.multiplier for x in raw)
