"""Behind a load balancer or an ingress every client reaches the server from the proxy's
address, so one client's rate limits and stream caps would be everyone's: ``serve
--trusted-proxies`` names the proxies whose ``X-Forwarded-For`` says who the client is.

What a hostile client can do about it is pinned here: a header it sends itself straight to
the server is ignored; one it sends through a trusted proxy can only add addresses to the
left of the one the proxy appends, and those are never read.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.server.api.access import Access
from cardarena.server.api.grpcweb.gateway import GrpcWebGateway
from cardarena.server.api.grpcweb.http import Request
from cardarena.server.api.limits import (
    FORWARDED_FOR,
    WEB_CLIENT,
    ClientHosts,
    Rate,
    TrustedProxies,
    ip_address,
)
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import run
from .support import address_of, channel_to, code_of, served

PROXIES = TrustedProxies.parse("10.0.0.0/8, 127.0.0.1, fd00::/8")


def client(peer: str, forwarded: str | None) -> str:
    address = ip_address(peer)
    assert address is not None
    return str(PROXIES.client(address, forwarded))


def test_networks_and_addresses_parse_and_a_bad_one_is_named() -> None:
    assert TrustedProxies.parse("").networks == ()
    assert PROXIES.networks == (
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("127.0.0.1/32"),
        ipaddress.ip_network("fd00::/8"),
    )
    for bad in ("10.0.0.0/33", "proxy.example", "10.0.0.1,,x"):
        with pytest.raises(ValueError, match="expected an IP address or network"):
            TrustedProxies.parse(bad)


@pytest.mark.parametrize(
    ("peer", "forwarded", "expected"),
    [
        # The proxy appended the address it was reached from: that one is the client.
        ("10.0.0.5", "203.0.113.9", "203.0.113.9"),
        # What the client put to the left of it is its own claim, and never read.
        ("10.0.0.5", "6.6.6.6, 198.51.100.1, 203.0.113.9", "203.0.113.9"),
        # Through two trusted proxies, the first untrusted address from the right.
        ("10.0.0.5", "6.6.6.6, 203.0.113.9, 10.0.0.7", "203.0.113.9"),
        # Every hop trusted: the farthest of them.
        ("127.0.0.1", "10.1.1.1, 10.0.0.7", "10.1.1.1"),
    ],
)
def test_the_client_is_the_first_untrusted_hop_from_the_right(
    peer: str, forwarded: str | None, expected: str
) -> None:
    assert client(peer, forwarded) == expected


def test_nothing_past_what_cannot_be_believed_is_read() -> None:
    # A hop that is no address: nothing past it is believed, the nearest hop counts.
    assert client("10.0.0.5", "203.0.113.9, not-an-address") == "10.0.0.5"
    assert client("10.0.0.5", "203.0.113.9, not-an-address, 10.0.0.7") == "10.0.0.7"
    # No header, or an empty one: the proxy itself.
    assert client("10.0.0.5", None) == client("10.0.0.5", "") == "10.0.0.5"
    # A peer that is no trusted proxy names itself, whatever it sends.
    assert client("203.0.113.50", "198.51.100.1") == "203.0.113.50"


def test_hops_are_read_however_they_are_written() -> None:
    """IPv6 and bracketed hops, an IPv4-mapped peer as its IPv4, and hops written with their
    ports, as some load balancers write them."""
    assert client("fd00::1", "[2001:db8::7]") == "2001:db8::7"
    assert client("::ffff:10.0.0.5", "203.0.113.9") == "203.0.113.9"
    assert client("10.0.0.5", "203.0.113.9:4711") == "203.0.113.9"
    assert client("10.0.0.5", "[2001:db8::7]:80") == "2001:db8::7"


def test_a_client_inside_a_trusted_network_could_name_anyone() -> None:
    """The walk passes every trusted address, so trust the proxies' own addresses, never a
    network that clients use too (docs/protocol.md says so)."""
    assert client("10.1.2.3", "1.1.1.1, 10.9.9.9") == "1.1.1.1"


class Context:
    """What ClientHosts reads of a call."""

    def __init__(self, peer: str, metadata: tuple[tuple[str, str], ...] = ()) -> None:
        self._peer = peer
        self.metadata = metadata

    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata


def test_a_call_counts_against_the_client_its_trusted_proxy_names() -> None:
    hosts = ClientHosts(proxies=PROXIES)
    via_proxy = Context("ipv4:10.0.0.5:40123", ((FORWARDED_FOR, "6.6.6.6, 203.0.113.9"),))
    assert hosts.of(via_proxy) == "ipv4:203.0.113.9"
    # The same client straight to the server counts as the same address.
    assert hosts.of(Context("ipv4:203.0.113.9:5000")) == "ipv4:203.0.113.9"
    # Several headers read as one list, in the order they came.
    split = Context(
        "ipv6:%5B::1%5D:5000",
        ((FORWARDED_FOR, "203.0.113.9"), (FORWARDED_FOR, "2001:db8::7")),
    )
    trusting_loopback = ClientHosts(proxies=TrustedProxies.parse("::1"))
    assert trusting_loopback.of(split) == "ipv6:%5B2001:db8::/64%5D"
    # Straight from a client, the header is its own claim: ignored.
    direct = Context("ipv4:203.0.113.50:40123", ((FORWARDED_FOR, "198.51.100.1"),))
    assert hosts.of(direct) == "ipv4:203.0.113.50"
    # Without trusted proxies nobody's header is read.
    assert ClientHosts().of(via_proxy) == "ipv4:10.0.0.5"


def test_an_ipv6_client_counts_as_its_64_network() -> None:
    """One subscriber's /64 holds 2^64 addresses: counted apart, one host would have as many
    rate buckets and stream places as it liked."""
    hosts = ClientHosts("s" * 43)
    one = hosts.of(Context("ipv6:%5B2001:db8:1:2::5%5D:5000"))
    other = hosts.of(Context("ipv6:%5B2001:db8:1:2:ffff::9%5D:5000"))
    assert one == other == "ipv6:%5B2001:db8:1:2::/64%5D"
    assert hosts.of(Context("ipv6:%5B2001:db8:1:3::5%5D:5000")) != one
    browser = Context("ipv4:127.0.0.1:1", ((WEB_CLIENT, f"{'s' * 43} 2001:db8:1:2::77"),))
    assert hosts.of(browser) == "web:2001:db8:1:2::/64"
    # An IPv4-mapped peer (a dual-stack listener) is its IPv4 address.
    assert hosts.of(Context("ipv6:%5B::ffff:203.0.113.9%5D:5000")) == "ipv4:203.0.113.9"


def test_the_gateways_word_for_a_browser_comes_first() -> None:
    secret = "s" * 43
    hosts = ClientHosts(secret, PROXIES)
    both = Context(
        "ipv4:127.0.0.1:40123",
        ((FORWARDED_FOR, "203.0.113.9"), (WEB_CLIENT, f"{secret} 198.51.100.7")),
    )
    assert hosts.of(both) == "web:198.51.100.7"


class Conn:
    """What the gateway reads of a browser's connection to vouch for it."""

    def __init__(self, peer_host: str) -> None:
        self.peer_host = peer_host


