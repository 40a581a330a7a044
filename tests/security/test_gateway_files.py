"""The gateway's static files (the browser app): nothing outside the web root is served,
whatever the path says, and links inside it (an editable install's) are followed."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_gateway import Backend, backend, exchange, head, http_status

__all__ = ["backend"]  # the module's fixture, shared


@pytest.mark.parametrize(
    "path", ["/../secret", "/%2e%2e/secret", "/dist/..%2f..%2fsecret", "/./index.html", "/a\\b"]
)
def test_no_path_climbs_out_of_the_web_root(backend: Backend, tmp_path: Path, path: str) -> None:
    root = tmp_path / "web"
    (root / "dist").mkdir(parents=True)
    (root / "index.html").write_text("page")
    (tmp_path / "secret").write_text("do not serve")
    with backend.gateway(root) as port:
        answer = exchange(port, head(path, b"connection: close", method=b"GET"))
    assert http_status(answer) == 404
    assert b"do not serve" not in answer


def test_a_link_inside_the_web_root_is_served(backend: Backend, tmp_path: Path) -> None:
    """An editable install links each file of the app back to the checkout."""
    (tmp_path / "checkout").mkdir()
    (tmp_path / "checkout" / "app.js").write_text("linked")
    root = tmp_path / "web"
    (root / "dist").mkdir(parents=True)
    (root / "dist" / "app.js").symlink_to(tmp_path / "checkout" / "app.js")
    with backend.gateway(root) as port:
        answer = exchange(port, head("/dist/app.js", b"connection: close", method=b"GET"))
        missing = exchange(port, head("/nothing", b"connection: close", method=b"GET"))
    assert http_status(answer) == 200 and answer.endswith(b"linked")
    assert http_status(missing) == 404
    assert b"not installed on this server" in missing  # no index.html: the log says more
    assert str(tmp_path).encode() not in missing
