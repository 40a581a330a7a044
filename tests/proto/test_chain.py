"""The two readings of the hash chain agree: ``first_break`` (the store's, over records) and
``first_break_of`` (the auditor's, over triples), on a sound log and on every single change."""

from __future__ import annotations

from cardarena.server.store import StoredEvent
from cardarena.v1.chain import chain_hash, first_break, first_break_of, genesis_hash


def chained(match_id: str, payloads: list[bytes]) -> list[StoredEvent]:
    prev, out = genesis_hash(match_id), []
    for seq, payload in enumerate(payloads, start=1):
        prev = chain_hash(prev, payload)
        out.append(StoredEvent(match_id, seq, payload, prev))
    return out


def test_both_readings_find_the_same_first_break() -> None:
    log = chained("m", [bytes([n]) * n for n in range(1, 8)])
    triples = [(e.seq, e.payload, e.hash) for e in log]
    assert first_break("m", log) is None and first_break_of("m", triples) is None
    assert first_break_of("other", triples) == first_break("other", log) == 1
    for at in range(len(log)):
        for change in ("seq", "payload", "hash"):
            broken = list(log)
            e = broken[at]
            broken[at] = StoredEvent(
                "m",
                e.seq + 1 if change == "seq" else e.seq,
                e.payload + b"x" if change == "payload" else e.payload,
                bytes(32) if change == "hash" else e.hash,
            )
            expected = first_break("m", broken)
            assert expected == at + 1
            assert first_break_of("m", [(x.seq, x.payload, x.hash) for x in broken]) == expected
