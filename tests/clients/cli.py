"""Running the ``cardarena`` command in-process, for the command-line tests."""

from __future__ import annotations

import pytest

from cardarena.clients.cli import main


def refusal(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The last line of what ``cardarena *argv`` says when it refuses (exit 2, no traceback)."""
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]
