"""Run the server: gRPC with health and reflection, the store, metrics, logs, graceful drain."""

from __future__ import annotations

import asyncio
import gc
import secrets
import signal
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import grpc
import structlog
import structlog.tracebacks
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2
from prometheus_client import start_http_server

from cardarena.v1 import ladder_pb2, service_pb2, tournament_pb2
from cardarena.v1 import service_pb2 as spb

from . import metrics
from .api import Access, MatchService, TournamentService, add_service
from .api.grpcweb import MAX_MESSAGE_BYTES, WEB_ROOT
from .api.grpcweb.process import GatewayProcess, GatewaySettings
from .api.grpcweb.webapp import missing
from .api.ladders import LadderService
from .api.limits import ClientHosts, TrustedProxies
from .api.peers import FORWARD_TIMEOUT, OwnerUnreachable, Peers
from .api.streams import WATCH_STREAMS
from .errors import NotRunning
from .hosting import Arena, HostedMatch
from .hosting.arena import IDLE_EXPIRY_SECONDS, WAITING_EXPIRY_SECONDS
from .hosting.clock import RECONNECT_GRACE_S
from .hosting.signing import Signer, load_signer, signer_in
from .house import IDLE_SECONDS, HouseBots, HouseSettings
from .ladders import Ladders
from .logs import configure_logging
from .store import Owner, SqliteStore, StoreError, open_store
from .tournaments import Tournaments
from .tournaments.groups import GroupProgress

SERVICE_NAME = service_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name
TOURNAMENT_SERVICE = tournament_pb2.DESCRIPTOR.services_by_name["TournamentService"]
LADDER_SERVICE = ladder_pb2.DESCRIPTOR.services_by_name["LadderService"]

MAX_PENDING_CALLS = 20_000
"""How many calls the server holds while they wait for its event loop (``serve
--max-pending-calls``): one unary call in flight for every seat of 5,000 four-seat matches.

grpc.aio takes calls up one at a time, one per turn of the event loop, so under load nearly
every call in flight waits in gRPC core's queue, not in the server. Core refuses a call that
finds the queue at ``grpc.server.max_pending_requests_hard_limit`` (default 3,000) and, above
``grpc.server.max_pending_requests`` (default 1,000), refuses at random: either way the client
sees CANCELLED with no message. Both are set to this one bound, so no call is refused below it
and every one beyond it is, at once: a bound on what a flood of calls can make the server
hold. Core also cancels a call that waited 30 s in its queue
(``grpc.server_max_unrequested_time_in_server``), left as it is: a server that far behind is
overloaded whatever the bound."""


