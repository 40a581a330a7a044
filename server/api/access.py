"""Who may do what: the operator token and the per-address rate limits."""

from __future__ import annotations

import contextlib
import hmac
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import grpc
import structlog

from ..errors import Forbidden, Throttled
from .anonymous import PER_ADDRESS, TOTAL
from .limits import ClientHosts, Rate, RateLimiter
from .peers import Peers
from .reads import READ_SHARE, ReadGate, ReadLimits
from .requests import MAX_REASON, check_text, credential
from .status import Context, Refused

log = structlog.get_logger(__name__)

T = TypeVar("T")


class Cancellable(Protocol[T]):
    """Where matches or tournaments are found by id, and their creators known."""

    noun: str
    """What it holds, as a refusal names it: "match", "tournament"."""

    async def get(self, key: str) -> T: ...

    def may_cancel(self, target: T, secret: str) -> bool: ...


@dataclass(frozen=True)
class Access:
    """Who may do what: the operator token (``None``: an open server, for local use), the
    per-peer rates of creating and joining for everyone but the operator, how many unended
    matches anonymous creators may hold (per address, in all: :mod:`.anonymous`), and the
    share of the event loop anonymous reads may hold (:mod:`.reads`)."""

    operator_token: str | None = None
    create_rate: Rate = field(default_factory=lambda: Rate(50.0, 500))
    join_rate: Rate = field(default_factory=lambda: Rate(200.0, 2000))
    anonymous_matches: tuple[int, int] = (PER_ADDRESS, TOTAL)
    read_share: float = READ_SHARE


class Throttles:
    """Per-peer limits, and a warning about a peer at most once a second."""

    def __init__(self, access: Access, hosts: ClientHosts) -> None:
        self.hosts = hosts
        self.create = RateLimiter(access.create_rate)
        self.join = RateLimiter(access.join_rate)
        self._warned: OrderedDict[str, float] = OrderedDict()

    def check(self, limiter: RateLimiter, call: str, context: Any) -> None:
        wait = limiter.wait_for(self.hosts.of(context))
        if wait > 0:
            retry_ms = max(1, int(wait * 1000 + 0.999))
            raise Throttled(
                f"too many {call} calls from this address: retry in {retry_ms} ms", retry_ms
            )

    def warn(self, context: Any, event: str, **fields: Any) -> None:
        """Log ``event`` for this peer unless it was logged for it in the last second."""
        peer = self.hosts.of(context)
        now = time.monotonic()
        if now - self._warned.get(peer, -1.0) < 1.0:
            return
        self._warned[peer] = now
        self._warned.move_to_end(peer)
        while len(self._warned) > 10_000:
            self._warned.popitem(last=False)
        log.warning(event, peer=peer, **fields)


class Guard:
    """The checks of who is calling: the operator, a replica, or anyone (limited)."""

    def __init__(
        self, access: Access, peers: Peers | None, hosts: ClientHosts | None = None
    ) -> None:
        self.access = access
        self.peers = peers
        self.hosts = hosts or ClientHosts()
        self.throttles = Throttles(access, self.hosts)
        self.reads = ReadGate(ReadLimits(share=access.read_share))

    def is_operator(self, context: Context) -> bool:
        """Whether the call carries the operator token (constant-time compare)."""
        token = self.access.operator_token
        offered = credential(context)
        return (
            token is not None
            and offered is not None
            and hmac.compare_digest(offered.encode(), token.encode())
        )

    def proven(self, context: Context) -> bool:
        """Whether the call proved who it is: the operator, or another replica forwarding."""
        return self.is_operator(context) or (
            self.peers is not None and self.peers.vouched(context.invocation_metadata())
        )

    @contextlib.asynccontextmanager
    async def reading(self, context: Context) -> AsyncIterator[None]:
        """An anonymous read's turn at the gate (:mod:`.reads`); a proven caller needs none."""
        if self.proven(context):
            yield
            return
        async with self.reads.turn(self.hosts.of(context)):
            yield

    def limit(self, limiter: RateLimiter, call: str, context: Context) -> None:
        """Everyone but the operator, and but calls another replica forwards, is limited (that
        replica limited the client already)."""
        if not self.proven(context):
            self.throttles.check(limiter, call, context)

    def may_create(self, context: Context, call: str = "CreateMatch") -> None:
        """A locked server creates for its operator only; everyone is rate-limited (matches
        and tournaments share one budget per address)."""
        if self.access.operator_token is not None and not self.is_operator(context):
            if credential(context) is None:
                raise Refused(
                    grpc.StatusCode.UNAUTHENTICATED,
                    "this server creates matches for its operator only: send the operator"
                    " token as metadata 'authorization: Bearer <token>'",
                )
            raise Forbidden("the credential is not this server's operator token")
        self.limit(self.throttles.create, call, context)

    async def cancelling(
        self, registry: Cancellable[T], key: str, given: str, context: Context
    ) -> tuple[T, str]:
        """The match or tournament ``key`` names in ``registry``, and why it is cancelled in
        the words of its log: by whom, and the reason they gave (if any). In the order the
        protocol pins: a bad reason is refused before the target is looked up, and an unknown
        target before anyone's credential is read."""
        check_text("reason", given, MAX_REASON)
        target = await registry.get(key)
        who = self._canceller(registry.noun, lambda s: registry.may_cancel(target, s), context)
        return target, f"cancelled by {who}: {given}" if given else f"cancelled by {who}"

    def _canceller(self, what: str, is_creator: Callable[[str], bool], context: Context) -> str:
        """Who is cancelling: the operator, or the creator (``is_creator(secret)``, constant
        time); anyone else is refused."""
        secret = credential(context)
        if secret is None:
            raise Refused(
                grpc.StatusCode.UNAUTHENTICATED,
                f"send the operator token or the {what}'s creator secret as metadata"
                " 'authorization: Bearer <secret>'",
            )
        if self.is_operator(context):
            return "the operator"
        if is_creator(secret):
            return "its creator"
        raise Forbidden(f"only the operator or the {what}'s creator may cancel it")