def vouched(gateway: GrpcWebGateway, peer: str, headers: dict[str, str]) -> str | None:
    request = Request("POST", "/x", {"content-type": "application/grpc-web+proto", **headers})
    conn: Any = Conn(peer)
    return gateway._vouched(request, conn)


def test_the_gateway_vouches_for_the_browser_its_trusted_proxy_names() -> None:
    gateway = GrpcWebGateway("127.0.0.1:1", None, client_secret="k", proxies=PROXIES)
    forwarded = {FORWARDED_FOR: "6.6.6.6, 203.0.113.9"}
    assert vouched(gateway, "10.0.0.5", forwarded) == "k 203.0.113.9"
    assert vouched(gateway, "203.0.113.50", forwarded) == "k 203.0.113.50"
    assert vouched(gateway, "10.0.0.5", {}) == "k 10.0.0.5"
    plain = GrpcWebGateway("127.0.0.1:1", None, client_secret="k")
    assert vouched(plain, "10.0.0.5", forwarded) == "k 10.0.0.5"
    assert vouched(GrpcWebGateway("127.0.0.1:1", None), "10.0.0.5", forwarded) is None


BURST = 2


async def joins(api: Any, forwarded: str, count: int) -> list[str]:
    """``count`` JoinMatch calls for a match that does not exist, through a "proxy" that
    names ``forwarded``: NOT_FOUND while the address may join, then RESOURCE_EXHAUSTED."""
    codes = []
    for i in range(count):
        call = api.JoinMatch(
            spb.JoinMatchRequest(match_id=f"nope{i}"),
            metadata=((FORWARDED_FOR, forwarded),),
            timeout=RPC,
        )
        codes.append((await code_of(call)).name)
    return codes


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "not-trusted"])
def test_each_client_behind_a_trusted_proxy_has_its_own_rate_limit(
    tmp_path: Path, trusted: bool
) -> None:
    """This test's own client plays the proxy (it connects from 127.0.0.1)."""
    access = Access(join_rate=Rate(0.001, BURST))
    exhausted = ["NOT_FOUND"] * BURST + ["RESOURCE_EXHAUSTED"]

    async def scenario() -> None:
        async with (
            served(
                tmp_path, access=access, trusted_proxies="127.0.0.1" if trusted else ""
            ) as server,
            channel_to(address_of(server)) as (_, api),
        ):
            assert await joins(api, "203.0.113.1", BURST + 1) == exhausted
            other = await joins(api, "203.0.113.2", 1)
            # Trusted, the proxy's header tells the two clients apart; not trusted, a
            # header is only a client's claim and both calls count against 127.0.0.1.
            assert other == (["NOT_FOUND"] if trusted else ["RESOURCE_EXHAUSTED"])

    run(scenario())


def test_a_trusted_proxy_that_names_nobody_counts_as_itself(tmp_path: Path) -> None:
    """A trusted proxy that forwards without the header counts as itself."""

    async def scenario() -> None:
        async with (
            served(
                tmp_path, access=Access(join_rate=Rate(0.001, 1)), trusted_proxies="127.0.0.1"
            ) as server,
            channel_to(address_of(server)) as (_, api),
        ):
            codes = [
                await code_of(api.JoinMatch(spb.JoinMatchRequest(match_id="nope"), timeout=RPC))
                for _ in range(2)
            ]
            assert codes == [grpc.StatusCode.NOT_FOUND, grpc.StatusCode.RESOURCE_EXHAUSTED]

    run(scenario())
