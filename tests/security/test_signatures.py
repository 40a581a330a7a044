"""Attacks on signed logs and results (issue 14, item 3), each caught by ``audit --key``: a
tampered checkpoint, a signature by another key, a checkpoint moved to another match or
another seq, a cut log with the valid checkpoint of the full one, no checkpoint at all, and
doctored results; bad keys given to the command line are usage errors (exit 2, one line)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from cardarena.clients.audit import audit_log
from cardarena.clients.audit.errors import Discrepancy
from cardarena.clients.audit.signature import (
    TrustedKey,
    check_signature,
    parse_keys,
    results_finding,
)
from cardarena.clients.cli import main
from cardarena.clients.logs import save_log
from cardarena.server.hosting.signing import Signer, checkpoint_pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..clients.audit_support import base_one_deal, clone

SERVER = Signer(Ed25519PrivateKey.generate())
OTHER = Signer(Ed25519PrivateKey.generate())


def trusted(signer: Signer) -> TrustedKey:
    return TrustedKey.of(signer.public_key)


def signed(signer: Signer = SERVER, **changes: object) -> spb.GetMatchLogResponse:
    """The clean log of a finished match, with ``signer``'s checkpoint of its last entry."""
    log = clone(base_one_deal().resp)
    last = log.entries[-1]
    record = signer.checkpoint(log.match.match_id, last.seq, last.hash)
    log.checkpoint.CopyFrom(checkpoint_pb(record))
    for name, value in changes.items():
        setattr(log.checkpoint, name, value)
    return log


def failure(log: spb.GetMatchLogResponse, *keys: Signer) -> str:
    report = audit_log(log, keys=[trusted(k) for k in keys or (SERVER,)])
    assert report.failure is not None, "the audit passed"
    assert report.failure.check == "signature", report.failure
    return report.failure.reason


def test_a_signed_log_passes_every_check_and_the_signature() -> None:
    report = audit_log(signed(), keys=[trusted(SERVER)])
    assert report.ok and report.passed[-1] == "signature"
    # With the keys of a rotation, the older key's log still verifies.
    assert audit_log(signed(OTHER), keys=[trusted(SERVER), trusted(OTHER)]).ok
    assert "signature" not in audit_log(signed()).passed  # not asked without keys


def test_a_tampered_checkpoint_fails() -> None:
    good = signed()
    flipped = bytes([good.checkpoint.signature[0] ^ 1]) + good.checkpoint.signature[1:]
    assert "does not verify with key" in failure(signed(signature=flipped))
    assert "is 3 bytes, not 64" in failure(signed(signature=b"abc"))
    # A forger who renames the signing key to one the auditor trusts gains nothing.
    assert "does not verify" in failure(signed(OTHER, key_id=SERVER.key_id))


def test_a_signature_by_another_key_fails_naming_both() -> None:
    reason = failure(signed(OTHER))
    assert f"signed by key {OTHER.key_id}" in reason
    assert f"none of the keys given ({SERVER.key_id})" in reason


def test_a_checkpoint_for_another_match_or_seq_fails() -> None:
    assert "is for match 'elsewhere'" in failure(signed(match_id="elsewhere"))
    last = base_one_deal().resp.entries[-1].seq
    assert f"ending at seq {last + 1}, this one ends at seq {last}" in failure(
        signed(last_seq=last + 1)
    )
    assert "vouches for last hash" in failure(signed(last_hash=bytes(32)))
    # Signed by the server for another match: valid, but not about this log.
    log = signed()
    other = SERVER.checkpoint("elsewhere", log.checkpoint.last_seq, log.checkpoint.last_hash)
    log.checkpoint.CopyFrom(checkpoint_pb(other))
    assert "is for match 'elsewhere'" in failure(log)


def test_a_cut_log_with_the_full_logs_valid_checkpoint_fails() -> None:
    full = signed()
    cut = clone(full)
    del cut.entries[-3:]
    cut.match.last_seq = cut.entries[-1].seq
    cut.match.last_hash = cut.entries[-1].hash
    assert not audit_log(cut, keys=[trusted(SERVER)]).ok
    with pytest.raises(Discrepancy, match="it was cut short"):
        check_signature(cut, cut.match.match_id, [trusted(SERVER)])


def test_a_log_without_checkpoint_fails_with_a_key() -> None:
    log = clone(base_one_deal().resp)
    assert "carries no checkpoint" in failure(log)


def results() -> tpb.TournamentInfo:
    info = tpb.TournamentInfo(
        tournament_id="t1",
        game="triathlon",
        players=3,
        seed_commitment="ab" * 32,
        seed=bytes(32),
        status=tpb.TOURNAMENT_STATUS_ENDED,
        planned=1,
        entrants=["a", "b", "c"],
    )
    info.matches.add(index=0, group=0, match_id="m0", last_hash=b"\x07" * 32)
    info.standings.add(entrant="a", matches=1, groups=1, mean=3.5, has_mean=True, wins=1.0)
    info.results_signature.CopyFrom(SERVER.sign_results(info))
    return info


def test_results_are_signed_over_the_standings_and_every_last_hash() -> None:
    assert results_finding(results(), [trusted(SERVER)]) is None
    favoured = results()
    favoured.standings[0].mean = 3.25
    assert "does not verify" in (results_finding(favoured, [trusted(SERVER)]) or "")
    repinned = results()
    repinned.matches[0].last_hash = bytes(32)
    assert "does not verify" in (results_finding(repinned, [trusted(SERVER)]) or "")
    assert f"signed by key {SERVER.key_id}" in (results_finding(results(), [trusted(OTHER)]) or "")


def test_a_checkpoint_cannot_pass_for_results_or_the_reverse() -> None:
    """Domain separation: the two statements are signed over byte strings that never meet."""
    info = results()
    point = signed().checkpoint
    info.results_signature.CopyFrom(
        spb.ResultsSignature(key_id=SERVER.key_id, signature=point.signature)
    )
    assert "does not verify" in (results_finding(info, [trusted(SERVER)]) or "")


def test_the_command_line_checks_the_key_and_exits_1_for_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.pb"
    save_log(signed(OTHER), path)
    assert main(["audit", str(path), "--key", SERVER.public_text]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] signature" in out and f"signed by key {OTHER.key_id}" in out
    keyring = tmp_path / "keys.txt"
    keyring.write_text(f"# the server's keys\n{SERVER.public_text}\n{OTHER.public_text}  # old\n")
    assert main(["audit", str(path), "--key", str(keyring)]) == 0
    assert "[ok  ] signature" in capsys.readouterr().out


def test_bad_keys_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "log.pb"
    save_log(signed(), path)
    private = tmp_path / "private.pem"
    private.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("ed25519:xyz\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    for bad, says in [
        ("ed25519:1234", "expected ed25519:<64 hex digits>"),
        (str(private), "holds a private key"),
        (str(garbage), "garbage.txt:1: expected ed25519"),
        (str(empty), "no key in it"),
    ]:
        with pytest.raises(SystemExit) as exited:
            main(["audit", str(path), "--key", bad])
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, err
    with pytest.raises(ValueError, match="holds a private key"):
        parse_keys(str(private))


def test_the_private_key_is_in_no_repr_or_public_text() -> None:
    pem = SERVER._private.private_bytes(
        serialization.Encoding.Raw,
        serialization.PrivateFormat.Raw,
        serialization.NoEncryption(),
    )
    shown = repr(SERVER) + SERVER.public_text
    assert pem.hex() not in shown and SERVER.key_id in repr(SERVER)
