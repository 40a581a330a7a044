"""``cardarena tournament create|status|results|watch|cancel`` and the settings they share with
the launcher (issue 30, part 1), without a server: each flag sets its one request field, the
stop rule is read and refused as the server would, invitations are TOML that reads back and
files only their owner reads, secrets come from files or the environment and are never
echoed, and an action's flags are refused before it rather than dropped."""

from __future__ import annotations

import argparse
import asyncio
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.cli import access, competition
from cardarena.clients.cli.settings import add_settings, request_of, settings, sprt_rule
from cardarena.clients.client import StopRule
from cardarena.clients.tournament.botspec import parse_bot
from cardarena.clients.tournament.invitations import (
    Invitation,
    existing,
    file_stems,
    write_invitations,
)
from cardarena.clients.tournament.launcher import ENTRY_MS, HostedConfig, create
from cardarena.v1 import tournament_pb2 as tpb

from .cli import refusal

SECRET = "s3cr3t-" + "x" * 36


def parsed(*argv: str, who: str = "entrant") -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_settings(parser, who)
    return parser.parse_args(list(argv))


def test_every_setting_sets_its_one_field_of_the_request() -> None:
    request = request_of(
        parsed(
            "--game",
            "triathlon",
            "--players",
            "3",
            "--options",
            '{"deals": 2}',
            "--deals",
            "5",
            "--concurrency",
            "7",
            "--move-ms",
            "1500",
            "--forfeit-after",
            "0",
            "--seed",
            "ab" * 32,
            "--entry-ms",
            "5000",
            "--sprt",
            "a=x,b=y,d1=2.5,d0=-1,alpha=0.1,beta=0.2",
            "--name",
            "Cup",
        ),
        "entrant",
    )
    assert request.game == "triathlon" and request.players == 3
    assert dict(request.options) == {"deals": 2}
    assert (request.deals, request.concurrency, request.time_control.move_ms) == (5, 7, 1500)
    assert request.fault_policy.WhichOneof("policy") == "fallback"
    assert request.seed == bytes.fromhex("ab" * 32) and request.entry_ms == 5000
    assert request.stop == tpb.SprtRule(a="x", b="y", d0=-1, d1=2.5, alpha=0.1, beta=0.2)
    assert request.name == "Cup"
    assert not request.entrants and not request.creator_secret


def test_the_defaults_make_the_servers_defaults() -> None:
    request = request_of(parsed("--game", "hexathlon"), "entrant")
    assert request.fault_policy.forfeit_after == 3 and request.time_control.move_ms == 10_000
    assert not request.HasField("stop") and request.seed == b"" and request.concurrency == 4
    assert request.deals == 2 and request.players == 0


