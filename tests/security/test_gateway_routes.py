"""Which calls the gRPC-Web gateway forwards: every unary and server-streaming method of the
three services (the browser app's match, tournament and ladder pages), never a client
stream."""

from __future__ import annotations

import grpc
import pytest

from cardarena.server.api.grpcweb.frames import Refused, frame
from cardarena.server.api.grpcweb.http import Request
from cardarena.server.api.grpcweb.proxy import METHODS, prepare_call


def call(path: str) -> Request:
    headers = {"content-type": "application/grpc-web+proto"}
    return Request("POST", path, headers, frame(b""))


@pytest.mark.parametrize(
    ("path", "streaming"),
    [
        ("/cardarena.v1.MatchService/WatchMatch", True),
        ("/cardarena.v1.MatchService/ListGames", False),
        ("/cardarena.v1.TournamentService/WatchTournament", True),
        ("/cardarena.v1.TournamentService/ListTournaments", False),
        ("/cardarena.v1.LadderService/GetLadder", False),
        ("/cardarena.v1.LadderService/ListLadders", False),
        ("/cardarena.v1.LadderService/GetLadderSnapshot", False),
    ],
)
def test_the_three_services_pass(path: str, streaming: bool) -> None:
    assert METHODS[path] is streaming
    assert prepare_call(call(path), 1024).path == path


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/cardarena.v1.MatchService/Play", "not available over gRPC-Web"),
        ("/cardarena.v1.Nothing/Here", "unknown method"),
    ],
)
def test_a_client_stream_or_an_unknown_method_is_refused(path: str, words: str) -> None:
    with pytest.raises(Refused) as refused:
        prepare_call(call(path), 1024)
    assert refused.value.code == grpc.StatusCode.UNIMPLEMENTED
    assert words in refused.value.message
