"""Fair admission at the gRPC-Web gateway (issue 29, part 4): idle connections cannot lock
new browsers out.

A cap on connections alone let one stranger holding every place (idle connections, opened
again as they timed out) shut every newcomer out: 1,100 idle connections and a new gRPC-Web
request was reset. Now, at the cap, an idle connection of the address holding the most makes
room; an address holding its share once the gateway is half full is refused with 503; a
connection with a request in flight is never shed; a kept-alive connection is closed after
the idle timeout; a refused connection waits a moment for its 503 while the hold has room, so
a refused client retries at the 503's pace. Distinct clients are distinct loopback addresses (Linux routes all of
127/8 to lo); every wait is bounded, nothing is timed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import resource
import socket
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from cardarena.server.api.grpcweb import GrpcWebGateway, refusals
from cardarena.server.api.grpcweb.admission import Admission, Slot, address_share
from cardarena.server.api.grpcweb.refusals import FD_MARGIN, JITTER, RefusalHold, hold_capacity
from cardarena.server.api.limits import TrustedProxies

from ..waiting import wait_until
from .test_gateway import (
    WAIT,
    WATCH_MATCH,
    Backend,
    backend,
    grpc_answer,
    grpc_web,
    head,
    http_status,
    read_to_end,
)

__all__ = ["backend"]  # the module's fixture, shared

LONG = 60.0  # a timeout no test waits for: the connections it guards stay open throughout


# --- the policy alone -----------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0  # every slot idle since a later moment than the one before
        return self.now


def admitted(admission: Admission, host: str) -> Slot:
    slot = admission.admit(host)
    assert isinstance(slot, Slot), f"{host} refused: {slot}"
    return slot


def test_the_share_is_a_floor_of_four_or_an_eighth_of_the_cap() -> None:
    assert address_share(8) == 4 and address_share(256) == 32 and address_share(1000) == 125


def test_alone_an_address_takes_half_the_cap_then_is_refused_for_its_share() -> None:
    admission = Admission(16, clock=Clock())
    got = 0
    while isinstance(admission.admit("10.0.0.1"), Slot):
        got += 1
    assert got == 8 and admission.refused == {"share": 1}
    # The other half is for others, each up to its share.
    assert [isinstance(admission.admit("10.0.0.2"), Slot) for _ in range(5)] == [True] * 4 + [False]


def test_at_the_cap_the_longest_idle_of_the_biggest_holder_makes_room() -> None:
    shed: list[str] = []
    admission = Admission(16, clock=Clock())
    for host, count in (("10.0.0.1", 8), ("10.0.0.2", 4), ("10.0.0.3", 4)):
        for n in range(count):
            slot = admitted(admission, host)
            slot.shed = functools.partial(shed.append, f"{host}#{n}")
            if host == "10.0.0.1":
                admission.busy(slot)  # the biggest holder's connections are all in flight
    newcomer = admitted(admission, "10.0.0.9")
    assert shed == ["10.0.0.2#0"], "the oldest idle one of the biggest holder that has one"
    assert len(admission) == 16 and admission.held["10.0.0.9"] == 1
    assert admission.shed_count == 1
    admission.busy(newcomer)
    for n in range(5):  # newcomers (then busy) take idle places, the bigger holder's first
        admission.busy(admitted(admission, f"10.0.1.{n}"))
    assert shed == [f"10.0.0.{host}#{n}" for n in range(3) for host in (2, 3)]
    # Each owner is down to one idle connection, as many as a newcomer would hold: no more
    # room is made for it (else equal holders would shed each other's places for ever).
    assert admission.admit("10.0.2.1") == "full"


def test_flooders_holding_as_many_as_each_other_do_not_shed_each_other() -> None:
    admission = Admission(256, clock=Clock())
    for n in range(256):
        admitted(admission, f"10.0.0.{n % 40}")  # 6 or 7 idle connections each
    assert admission.admit("10.0.0.39") == "full"  # holds 6, the most hold 7
    assert admission.shed_count == 0
    assert isinstance(admission.admit("10.0.9.9"), Slot)  # a newcomer still gets in
    assert admission.shed_count == 1


def test_with_every_connection_busy_a_newcomer_is_refused() -> None:
    admission = Admission(8, clock=Clock())
    for host in ("10.0.0.1", "10.0.0.2"):
        for _ in range(4):
            admission.busy(admitted(admission, host))
    assert admission.admit("10.0.0.3") == "full"
    assert admission.shed_count == 0


def test_a_trusted_proxy_is_held_to_the_cap_not_to_one_address_share() -> None:
    admission = Admission(8, TrustedProxies.parse("10.9.0.0/16"), clock=Clock())
    for _ in range(8):
        admission.busy(admitted(admission, "10.9.0.1"))
    assert admission.admit("10.9.0.1") == "full"
    assert admission.admit("10.0.0.1") == "full"


def test_an_ipv6_client_counts_as_its_64_and_a_mapped_ipv4_as_itself() -> None:
    admission = Admission(8, clock=Clock())
    for n in range(4):
        assert admitted(admission, f"2001:db8:0:1::{n + 1}").host == "2001:db8:0:1::/64"
    assert admission.admit("2001:db8:0:1:ffff::9") == "share"  # another address, the same /64
    assert admitted(admission, "2001:db8:0:2::1").host == "2001:db8:0:2::/64"
    assert admitted(admission, "::ffff:10.0.0.1").host == "10.0.0.1"


def test_a_released_place_is_free_again_once() -> None:
    admission = Admission(8, clock=Clock())
    slot = admitted(admission, "10.0.0.1")
    admission.release(slot)
    admission.release(slot)
    assert len(admission) == 0 and not admission.held


# --- the gateway, over loopback addresses ---------------------------------------------------


@contextlib.contextmanager
def gateway(backend: Backend, **limits: Any) -> Iterator[GrpcWebGateway]:
    """A gateway in front of the stand-in server, with these limits (a refusal held 0.1 s
    unless a test says otherwise: the tests below of the hold itself do)."""
    limits.setdefault("refusal_delay", 0.1)

    async def start() -> GrpcWebGateway:
        gateway = GrpcWebGateway(f"127.0.0.1:{backend.port}", None, **limits)
        await gateway.start("127.0.0.1", 0)
        return gateway

    running = backend.run(start())
    try:
        yield running
    finally:
        backend.run(running.close())


def client(port: int, host: str) -> socket.socket:
    """A connection to the gateway from loopback address ``host`` (127.0.0.2, ...)."""
    return socket.create_connection(("127.0.0.1", port), timeout=WAIT, source_address=(host, 0))


def holding(backend: Backend, gateway: GrpcWebGateway, count: int, idle: int) -> None:
    """Wait until the gateway holds ``count`` connections, ``idle`` of them idle."""

    async def counts() -> tuple[int, int]:
        slots = gateway.admission.slots
        return len(slots), sum(slot.idle for slot in slots)

    wait_until(
        lambda: backend.run(counts()) == (count, idle),
        within=WAIT,
        what=f"the gateway to hold {count} connections, {idle} idle",
    )


def idle_clients(port: int, host: str, count: int) -> list[socket.socket]:
    return [client(port, host) for _ in range(count)]


def streaming_clients(port: int, host: str, count: int) -> list[socket.socket]:
    """Connections each with a WatchMatch stream in flight (its first bytes received)."""
    sockets = []
    for _ in range(count):
        sock = client(port, host)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(grpc_web(b"", path=WATCH_MATCH))
        assert sock.recv(12) == b"HTTP/1.1 200"
        sockets.append(sock)
    return sockets


def closed_by_gateway(sock: socket.socket) -> bool:
    """Whether the gateway closed ``sock`` (an end of file or a reset, within WAIT)."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def served(port: int, host: str) -> tuple[int, list[bytes]]:
    with client(port, host) as sock:
        sock.sendall(grpc_web(b"newcomer"))
        return grpc_answer(read_to_end(sock))