class HealthService(health.aio.HealthServicer):
    """gRPC's health service: grpcio-health-checking's servicer (Check, Watch) and ``List``,
    which its 1.85.1 answers UNIMPLEMENTED although the service (and so reflection) has it.
    ``List`` answers every service's status, as ``Check`` would, from what was ``set``."""

    def __init__(self) -> None:
        super().__init__()
        self.statuses: dict[str, int] = {"": health_pb2.HealthCheckResponse.SERVING}
        """Every service's status, as the servicer holds it (it starts with "" serving)."""
        self._draining = False

    async def set(self, service: str, status: int) -> None:
        await super().set(service, status)
        if not self._draining:  # the servicer ignores a set once it is shutting down
            self.statuses[service] = status

    async def enter_graceful_shutdown(self) -> None:
        await super().enter_graceful_shutdown()
        self._draining = True
        for name in self.statuses:
            self.statuses[name] = health_pb2.HealthCheckResponse.NOT_SERVING

    async def List(  # noqa: N802 (gRPC's method name)
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Any:
        messages: Any = health_pb2  # HealthList* are newer than the lock's type stubs
        return messages.HealthListResponse(
            statuses={
                name: health_pb2.HealthCheckResponse(status=status)
                for name, status in self.statuses.items()
            }
        )


REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
"""Server reflection's stable name. grpcio-reflection (1.85.1, the lock's) serves only
``grpc.reflection.v1alpha`` (grpc/grpc#38576); v1's messages are v1alpha's field for field
under another package, so the v1alpha servicer answers v1 calls as they are on the wire."""


def _reflection_v1_file() -> None:
    """Put ``grpc/reflection/v1/reflection.proto`` in the default descriptor pool (made from
    v1alpha's, the package renamed), so that reflection can describe the v1 service too."""
    pool = descriptor_pool.Default()
    name = "grpc/reflection/v1/reflection.proto"
    try:
        pool.FindFileByName(name)
        return  # already there (a grpcio-reflection with v1, or a second server)
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name = name
    proto.package = "grpc.reflection.v1"
    proto.ClearField("options")
    old, new = ".grpc.reflection.v1alpha.", ".grpc.reflection.v1."
    for message in proto.message_type:
        for message_field in message.field:
            if message_field.type_name:
                message_field.type_name = message_field.type_name.replace(old, new)
    for service in proto.service:
        for method in service.method:
            method.input_type = method.input_type.replace(old, new)
            method.output_type = method.output_type.replace(old, new)
    pool.Add(proto)


def add_reflection(server: grpc.aio.Server, services: tuple[str, ...]) -> None:
    """Server reflection, v1alpha and v1, listing ``services`` and both reflection services."""
    _reflection_v1_file()
    names = (*services, reflection.SERVICE_NAME, REFLECTION_V1)
    reflection.enable_server_reflection(names, server)  # v1alpha
    servicer = reflection.aio.ReflectionServicer(names)
    v1 = grpc.method_handlers_generic_handler(
        REFLECTION_V1,
        {
            "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
                servicer.ServerReflectionInfo,
                request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
                response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((v1,))


def grpc_options(max_pending_calls: int = MAX_PENDING_CALLS) -> list[tuple[str, int]]:
    """The gRPC server's channel options, holding at most ``max_pending_calls`` waiting calls."""
    if max_pending_calls < 1:
        raise ValueError(f"max_pending_calls must be at least 1, got {max_pending_calls}")
    return [
        # One server per port unless deliberately configured otherwise: no silent cross-talk.
        ("grpc.so_reuseport", 0),
        # Tolerate clients that ping every ~20 s, also between calls.
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.http2.max_pings_without_data", 0),
        # A closed loop of many matches, or a reconnect storm after a restart, keeps this
        # many calls waiting for the event loop: none may be refused below the bound.
        ("grpc.server.max_pending_requests", max_pending_calls),
        ("grpc.server.max_pending_requests_hard_limit", max_pending_calls),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        # No bandwidth-delay probing: it grows each stream's receive window so that a client
        # pushing a body far over the limit gets megabytes buffered before it is refused (8
        # senders of 16 MiB: +79 MiB and 2 s of CPU with it, +3 MiB and 0.15 s without).
        # Every request of this protocol is a few hundred bytes, so the fixed window costs
        # nothing; a client that stops reading is still dropped when its queue fills
        # (tests/security/test_streams_bounded.py).
        ("grpc.http2.bdp_probe", 0),
    ]


GRPC_OPTIONS = grpc_options()


@dataclass(frozen=True)
class ServeConfig:
    listen: str = "127.0.0.1:50051"
    data_dir: Path = Path("data")
    metrics_port: int = 9464
    metrics_host: str = "127.0.0.1"
    log_level: str = "info"
    drain_seconds: float = 5.0
    # gRPC-Web gateway and web app HOST:PORT; None: off.
    web: str | None = None
    web_root: Path = WEB_ROOT
    # Event store URL; None: SQLite in data_dir. postgresql://… makes this process a replica.
    store: str | None = None
    # HOST:PORT other replicas forward to; None: the listen address (its host if concrete).
    advertise: str | None = None
    lease_seconds: float = 5.0
    # Who may create and cancel (the operator token; None: anyone, for local use) and the
    # per-peer rates of creating and joining.
    access: Access = field(default_factory=Access)
    # A match still waiting for seats this long after its creation is cancelled; 0: never.
    waiting_expiry_seconds: float = WAITING_EXPIRY_SECONDS
    # A running match without a clock that has gone this long without a write is cancelled.
    idle_expiry_seconds: float = IDLE_EXPIRY_SECONDS
    # The Ed25519 key that signs checkpoints and results (PEM); None: signing-key.pem in
    # data_dir, generated on first start.
    signing_key: Path | None = None
    # Calls held while they wait for the event loop; beyond it gRPC core refuses them.
    max_pending_calls: int = MAX_PENDING_CALLS
    # Spectator streams (WatchMatch, WatchTournament) one client address may hold open.
    watch_streams: int = WATCH_STREAMS
    # After an outage, how long seats not yet back are not timed (hosting.clock.Reconnection).
    reconnect_grace_seconds: float = RECONNECT_GRACE_S
    # The proxies in front of the server or its gateway whose X-Forwarded-For names the client
    # its per-address limits count; none: every call counts against its own peer.
    trusted_proxies: TrustedProxies = field(default_factory=TrustedProxies)
    # House bots (server.house): at most this many seats played by the server's own bots at
    # once (0: none), in this many worker processes; a match with house seats whose players
    # have had no stream open this long is cancelled.
    house_bots: int = 0
    house_workers: int = 1
    house_idle_seconds: float = IDLE_SECONDS


def count_matches(arena: Arena) -> None:
    """The matches gauge, from the counts the arena keeps as statuses change (O(1))."""
    for state, count in arena.counts.items():
        metrics.MATCHES.labels(state).set(count)


class Server:
    """A started server; ``port`` is the bound port (useful with port 0)."""

    async def _join_at_peer(self, address: str, request: spb.JoinMatchRequest) -> bool:
        """A tournament's join, forwarded to the replica that writes the match (see
        ``tournaments.seating``): ``False`` if it does not answer."""
        assert self.peers is not None
        try:
            await self.peers.forward(
                address,
                "JoinMatch",
                lambda stub, metadata: stub.JoinMatch(
                    request, metadata=metadata, timeout=FORWARD_TIMEOUT
                ),
                None,
            )
        except OwnerUnreachable:
            return False
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
                raise NotRunning(error.details() or "the match has ended") from None
            raise
        return True

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.store = open_store(
            config.store, data_dir=config.data_dir, on_commit=metrics.observe_commit
        )
        self.replica = secrets.token_hex(6)
        """This process's identity as a lease holder: new at every start."""
        self.peers = Peers(self.replica) if self.store.shared else None
        self.arena = Arena(self.store, on_change=self._changed)
        self.arena.reconnection.grace_s = self.config.reconnect_grace_seconds
        self.web_secret = secrets.token_urlsafe(32) if config.web is not None else None
        """What the gateway vouches for a browser's address with (:class:`ClientHosts`)."""
        self.tournaments = Tournaments(
            self.arena, join_elsewhere=None if self.peers is None else self._join_at_peer
        )
        self.ladders = Ladders(self.arena)
        self.house = HouseBots(
            self.arena,
            HouseSettings(config.house_bots, config.house_workers, config.house_idle_seconds),
        )
        self.service = MatchService(
            self.arena,
            self.peers,
            config.access,
            hosts=ClientHosts(self.web_secret, config.trusted_proxies),
            watch_streams=config.watch_streams,
            groups=self._group_of,
            house=self.house,
        )
        self.tournament_service = TournamentService(
            self.tournaments, self.service.guard, self.service.streams
        )
        self.ladder_service = LadderService(
            self.ladders, self.service.guard, self.service.streams, self.peers
        )
        self.health = HealthService()
        self.grpc = grpc.aio.server(options=grpc_options(config.max_pending_calls))
        self.port = 0
        self.metrics_port = 0
        self.web: GatewayProcess | None = None
        self.web_port = 0
        self._stopped = asyncio.Event()

    def _changed(self, hosted: HostedMatch) -> None:
        count_matches(self.arena)
        self.tournaments.match_changed(hosted)
        self.ladders.match_changed(hosted)
        self.house.match_changed(hosted)

    async def _group_of(self, hosted: HostedMatch) -> GroupProgress | None:
        """Where the duplicate group of a tournament's or a ladder's match stands."""
        found = await self.ladders.group_of(hosted)
        return found if found is not None else await self.tournaments.group_of(hosted)

    async def start(self) -> None:
        logger = structlog.get_logger("cardarena.server")
        if self.config.access.operator_token is None:
            logger.warning(
                "server_open",
                hint="anyone who reaches this port may create matches; set --admin-token"
                " (env CARDARENA_ADMIN_TOKEN) on a server others can reach",
            )
        else:
            logger.info("server_locked", hint="creating and cancelling need the operator token")
        given = self.config.signing_key
        signer = load_signer(given) if given is not None else None  # a bad key fails fast
        if isinstance(self.store, SqliteStore):
            self.config.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            await self.store.open()
        except StoreError:
            raise
        except Exception as error:  # the driver's own: name the store, keep its first line
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise StoreError(
                f"cannot open {self.store.where}: {first or type(error).__name__}"
            ) from None
        if self.peers is not None:
            self.peers.secret = (await self.store.peer_secret()).hex()
        if signer is None:  # made only once the store is there: a failed start leaves none
            signer = signer_in(self.config.data_dir)
        await signer.publish(self.store)  # every replica and every later one can verify it
        self.arena.signer = signer
        try:  # grpcio refuses an address it cannot bind with 0 or with a RuntimeError
            self.port = self.grpc.add_insecure_port(self.config.listen)
        except RuntimeError:
            self.port = 0
        if self.port == 0:
            raise OSError(f"could not listen on {self.config.listen}")
        if self.store.shared:
            self.arena.replicate_as(
                Owner(self.replica, self.advertised(), int(self.config.lease_seconds * 1000))
            )
        resumed = await self.arena.resume_unfinished()
        await self.tournaments.resume_unfinished()
        await self.ladders.resume_unfinished()
        self.arena.expire_after(self.config.waiting_expiry_seconds, self.config.idle_expiry_seconds)
        count_matches(self.arena)
        add_service(
            self.grpc,
            service_pb2.DESCRIPTOR.services_by_name["MatchService"],
            self.service,
            self.service.refuse_undecodable,
        )
        add_service(
            self.grpc, TOURNAMENT_SERVICE, self.tournament_service, self.service.refuse_undecodable
        )
        add_service(self.grpc, LADDER_SERVICE, self.ladder_service, self.service.refuse_undecodable)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.grpc)
        names = (
            SERVICE_NAME,
            TOURNAMENT_SERVICE.full_name,
            LADDER_SERVICE.full_name,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        )
        add_reflection(self.grpc, names)
        await self.grpc.start()
        for name in ("", SERVICE_NAME):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        if self.config.metrics_port >= 0:
            metrics.time_collections()
            httpd, _ = start_http_server(
                self.config.metrics_port, self.config.metrics_host, registry=metrics.REGISTRY
            )
            self.metrics_port = httpd.server_port
        host = self.config.listen.rsplit(":", 1)[0]
        if self.config.web is not None:
            local = "127.0.0.1" if host in ("0.0.0.0", "[::]", "") else host
            web_host, web_port = self.config.web.rsplit(":", 1)
            self.web = GatewayProcess(
                GatewaySettings(
                    f"{local}:{self.port}",
                    self.config.web_root,
                    client_secret=self.web_secret,
                    proxies=self.config.trusted_proxies,
                    log_level=self.config.log_level,
                )
            )
            self.web_port = await self.web.start(web_host.strip("[]"), int(web_port))
            web_log(self.config.web_root, web_host, self.web_port)
        loopback = "127.0.0.1" if host in ("0.0.0.0", "[::]", "") else host
        await self.house.start(f"{loopback}:{self.port}")  # its workers call this server
        logger.info(
            "listening",
            address=f"{host}:{self.port}",
            metrics_port=self.metrics_port,
            web_port=self.web_port,
            resumed=resumed,
            store=self.store.where,
            replica=self.replica if self.store.shared else None,
            signing_key_id=signer.key_id,
        )

    def advertised(self) -> str:
        """Where other replicas reach this one: ``--advertise``, else the listen host (or, for
        a wildcard, this host's address) and the bound port."""
        if self.config.advertise:
            return self.config.advertise
        host = self.config.listen.rsplit(":", 1)[0].strip("[]")
        if host in ("0.0.0.0", "::", ""):
            try:
                host = socket.gethostbyname(socket.gethostname())
            except OSError:
                host = "127.0.0.1"
            if host.startswith("127."):
                structlog.get_logger("cardarena.server").warning(
                    "advertise_loopback",
                    advertise=host,
                    hint="replicas on other hosts cannot forward here: set --advertise",
                )
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"

    async def drain(self) -> None:
        """NOT_SERVING first, then tell streams to resume elsewhere, finish calls, flush the store."""
        await self.health.enter_graceful_shutdown()
        self.service.draining = True
        await self.house.shutdown()
        await self.tournaments.shutdown()
        await self.ladders.shutdown()
        await self.arena.shutdown()
        await self.grpc.stop(self.config.drain_seconds)
        if self.peers is not None:
            await self.peers.close()
        if self.web is not None:
            await self.web.close()
        await self.store.close()
        self._stopped.set()

    async def wait(self) -> None:
        await self._stopped.wait()


def server_signer(config: ServeConfig) -> Signer:
    """The key ``--signing-key`` names, else the data directory's (made on first use)."""
    if config.signing_key is not None:
        return load_signer(config.signing_key)
    return signer_in(config.data_dir)


def web_log(web_root: Path, host: str, port: int) -> None:
    """Say where the browser app is served, or why it cannot be: a 404 alone says nothing."""
    log = structlog.get_logger("cardarena.server")
    why = missing(web_root)
    if why is None:
        log.info("web_app_served", url=f"http://{host}:{port}/", root=str(web_root.resolve()))
    else:
        log.warning("web_app_missing", reason=why, grpc_web_port=port)


FULL_COLLECTION_AFTER: Final = 1000
"""Collections of the middle generation before a full one may run (Python's default: 10)."""


def tune_collector() -> None:
    """Keep the garbage collector's pauses out of the event loop's way, in two steps.

    First, what the process made to start (modules, classes, functions, its settings) moves to
    the collector's permanent generation, out of every later collection: a full collection
    walks every tracked object, and a server's are mostly its code. Called once, before any
    match is hosted: what is frozen is never freed if it becomes cyclic garbage, and start-up
    objects do not. Measured on ``bench_server.py --rate half --matches 200`` (2026-12-01):
    full collections of 90–115 ms without this, 35–78 ms with it.

    Then full collections are made rare. By default one may follow every tenth collection of
    the middle generation, and a busy server promotes many objects that die soon after (a
    call's messages, an action's futures), so at 1,000 matches one ran every 2–4 s and took
    150–340 ms, about a twentieth of the time with the loop stopped; each freed about 50
    objects. After 1,000 middle collections they ran twice in a 90 s run, at the same memory.
    Young cycles are still collected as before; only cyclic garbage that outlived two
    generations waits longer. (This is the generational collector of CPython 3.11–3.13; an
    incremental collector ignores the third threshold.)"""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_AFTER)


async def run(config: ServeConfig) -> None:
    configure_logging(config.log_level)
    server = Server(config)
    await server.start()
    loop = asyncio.get_running_loop()
    draining: list[asyncio.Task[None]] = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(
            signum, lambda: draining.append(asyncio.create_task(server.drain()))
        )
    # The line tests and scripts read to learn the port.
    print(f"cardarena listening on {config.listen.rsplit(':', 1)[0]}:{server.port}", flush=True)
    if config.web is not None:
        print(f"cardarena web on {config.web.rsplit(':', 1)[0]}:{server.web_port}", flush=True)
    await server.wait()
