"""MatchInfo: what anyone may know about a match, from memory or from its stored record."""

from __future__ import annotations

import datetime
import json
import weakref
from dataclasses import dataclass

from google.protobuf.message import Message

from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.clocks import TimeControl

from ..hosting import Arena, HostedMatch
from ..hosting.outcome import Outcome
from ..hosting.subscribers import message_field
from ..store import ENDED, MatchRecord
from .kept import KeptBytes

STATUS_OF = {
    "waiting": spb.MATCH_STATUS_WAITING,
    "running": spb.MATCH_STATUS_RUNNING,
    "ended": spb.MATCH_STATUS_ENDED,
}


async def settled_info(hosted: HostedMatch) -> spb.MatchInfo:
    """``match_info`` between writes: under the match's lock, so that a reader never sees the
    engine's state of an action whose write is still in flight (status ENDED with the seq and
    hash of the entry before the end)."""
    async with hosted.lock:
        return match_info(hosted)


_FINAL: weakref.WeakKeyDictionary[HostedMatch, spb.MatchInfo] = weakref.WeakKeyDictionary()
"""The MatchInfo of each ended match in memory (released by its group: the embargo only ever
lifts), made once. Building one costs about 50 µs of the event loop (its options as a Struct
above all), and a page of ended matches is a hundred of them, asked for again and again; a
copy of the one made is a few µs. Weak: a match dropped from memory drops its info."""


def match_info(hosted: HostedMatch) -> spb.MatchInfo:
    final = _FINAL.get(hosted)
    if final is None:
        seats = [
            spb.SeatInfo(seat=i, taken=s.token_hash is not None, name=s.name)
            for i, s in enumerate(hosted.seats)
        ]
        built = _info(hosted.record, hosted.status, seats, hosted.outcome())
        if not hosted.ended or hosted.held_back:
            return built
        final = _FINAL[hosted] = built
    info = spb.MatchInfo()
    info.CopyFrom(final)  # the caller's to change (the embargo redacts what it lists)
    return info


@dataclass(frozen=True, slots=True)
class Unsettled:
    """A listed match that is not final: its info, for the embargo to show as the reader may
    see it (``hosted``: the match in memory; ``None``: read from its stored record, ended but
    its seed not yet revealed, so its duplicate group still holds it back)."""

    info: spb.MatchInfo
    hosted: HostedMatch | None


async def listed_infos(
    arena: Arena, records: list[MatchRecord], finals: KeptBytes
) -> list[bytes | Unsettled]:
    """A page of listed matches: a final one as its line kept in ``finals`` (made and kept
    the first time: :func:`listed_field`); from memory those hosted here; an ended one from
    its stored outcome and seats, read for the whole page at once (rows, no log read once
    its outcome is kept, nothing hosted); anything else loaded."""
    kept = {r.match_id: data for r in records if (data := finals.get(r.match_id)) is not None}
    stored = [
        r
        for r in records
        if r.match_id not in kept and r.match_id not in arena.matches and r.status == ENDED
    ]
    outcomes = await arena.stored_outcomes(stored) if stored else {}
    seated = await arena.stored_seat_names([r.match_id for r in stored]) if stored else {}
    page: list[bytes | Unsettled] = []
    for record in records:
        data = kept.get(record.match_id)
        if data is not None:
            page.append(data)
            continue
        outcome = outcomes.get(record.match_id)
        if outcome is None:
            hosted = arena.matches.get(record.match_id) or await arena.get(record.match_id)
            async with hosted.lock:  # between writes, as settled_info
                final = hosted.ended and not hosted.held_back
                info = match_info(hosted)
            page.append(_kept(finals, info) if final else Unsettled(info, hosted))
            continue
        taken = seated.get(record.match_id, {})
        seats = [
            spb.SeatInfo(seat=i, taken=i in taken, name=taken.get(i, ""))
            for i in range(record.players)
        ]
        info = _info(record, "ended", seats, outcome)
        page.append(_kept(finals, info) if outcome.revealed else Unsettled(info, None))
    return page


def _kept(finals: KeptBytes, info: spb.MatchInfo) -> bytes:
    """A final match's line, kept for the next page that lists it."""
    data = listed_field(info)
    finals.keep(info.match_id, data)
    return data


MATCHES = spb.ListMatchesResponse.DESCRIPTOR.fields_by_name["matches"].number


def listed_field(info: spb.MatchInfo) -> bytes:
    """``info`` as one of a ``ListMatchesResponse``'s matches: the field, framed."""
    return message_field(MATCHES, info.SerializeToString())


def page_bytes(response: type[Message], listed: list[bytes], next_page_token: str) -> bytes:
    """A page of a list (``ListMatchesResponse``, ``ListTournamentsResponse``) as sent, from
    its items' fields, each framed already (:func:`listed_field`), and its token."""
    if next_page_token:
        token = response.DESCRIPTOR.fields_by_name["next_page_token"].number
        listed = [*listed, message_field(token, next_page_token.encode())]
    return b"".join(listed)


def _info(
    record: MatchRecord, status: str, seats: list[spb.SeatInfo], outcome: Outcome
) -> spb.MatchInfo:
    """MatchInfo from the match's settings, its seats and what its log says so far."""
    config = json.loads(record.config)
    reserved = config.get("reserved", {})
    for seat in seats:
        seat.reserved = str(seat.seat) in reserved
        seat.faults = outcome.faults[seat.seat]
        seat.forfeited = outcome.forfeited[seat.seat]
    info = spb.MatchInfo(
        match_id=record.match_id,
        game=record.game,
        players=record.players,
        options=codec.struct_of(config["options"]),
        status=STATUS_OF[status],
        seats=seats,
        created_unix_ms=_unix_ms(record.created_at),
        seed_commitment=record.commitment,
        last_seq=outcome.last_seq,
        # Only once ended: the chain commits to every stored entry, the deal's hidden hands
        # included, so a live match's hash lets a reader who knows the rest of the log find
        # the hands by trying each way the unseen cards could lie (a few seconds late in a
        # round, about a minute for a whole Triathlon deal).
        last_hash=outcome.last_hash if status == "ended" else b"",
        time_control=spb.TimeControl(**TimeControl.from_settings(config).settings()),
        totals=[codec.score_to_pb(t) for t in outcome.totals],
        winners=list(outcome.winners),
        cancelled=outcome.cancelled,
        tournament_id=str(config.get("tournament", "")),
    )
    if outcome.revealed:
        info.seed = record.seed
    return info


def _unix_ms(iso: str) -> int:
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