def test_a_newcomer_is_served_when_idle_connections_fill_the_cap(backend: Backend) -> None:
    """Three addresses fill a cap of 8 with connections that send nothing; a browser from a
    fourth is served, and one idle connection made room for it: the oldest of the address
    holding the most, not the oldest of all."""
    with gateway(backend, max_connections=8, header_timeout=LONG) as running:
        port = running.port
        older = idle_clients(port, "127.0.0.3", 3)
        most = idle_clients(port, "127.0.0.2", 4)
        one = idle_clients(port, "127.0.0.4", 1)
        holding(backend, running, 8, 8)
        try:
            assert served(port, "127.0.0.5") == (0, [b"newcomer"])
            assert running.admission.shed_count == 1
            assert closed_by_gateway(most[0])
            assert running.admission.held["127.0.0.3"] == 3
            assert running.admission.held["127.0.0.4"] == 1
        finally:
            for sock in older + most + one:
                sock.close()


def test_a_flooder_beyond_its_share_is_refused_with_503(backend: Backend) -> None:
    with gateway(backend, max_connections=8, header_timeout=LONG) as running:
        port = running.port
        flood = idle_clients(port, "127.0.0.2", 4)
        holding(backend, running, 4, 4)
        try:
            with client(port, "127.0.0.2") as beyond:
                answer = read_to_end(beyond)
            assert http_status(answer) == 503
            assert running.admission.refused["share"] == 1
            assert served(port, "127.0.0.3") == (0, [b"newcomer"])  # others still get in
        finally:
            for sock in flood:
                sock.close()


