"""Time-outs in a Fan Tan round with voluntary passes, as the auditor and every reader see them.

There the default action is the pass whenever the pass is legal (docs/protocol.md, "Time
controls and the default action"), so a timed-out seat that holds a playable card passes:
its ``TimedOut`` and ``Passed`` read exactly as those of a seat that had no card to play, for
every seat and spectator. The auditor accepts them, and holds a time-out followed by a card
where the pass was legal (the default of old, which told that the seat could play) to be a
discrepancy.
"""

from __future__ import annotations

import random

from cardarena.clients.audit import audit_log
from cardarena.engine import PASS, Match, setup
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..logs import log_from_engine
from .audit_support import NAMES, SEED

OPTIONS = {"rounds": ["fan_tan"], "fan_tan": {"voluntary_pass": True}}
SLOW = 1
"""The seat that times out on every turn (as a forfeited seat is played)."""


def kind_of(legal: list[int]) -> str:
    """What a seat's legal actions say about its hand, which its time-out must not tell."""
    if legal == [PASS]:
        return "could not play"
    return "could play, may pass" if PASS in legal else "could play, must play"


def play(*, old_default_at: int | None = None) -> tuple[Match, list[int], list[str]]:
    """A one-round voluntary-pass Fan Tan in which seat ``SLOW`` always times out and the
    others play at random, passing often; the log index of each of its time-outs, and what
    its legal actions were there (:func:`kind_of`).

    With ``old_default_at``, the time-out at that log index plays the lowest legal card instead
    (the forger's log); the others play on at random from there."""
    match = setup("pentathlon", players=4, options=OPTIONS).start(SEED)
    rng = random.Random(7)
    timed_out: list[int] = []
    kinds: list[str] = []
    while not match.over:
        seat, legal = match.to_act, match.legal_actions()
        assert seat is not None
        if seat == SLOW:
            timed_out.append(len(match.log))
            kinds.append(kind_of(legal))
            action = legal[0] if len(match.log) == old_default_at else match.default_action()
        elif PASS in legal and rng.random() < 0.7:
            action = PASS
        else:
            action = rng.choice(legal)
        match.apply(seat, action)
    return match, timed_out, kinds


def log_of(match: Match, timed_out: list[int]) -> spb.GetMatchLogResponse:
    return log_from_engine(
        match, SEED, "voluntary", names=NAMES[:4], timed_out=timed_out, move_ms=500
    )


def after_time_outs(resp: spb.GetMatchLogResponse) -> list[pb.Event]:
    """The entry after each TimedOut of the log, in order."""
    entries = [pb.Event.FromString(e.event) for e in resp.entries]
    return [entries[e.seq] for e in entries if e.WhichOneof("kind") == "timed_out"]


def test_a_timed_out_seat_that_could_play_passes_and_reads_like_one_that_could_not() -> None:
    match, timed_out, kinds = play()
    assert set(kinds) == {"could not play", "could play, may pass", "could play, must play"}
    resp = log_of(match, timed_out)
    report = audit_log(resp)
    assert report.ok, report.failure
    acted = after_time_outs(resp)
    # A pass wherever the pass was legal, a card only where the seat had to play.
    for kind, event in zip(kinds, acted, strict=True):
        assert (event.WhichOneof("kind") == "passed") == (kind != "could play, must play"), kind
    could = acted[kinds.index("could play, may pass")]
    could_not = acted[kinds.index("could not play")]
    assert (could.passed.reason, could_not.passed.reason) == (
        pb.PASS_REASON_CHOSEN,
        pb.PASS_REASON_FORCED,
    ), "the full log knows"
    for reader in (0, 1, 2, 3, None):
        seen = [codec.project_pb(e, reader, voluntary_pass=True) for e in (could, could_not)]
        for event in seen:
            event.seq = 0
        hidden = pb.Event(passed=pb.Passed(seat=SLOW, reason=pb.PASS_REASON_HIDDEN))
        assert seen[0] == seen[1] == hidden, reader


def test_a_time_out_followed_by_a_card_where_the_pass_was_legal_is_a_discrepancy() -> None:
    _, timed_out, kinds = play()
    k = kinds.index("could play, may pass")
    match, timed_out, _ = play(old_default_at=timed_out[k])
    resp = log_of(match, timed_out)
    report = audit_log(resp)
    assert report.failure is not None, "the old default passed the audit"
    forged = after_time_outs(resp)[k]  # the same k-th time-out: play is the same up to it
    assert forged.WhichOneof("kind") == "card_played"
    seq = forged.seq
    assert (report.failure.check, report.failure.seq) == ("server", seq), report.failure
    told = f"seat {SLOW} timed out at seq {seq - 1}: its default action is pass"
    assert told in report.failure.reason