def test_the_launcher_and_create_take_the_same_settings() -> None:
    assert [s.flag for s in settings("bot")] == [s.flag for s in settings("entrant")]
    assert len({s.dest for s in settings("bot")}) == len(settings("bot"))
    launcher = argparse.ArgumentParser()
    created = competition.add_actions(launcher)["create"]
    for setting in settings("entrant"):
        assert setting.flag in created._option_string_actions


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("a=x,b=y,d1=3", StopRule("x", "y", d1=3.0)),
        ("b=y, a=x, d1=3, d0=1", StopRule("x", "y", d1=3.0, d0=1.0)),
        ('{"a": "x, y", "b": "z", "d1": 3, "beta": 0.1}', StopRule("x, y", "z", d1=3.0, beta=0.1)),
    ],
)
def test_the_stop_rule_reads_as_pairs_or_json(text: str, rule: StopRule) -> None:
    assert sprt_rule(text) == rule


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("a=x,b=y", "give a=ENTRANT, b=ENTRANT and d1=POINTS"),
        ("a=x,b=x,d1=1", "a and b are the same"),
        ("a=x,b=y,d1=1,d0=1", "d1 (1) must be greater than d0 (1)"),
        ("a=x,b=y,d1=nan", "d1 is a finite number"),
        ("a=x,b=y,d1=lots", "d1 is a number"),
        ("a=x,b=y,d1=2000000", "within"),
        ("a=x,b=y,d1=1,alpha=0.5", "alpha is in (0, 0.5)"),
        ("a=x,b=y,d1=1,beta=0", "beta is in (0, 0.5)"),
        ("a=x,b=y,d1=1,gamma=2", "the keys are a, b, d0, d1, alpha, beta; not gamma"),
        ("x", "expected a=A,b=B,d1=D1"),
        ('{"a": "x",', "not JSON"),
        ('{"a": "x", "b": "y", "d1": true}', "d1 is a number"),
    ],
)
def test_a_bad_stop_rule_is_refused_naming_what(text: str, says: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        sprt_rule(text)
    assert says in str(refused.value)


def invitation(name: str = "alice", stem: str = "alice", key: str = SECRET) -> Invitation:
    return Invitation(
        server="arena.example.org:50051",
        tournament_id="9c80f23ff66169f9",
        entrant=name,
        key=key,
        stem=stem,
        game="triathlon",
        players=3,
        deals=2,
        move_ms=2000,
        entry_closes_unix_ms=1_700_000_000_000,
    )


@pytest.mark.parametrize("name", ["alice", 'O"Brien \\ co', "Zoë 🂡", "tab\there", "a" * 64])
def test_an_invitation_is_toml_that_reads_back_whatever_the_name(name: str) -> None:
    made = invitation(name)
    read = tomllib.loads(made.toml())
    assert read["entrant"] == name and read["key"] == SECRET
    assert read["command"] == (
        "cardarena bot connect --server arena.example.org:50051 --tournament"
        " 9c80f23ff66169f9 --key-file alice.key BOT"
    )
    assert read["entry_closes"].isoformat() == "2023-11-14T22:13:20+00:00"
    assert SECRET not in repr(made)


def test_file_names_are_safe_and_unique_whatever_the_names() -> None:
    stems = file_stems(["alice", "Alice", "../etc/passwd", "-rf", "a b", "a_b", "...", "x/y"])
    assert stems == ["alice", "Alice-2", "_etc_passwd", "rf", "a_b", "a_b-2", "entrant", "x_y"]
    assert all("/" not in stem and not stem.startswith((".", "-")) for stem in stems)


def test_invitations_are_new_files_only_their_owner_reads(tmp_path: Path) -> None:
    folder = tmp_path / "invitations"
    sent = [invitation("alice", "alice", "k" * 43), invitation("bob", "bob", "j" * 43)]
    written = write_invitations(folder, sent)
    assert written == [folder / "alice.toml", folder / "bob.toml"]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (folder / "bob.key").read_text() == "j" * 43 + "\n"
    assert existing(folder, ["alice", "carol"]) == [folder / "alice.toml", folder / "alice.key"]
    with pytest.raises(FileExistsError):
        write_invitations(folder, [invitation("carol", "carol"), invitation("bob", "bob")])
    assert not (folder / "carol.toml").exists() and not (folder / "carol.key").exists()


def test_a_secret_file_is_read_and_never_echoed(tmp_path: Path) -> None:
    good = tmp_path / "token"
    good.write_text(SECRET + "\n")
    assert access.secret_file(str(good)) == SECRET
    spaced = tmp_path / "spaced"
    spaced.write_text(f"{SECRET} {SECRET}\n")
    for path, says in [
        (spaced, "does not hold a secret"),
        (tmp_path / "missing", "cannot read"),
        (tmp_path, "cannot read"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError) as refused:
            access.secret_file(str(path))
        assert says in str(refused.value) and SECRET not in str(refused.value)
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(argparse.ArgumentTypeError, match="is empty"):
        access.secret_file(str(tmp_path / "empty"))


def test_the_operator_token_comes_from_a_flag_a_file_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(access.TOKEN_ENV, "from-env")
    none = argparse.Namespace(admin_token=None, admin_token_file=None)
    assert access.operator_token(none) == "from-env"
    assert access.operator_token(argparse.Namespace(admin_token_file="file")) == "file"
    assert access.operator_token(argparse.Namespace(admin_token="flag")) == "flag"
    with pytest.raises(ValueError, match="give the operator token once"):
        access.operator_token(argparse.Namespace(admin_token="a", admin_token_file="b"))
    monkeypatch.delenv(access.TOKEN_ENV)
    assert access.operator_token(none) is None


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("--deals", "3", "create"), "--deals before 'create': an action's flags go after it"),
        (("--server", "10.0.0.1:5", "status", "x"), "--server before 'status'"),
        (("--bot", "random", "results", "x"), "--bot before 'results'"),
        (("frob",), "invalid choice: 'frob'"),
        (("status",), "the following arguments are required: ID"),
        (("status", "a b"), "not a tournament id"),
        (("create", "--game", "triathlon", "--entrant", "a"), "at least 2 entrants"),
        (("create", "--entrant", "a", "--entrant", "b"), "name the game and at least 2"),
        (
            ("create", "--game", "g", "--entrant", "a", "--entrant", "a", "--invitations", "-"),
            "an entrant is named twice: 'a'",
        ),
        (("create", "--game", "g", "--entrant", "a", "--entrant", "b"), "say where the invit"),
        (
            ("create", "--game", "g", "--entrant", "a", "--entrant", "b", "--sprt", "a=a,b=c,d1=1"),
            "--sprt: 'c' is not one of the entrants ('a', 'b')",
        ),
        (("--game", "triathlon", "--bot", "random", "--sprt", "a=z,b=random,d1=1"), "of the bots"),
    ],
)
def test_bad_actions_are_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], says: str
) -> None:
    assert says in refusal(capsys, "tournament", *argv)