def test_a_connection_with_a_request_in_flight_is_never_shed(backend: Backend) -> None:
    """Cap 16: one address holds 8 streams (the most of anyone), two others 4 idle each.
    Newcomers take the idle places, never a stream's, until the owners of the idle ones hold
    as few as a newcomer would; the next newcomer is refused with 503 and the streams go on."""
    backend.stream_ended.clear()
    with gateway(backend, max_connections=16, header_timeout=LONG, read_timeout=LONG) as running:
        port = running.port
        streams = streaming_clients(port, "127.0.0.2", 8)
        idle = idle_clients(port, "127.0.0.3", 4) + idle_clients(port, "127.0.0.4", 4)
        holding(backend, running, 16, 8)
        newcomers: list[socket.socket] = []
        try:
            for n in range(6):
                newcomers += streaming_clients(port, f"127.0.1.{n + 1}", 1)
            assert running.admission.shed_count == 6
            assert all(closed_by_gateway(sock) for sock in idle[:3] + idle[4:7])
            holding(backend, running, 16, 2)
            with client(port, "127.0.2.1") as refused:
                assert http_status(read_to_end(refused)) == 503
            assert running.admission.refused["full"] == 1
            assert running.admission.held["127.0.0.2"] == 8
            for sock in streams:  # each stream still sends
                assert sock.recv(4096)
            assert not backend.stream_ended.is_set()
        finally:
            for sock in streams + idle + newcomers:
                sock.close()


def test_a_kept_alive_connection_is_closed_after_the_idle_timeout(backend: Backend) -> None:
    """The header timeout (60 s) is far beyond the wait: the idle timeout closes it."""
    with gateway(backend, header_timeout=LONG, idle_timeout=0.2) as running:
        assert running.idle_timeout == 0.2
        with client(running.port, "127.0.0.2") as sock:
            sock.sendall(head("/", method=b"GET"))
            answer = sock.recv(4096)
            assert http_status(answer) == 404  # no web app here; the connection is kept
            assert b"connection: close" not in answer.lower()
            assert closed_by_gateway(sock)


