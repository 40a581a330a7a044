"""The web app's files as the gateway sends them, and what a browser fetches.

The page names the script and the style sheet by their content's hash
(``dist/app.<12 hex>.js``), which are sent as immutable for a year; the page is sent with
``no-cache`` and an ETag (``304`` while unchanged); text is gzipped for a browser that takes
it. In headless Chromium the first load must transfer less than 80 KB of script, a view
change by a link must not load the page again, and a second page load must fetch nothing but
the page. Skipped without Chromium or Node where a browser is needed, unless
``CARDARENA_REQUIRE_E2E=1``.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import re
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.server.api.grpcweb.assets import accepted_encodings, matches_etag
from cardarena.v1 import service_pb2 as spb
from tests.calls import stub
from tests.serverproc import ServerProcess

from .browser import REPO, playwright_core, run_driver
from .test_table import tools

pytestmark = pytest.mark.e2e

DIST = REPO / "clients" / "web" / "dist"
DRIVER = Path(__file__).with_name("drive_assets.cjs")
SCRIPT_BUDGET = 80_000  # bytes of compressed script on the first load
YEAR = "public, max-age=31536000, immutable"


def get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def head(url: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, method="HEAD")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with ServerProcess(tmp_path_factory.mktemp("assets") / "data", web="127.0.0.1:0") as running:
        yield running


def test_the_page_names_each_file_by_its_hash(server: ServerProcess) -> None:
    base = f"http://{server.web_address}"
    status, headers, page = get(base + "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert headers["cache-control"] == "no-cache" and headers["etag"]
    names = re.findall(rb'(?:src|href)="dist/([^"]+)"', page)
    assert sorted(n.decode() for n in names) == sorted(
        f"{stem}.{hashlib.sha256((DIST / f'{stem}.{ext}').read_bytes()).hexdigest()[:12]}.{ext}"
        for stem, ext in (("app", "js"), ("table", "css"))
    )
    for name in names:
        status, headers, body = get(f"{base}/dist/{name.decode()}")
        assert status == 200 and headers["cache-control"] == YEAR
        stem, _, ext = name.decode().split(".")
        assert body == (DIST / f"{stem}.{ext}").read_bytes()


def test_an_unchanged_page_is_not_sent_again(server: ServerProcess) -> None:
    base = f"http://{server.web_address}"
    _, headers, _ = get(base + "/")
    status, again, body = get(base + "/", **{"If-None-Match": headers["etag"]})
    assert status == 304 and body == b"" and again["etag"] == headers["etag"]
    assert get(base + "/", **{"If-None-Match": '"other"'})[0] == 200


def test_text_is_gzipped_for_a_browser_that_takes_it(server: ServerProcess) -> None:
    base = f"http://{server.web_address}"
    _, _, page = get(base + "/")
    app = re.search(rb'src="(dist/app\.[0-9a-f]{12}\.js)"', page)
    assert app is not None
    url = f"{base}/{app[1].decode()}"
    status, headers, body = get(url, **{"Accept-Encoding": "gzip, deflate, br"})
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert headers["vary"] == "Accept-Encoding"
    assert gzip.decompress(body) == (DIST / "app.js").read_bytes()
    assert len(body) < SCRIPT_BUDGET
    plain = get(url, **{"Accept-Encoding": "gzip;q=0"})
    assert "content-encoding" not in plain[1] and plain[2] == (DIST / "app.js").read_bytes()
    assert plain[1]["etag"] != headers["etag"]  # each representation its own
    status, headers, body = head(url)
    assert body == b"" and int(headers["content-length"]) == (DIST / "app.js").stat().st_size


def test_a_stale_hash_gets_the_current_file_uncached(server: ServerProcess) -> None:
    status, headers, body = get(f"http://{server.web_address}/dist/app.000000000000.js")
    assert status == 200 and headers["cache-control"] == "no-cache"
    assert body == (DIST / "app.js").read_bytes()
    assert get(f"http://{server.web_address}/dist/nothing.000000000000.js")[0] == 404


def test_accept_encoding_and_if_none_match_are_read_as_http_says() -> None:
    assert accepted_encodings("gzip, deflate;q=0.5, br;q=0") == {"gzip", "deflate"}
    assert accepted_encodings("") == set()
    assert matches_etag('W/"abc", "def"', '"abc"') and matches_etag("*", '"x"')
    assert not matches_etag("", '"abc"') and not matches_etag('"abcd"', '"abc"')


async def a_match(address: str) -> str:
    async with grpc.aio.insecure_channel(address) as channel:
        created = await stub(channel).CreateMatch(
            spb.CreateMatchRequest(game="pentathlon"), timeout=10
        )
        return str(created.match.match_id)


def test_a_browser_fetches_little_once_and_nothing_again(server: ServerProcess) -> None:
    browser, node = tools()
    library = playwright_core()
    asyncio.run(a_match(server.address))
    seen = run_driver([node, str(DRIVER), str(library), browser, f"http://{server.web_address}"])
    assert seen["errors"] == []
    first = [r for r in seen["first"] if "/dist/" in r["url"]]
    scripts = [r for r in first if r["url"].endswith(".js")]
    assert scripts and all(r["encoding"] == "gzip" and not r["cached"] for r in scripts)
    assert sum(r["bytes"] for r in scripts) < SCRIPT_BUDGET
    assert all(r["cacheControl"] == YEAR for r in first)
    # A view change: same document, no request but the view's own calls.
    assert seen["linked"]["same"] and "match=" in seen["linked"]["url"]
    second = [r for r in seen["second"] if "/dist/" in r["url"]]
    assert second and all(r["cached"] for r in second), second


def test_a_waiting_match_shares_a_link_that_takes_the_next_open_seat(
    server: ServerProcess,
) -> None:
    browser, node = tools()
    library = playwright_core()
    asyncio.run(a_match(server.address))
    seen = run_driver([node, str(DRIVER), str(library), browser, f"http://{server.web_address}"])
    assert seen["errors"] == []
    assert seen["waiting"]["open"] == 4 and seen["waiting"]["link"].endswith("&seat=any")
    assert seen["joined"] == {"url": seen["joined"]["url"], "seat": "0", "open": 3}
    assert seen["joined"]["url"].endswith("&seat=0")
    # Kept in localStorage: the seat's link opened in a new tab is the same seat again.
    assert seen["again"] == {"seat": "0", "notice": ""}