def test_existing_invitations_are_refused_before_anything_is_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    called: list[Any] = []

    async def never(*args: Any) -> int:
        called.append(args)
        return 0

    monkeypatch.setattr(competition, "_created", never)
    (tmp_path / "bob.key").write_text("old")
    (tmp_path / "secret").write_text("old")
    common = ["tournament", "create", "--game", "g", "--entrant", "alice", "--entrant", "bob"]
    said = refusal(capsys, *common, "--invitations", str(tmp_path))
    assert f"{tmp_path / 'bob.key'} exists: an invitation is never written over a file" in said
    said = refusal(
        capsys, *common, "--invitations", "-", "--creator-secret-file", str(tmp_path / "secret")
    )
    assert "exists: a secret is never written over a file" in said
    assert not called


class Recorder:
    """A client whose ``tournaments.create_from`` records the request it is given."""

    def __init__(self) -> None:
        self.tournaments = self
        self.sent: list[tpb.CreateTournamentRequest] = []

    async def create_from(self, request: tpb.CreateTournamentRequest) -> Any:
        self.sent.append(request)
        return tpb.CreateTournamentResponse(tournament=tpb.TournamentInfo(tournament_id="t"))


def hosted(template: tpb.CreateTournamentRequest | None) -> HostedConfig:
    bots = [parse_bot("random"), parse_bot("r2=rules")]
    return HostedConfig(
        address="127.0.0.1:1", game="triathlon", bots=bots, deals=3, template=template
    )


def test_the_launcher_sends_the_settings_request_with_its_bots_keys() -> None:
    """The command line's request, whole, with an entrant and a fresh key per bot, a creator
    secret, a request id, and the launcher's entry window when none was asked for."""
    template = request_of(parsed("--game", "triathlon", "--sprt", "a=random,b=r2,d1=4"), "bot")
    client = Recorder()
    created = asyncio.run(create(client, hosted(template)))  # type: ignore[arg-type]
    (sent,) = client.sent
    assert [e.name for e in sent.entrants] == ["random", "r2"]
    assert [e.key for e in sent.entrants] == created.keys and len(set(created.keys)) == 2
    assert sent.creator_secret == created.creator_secret and len(sent.request_id) == 32
    assert sent.stop.a == "random" and sent.entry_ms == ENTRY_MS
    assert not template.entrants  # the template itself is left as it was


def test_the_launcher_without_a_template_sends_its_fields() -> None:
    client = Recorder()
    asyncio.run(create(client, hosted(None)))  # type: ignore[arg-type]
    (sent,) = client.sent
    assert (sent.game, sent.deals, sent.time_control.move_ms) == ("triathlon", 3, 10_000)
    assert sent.fault_policy.forfeit_after == 3 and sent.entry_ms == ENTRY_MS


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ({"creator_secret_file": Path("cup.secret")}, " --creator-secret-file cup.secret"),
        ({"admin_token_file": Path("admin-token")}, " --admin-token-file admin-token"),
        ({}, ""),  # a token from the environment: the hinted command finds it there too
    ],
)
def test_the_cancel_hint_names_the_credential_create_was_given(
    capsys: pytest.CaptureFixture[str], given: dict[str, Path], hint: str
) -> None:
    """The hint once said `cardarena tournament cancel ID --server S` alone, which a locked
    server refuses (UNAUTHENTICATED): it names the file that holds the credential now."""
    args = argparse.Namespace(
        server="127.0.0.1:50051",
        creator_secret_file=given.get("creator_secret_file"),
        admin_token_file=given.get("admin_token_file"),
    )
    info = tpb.TournamentInfo(tournament_id="t1", game="triathlon", players=3)
    competition._tell_created(info, args, [], [])
    said = capsys.readouterr().err
    assert f"end it: cardarena tournament cancel t1 --server 127.0.0.1:50051{hint}\n" in said