@pytest.mark.parametrize("idle", [5.0, 100.0])
def test_the_idle_timeout_is_never_longer_than_the_header_timeout(idle: float) -> None:
    gateway = GrpcWebGateway("127.0.0.1:1", None, header_timeout=10.0, idle_timeout=idle)
    assert gateway.idle_timeout == min(idle, 10.0)


# --- refusals held a moment (issue 29: a refused client's retries at Retry-After's pace) -----


def has_answer(sock: socket.socket) -> bool:
    """Whether anything (or an end) has arrived on ``sock`` yet, without waiting for it."""
    sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        sock.setblocking(True)
        sock.settimeout(WAIT)
    return True


def test_a_refused_connection_waits_for_its_503_while_the_hold_has_room(
    backend: Backend,
) -> None:
    """Share of a cap of 8: 4. The fifth connection of the address is held (no answer yet,
    nothing read, a place in the hold); the hold's capacity is 1, so the sixth is answered 503
    at once; closing the gateway answers the held one 503 too."""
    running_gateway = gateway(
        backend, max_connections=8, header_timeout=LONG, refusal_delay=LONG, max_held=1
    )
    with running_gateway as running:
        port = running.port
        flood = idle_clients(port, "127.0.0.2", 4)
        holding(backend, running, 4, 4)
        held = client(port, "127.0.0.2")
        try:
            wait_until(lambda: len(running.refusals) == 1, within=WAIT, what="one refusal held")
            assert not has_answer(held)
            with client(port, "127.0.0.2") as beyond:
                assert http_status(read_to_end(beyond)) == 503
            assert running.refusals.answered_at_once == 1
            assert running.admission.refused["share"] == 2
            assert not has_answer(held)
            assert served(port, "127.0.0.3") == (0, [b"newcomer"])  # others still get in
        finally:
            for sock in flood:
                sock.close()
    assert http_status(read_to_end(held)) == 503  # the gateway closed: answered, not dropped
    held.close()


def test_a_held_refusal_is_answered_after_its_delay(backend: Backend) -> None:
    with gateway(backend, max_connections=8, header_timeout=LONG, refusal_delay=0.2) as running:
        port = running.port
        flood = idle_clients(port, "127.0.0.2", 4)
        holding(backend, running, 4, 4)
        try:
            with client(port, "127.0.0.2") as beyond:
                assert http_status(read_to_end(beyond)) == 503
            assert running.refusals.answered_at_once == 0
            wait_until(lambda: len(running.refusals) == 0, within=WAIT, what="the hold empty")
        finally:
            for sock in flood:
                sock.close()


@pytest.mark.parametrize(
    ("request_head", "status"),
    [
        (grpc_web(b"", frame_length=16 << 20).replace(b"length: 5", b"length: 16777221"), 200),
        (b"GET / HTTP/1.1\r\nhost: x\r\ncontent-length: nine\r\n\r\n", 400),
    ],
    ids=["too large", "malformed"],
)
def test_a_refused_request_is_answered_after_the_delay_unread(
    backend: Backend, request_head: bytes, status: int
) -> None:
    """A request refused once admitted waits the delay, as a refused connection does: a flood
    of 16 MiB bodies came back at once, each after a mebibyte read (issue 29, ``bodies``)."""
    with gateway(backend, refusal_delay=0.5) as running, client(running.port, "127.0.0.2") as sock:
        sock.sendall(request_head[: request_head.index(b"\r\n\r\n") + 4])
        started = time.monotonic()
        answer = read_to_end(sock)
        assert time.monotonic() - started >= 0.5 * (1 - JITTER), "answered before its delay"
    assert http_status(answer) == status
    if status == 200:
        assert grpc_answer(answer) == (grpc.StatusCode.RESOURCE_EXHAUSTED.value[0], [])


