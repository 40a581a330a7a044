"""Where the server finds the browser app, and what it says when it cannot serve it."""

from __future__ import annotations

from pathlib import Path

from structlog.testing import capture_logs

from cardarena.server.api.grpcweb import WEB_ROOT
from cardarena.server.api.grpcweb.webapp import missing
from cardarena.server.app import web_log


def test_the_installed_package_holds_a_complete_app() -> None:
    assert missing(WEB_ROOT) is None
    assert WEB_ROOT.parts[-2:] == ("clients", "web")


def test_an_incomplete_app_is_named_with_what_it_lacks(tmp_path: Path) -> None:
    assert "is not a directory" in str(missing(tmp_path / "absent"))
    (tmp_path / "index.html").write_text("<!doctype html>")
    assert missing(tmp_path) == f"{tmp_path} lacks dist/app.js"


def test_start_up_says_where_the_app_is_served_or_why_not(tmp_path: Path) -> None:
    with capture_logs() as logs:
        web_log(WEB_ROOT, "127.0.0.1", 8080)
        web_log(tmp_path, "127.0.0.1", 8081)
    served, absent = logs
    assert served["event"] == "web_app_served"
    assert served["url"] == "http://127.0.0.1:8080/"
    assert absent["event"] == "web_app_missing"
    assert absent["log_level"] == "warning"
    assert absent["reason"] == f"{tmp_path} lacks index.html, dist/app.js"
