"""Many match logs audited at once, in worker processes.

Why processes: an audit is pure Python CPU (decoding, the chain, the replay), so threads would
take turns on one core; a tournament's logs are independent, so a pool of processes audits
them side by side. Each job travels as the log's bytes (a protobuf message is not picklable
as such, and bytes are what a log is anyway). The workers start from a fork server, not by
forking this process: the caller may hold gRPC channels and threads, which must not be
copied into a child mid-flight. Few logs are audited here, where a pool would cost more than
it saves.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Final

from cardarena.v1 import service_pb2 as spb

from .auditor import audit_log
from .signature import TrustedKey

IN_PROCESS_BELOW: Final = 4
"""Fewer logs than this are audited in this process."""


@dataclass(frozen=True)
class Job:
    log: spb.GetMatchLogResponse
    match_id: str
    head: bytes
    keys: list[TrustedKey] | None


@dataclass(frozen=True)
class Found:
    """The first discrepancy of one log: the check that failed and what it says."""

    check: str
    text: str


_Wire = tuple[bytes, str, bytes, list[TrustedKey] | None]


def default_workers() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def audit_one(
    log: spb.GetMatchLogResponse, match_id: str, head: bytes, keys: list[TrustedKey] | None
) -> Found | None:
    report = audit_log(log, match_id=match_id, head=head or None, keys=keys)
    failure = report.failure
    if failure is None:
        return None
    where = f"at seq {failure.seq}" if failure.seq is not None else "in MatchInfo or the seed"
    return Found(failure.check, f"{failure.check} check failed {where}: {failure.reason}")


def _audit_wire(job: _Wire) -> Found | None:
    data, match_id, head, keys = job
    return audit_one(spb.GetMatchLogResponse.FromString(data), match_id, head, keys)


def audit_many(jobs: Sequence[Job], *, workers: int = 1) -> dict[str, Found | None]:
    """Each job's match id and its first discrepancy (``None``: clean)."""
    if workers <= 1 or len(jobs) < IN_PROCESS_BELOW:
        return {j.match_id: audit_one(j.log, j.match_id, j.head, j.keys) for j in jobs}
    wire = [(j.log.SerializeToString(), j.match_id, j.head, j.keys) for j in jobs]
    context = multiprocessing.get_context("forkserver")
    size = min(workers, len(jobs))
    with ProcessPoolExecutor(max_workers=size, mp_context=context) as pool:
        found = list(pool.map(_audit_wire, wire, chunksize=max(1, len(wire) // (4 * size))))
    return {j.match_id: f for j, f in zip(jobs, found, strict=True)}