def test_holds_are_jittered_and_answered_in_the_order_they_fall_due(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A flood refused at once must not come back at once: held exactly a second, 1,100
    connections stayed in step, answered and back together each second (a burst the victim's
    slowest actions fell in). Each hold is the delay give or take ``JITTER`` of it, and a
    connection held less than one before it is answered first."""
    random.seed(29)
    holds = [refusals.jittered(1.0) for _ in range(1000)]
    assert all(1 - JITTER <= h <= 1 + JITTER for h in holds)
    assert max(holds) - min(holds) > JITTER  # spread over most of the range

    answered: list[int] = []

    async def scenario() -> None:
        delays = iter([0.6, 0.4, 0.2])  # the later, the sooner due (each its own wake-up)
        monkeypatch.setattr(refusals, "jittered", lambda _delay: next(delays))
        hold = RefusalHold(delay=1.0, capacity=8)
        pairs = [socket.socketpair() for _ in range(3)]
        try:
            for ours, _ in pairs:
                hold.refuse(ours)
            while len(answered) < 3:
                await asyncio.sleep(0.01)
                for n, (_, theirs) in enumerate(pairs):
                    theirs.setblocking(False)
                    with contextlib.suppress(BlockingIOError):
                        if n not in answered and theirs.recv(1024).startswith(b"HTTP/1.1 503"):
                            answered.append(n)
        finally:
            hold.close()
            for _, theirs in pairs:
                theirs.close()

    asyncio.run(asyncio.wait_for(scenario(), 10))
    assert answered == [2, 1, 0]


def test_the_more_are_held_the_longer_each_new_one_waits_and_is_told_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The idle flood's 1,100 connections from 250 addresses, some 850 held at any time, came
    back about 900 times a second held a second each: the accepts, 503s and reconnections of a
    flood cost a two-core machine's victim its p99. Each refusal is held one delay more for
    each ``HELD_STEP`` held already, up to ``MAX_STRETCH`` delays, and its ``Retry-After``
    says how long it was held; a refusal while few are held waits about the delay."""
    assert refusals.stretch(0) == 1.0
    assert refusals.stretch(6) < 1.05  # a browser's six connections refused together
    assert refusals.stretch(100_000) == refusals.MAX_STRETCH
    monkeypatch.setattr(refusals, "HELD_STEP", 4)
    asked: list[float] = []

    def unjittered(delay: float) -> float:
        asked.append(delay)
        return delay

    monkeypatch.setattr(refusals, "jittered", unjittered)
    count = 4 * refusals.MAX_STRETCH
    answers: list[bytes] = []

    async def scenario() -> None:
        hold = RefusalHold(delay=0.02, capacity=64)
        pairs = [socket.socketpair() for _ in range(count)]
        try:
            for ours, _ in pairs:
                hold.refuse(ours)
            while len(hold):
                await asyncio.sleep(0.01)
            for _, theirs in pairs:
                answers.append(read_to_end(theirs))
        finally:
            hold.close()
            for _, theirs in pairs:
                theirs.close()

    asyncio.run(asyncio.wait_for(scenario(), 20))
    assert asked == [0.02 * min(refusals.MAX_STRETCH, 1 + i / 4) for i in range(count)]
    assert all(http_status(answer) == 503 for answer in answers)
    # A hold rounded to whole seconds, at least one; a long one says so.
    left, right = socket.socketpair()
    with left, right:
        refusals.refuse_now(left, 3.6)
        assert b"\r\nRetry-After: 4\r\n" in read_to_end(right)
    assert all(b"\r\nRetry-After: 1\r\n" in answer for answer in answers)


def test_the_hold_takes_no_more_file_descriptors_than_the_limit_leaves() -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hold_capacity(256, wanted=10**9) == max(0, soft - 256 - FD_MARGIN)
    assert hold_capacity(256, wanted=3) == min(3, max(0, soft - 256 - FD_MARGIN))
    assert hold_capacity(soft, wanted=10) == 0
