"""Registering the service so that undecodable requests are the client's error.

grpcio's generated registration decodes each request with ``FromString``; bytes that are not
a valid message make the call fail as UNKNOWN with the Python exception in its details. Here
each request type decodes leniently to :class:`Undecodable` instead, which the handlers answer
as INVALID_ARGUMENT, naming the message type and nothing else.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, MethodDescriptor, ServiceDescriptor
from google.protobuf.message import DecodeError, Message

from .. import metrics


class Undecodable:
    """A request whose bytes are not a valid message of its type."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    @property
    def message(self) -> str:
        return f"request is not a valid {self.type_name} message"


def lenient(cls: type[Message]) -> Callable[[bytes], Message | Undecodable]:
    """A request deserializer that never raises."""
    name = cls.DESCRIPTOR.full_name

    def decode(data: bytes) -> Message | Undecodable:
        try:
            return cls.FromString(data)
        except (DecodeError, RecursionError, ValueError):
            return Undecodable(name)

    if metrics.STAGE_TIMES:
        return _timed(decode, "decode")
    return decode


def _timed(step: Callable[[Any], Any], stage: str) -> Callable[[Any], Any]:
    """``step`` timed as ``stage`` (``CARDARENA_STAGE_TIMES=1``): gRPC calls it between
    stretches of the server's own work, so it is a stretch of its own."""

    def timed(value: Any) -> Any:
        metrics.begin()
        result = step(value)
        metrics.lap(stage)
        return result

    return timed


def _as_bytes(serialize: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """A response serializer that sends bytes as they are: a stream hands on a published
    event serialized once for all its readers (``hosting.Told.wire``), not a message."""

    def as_bytes(message: Any) -> bytes:
        if message.__class__ is bytes:
            return message
        return serialize(message)

    return as_bytes


Refuse = Callable[[Undecodable, grpc.aio.ServicerContext[Any, Any]], Awaitable[None]]


def _unary(behavior: Any, refuse: Refuse) -> Any:
    async def handle(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        if isinstance(request, Undecodable):
            await refuse(request, context)
        return await behavior(request, context)

    return handle


def _server_stream(behavior: Any, refuse: Refuse) -> Any:
    async def handle(
        request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        if isinstance(request, Undecodable):
            await refuse(request, context)
        async for item in behavior(request, context):
            yield item

    return handle


def _handler(
    method: MethodDescriptor, behavior: Any, refuse: Refuse
) -> grpc.RpcMethodHandler[Any, Any]:
    request = lenient(_message_class(method.input_type))
    response = _as_bytes(_message_class(method.output_type).SerializeToString)
    if metrics.STAGE_TIMES:
        response = _timed(response, "send: serialize")
    if method.client_streaming and method.server_streaming:  # the handler checks each item
        return grpc.stream_stream_rpc_method_handler(behavior, request, response)
    if method.client_streaming:
        return grpc.stream_unary_rpc_method_handler(behavior, request, response)
    if method.server_streaming:
        return grpc.unary_stream_rpc_method_handler(
            _server_stream(behavior, refuse), request, response
        )
    return grpc.unary_unary_rpc_method_handler(_unary(behavior, refuse), request, response)


def _message_class(descriptor: Descriptor) -> type[Message]:
    cls: type[Message] = message_factory.GetMessageClass(descriptor)
    return cls


def add_service(
    server: grpc.aio.Server, descriptor: ServiceDescriptor, servicer: Any, refuse: Refuse
) -> None:
    """Register every method of ``descriptor`` on ``server``, served by ``servicer``."""
    handlers = {
        method.name: _handler(method, getattr(servicer, method.name), refuse)
        for method in descriptor.methods
    }
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(descriptor.full_name, handlers),)
    )
