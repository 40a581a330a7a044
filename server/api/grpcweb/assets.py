"""The web app's files as the gateway sends them: cached, compressed, validated.

The app's script and style sheet keep fixed names on disk (``dist/app.js``: the wheel and an
editable install carry them by name), and are sent under names with their content's hash:
the page (``index.html``) is sent with each ``dist/`` file it loads renamed
``dist/app.<hash>.js``, where ``<hash>`` is the first 12 hex digits of the file's SHA-256. Such
a name never names other bytes, so it is sent with ``Cache-Control: public, max-age=31536000,
immutable``: a browser keeps it and never asks again, and a new build is a new name. A hashed
name that no longer matches (a page loaded before the server was updated) is answered with
the current file and ``no-cache``, never cached for long. Every other file (the page itself)
is sent with ``no-cache`` and an ``ETag``: a browser asks each time and gets ``304 Not
Modified`` while it is unchanged. Text is gzipped for a browser that accepts it. A file is
read, hashed and compressed once per change of its size or modification time, not per
request.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
COMPRESSIBLE = {".js", ".mjs", ".css", ".html", ".svg", ".json", ".txt", ".map"}
MIN_COMPRESS = 512
"""Smaller files are sent as they are: compression would not pay for its headers."""
MAX_CACHED = 8 * 1024 * 1024
"""A larger file is served but not kept in memory."""
HASH_DIGITS = 12
VERSIONED = re.compile(r"^(?P<stem>.+)\.(?P<hash>[0-9a-f]{12})(?P<ext>\.(?:js|css))$")
"""A hashed name as the page gives it: ``app.3f2c0a9b1d4e.js``."""
LOADED = re.compile(r'(?P<attr>(?:src|href)=")(?P<name>dist/[^"?#]+\.(?:js|css))"')
"""A ``dist/`` script or style sheet that a page loads."""


@dataclass
class Asset:
    """One file's bytes with their validator and compressed form."""

    body: bytes
    digest: str
    compressible: bool
    _gzip: bytes | None = field(default=None, repr=False)

    @property
    def etag(self) -> str:
        return f'"{self.digest[:32]}"'

    @property
    def version(self) -> str:
        return self.digest[:HASH_DIGITS]

    def gzipped(self) -> bytes:
        if self._gzip is None:
            self._gzip = gzip.compress(self.body, compresslevel=9, mtime=0)
        return self._gzip

    def variant(self, accept_encoding: str) -> tuple[bytes, str | None]:
        """The bytes to send and their Content-Encoding, as the browser accepts."""
        if self.compressible and "gzip" in accepted_encodings(accept_encoding):
            return self.gzipped(), "gzip"
        return self.body, None

    def tag(self, encoding: str | None) -> str:
        """The ETag of one encoding (each representation has its own)."""
        return self.etag if encoding is None else f'"{self.digest[:32]}-{encoding}"'


def make_asset(body: bytes, suffix: str) -> Asset:
    return Asset(
        body=body,
        digest=hashlib.sha256(body).hexdigest(),
        compressible=suffix in COMPRESSIBLE and len(body) >= MIN_COMPRESS,
    )


def accepted_encodings(header: str) -> set[str]:
    """The codings an ``Accept-Encoding`` header accepts (``q=0`` refuses one)."""
    out: set[str] = set()
    for part in header.split(","):
        name, _, params = part.strip().partition(";")
        q = params.strip().lower()
        if q.startswith("q="):
            try:
                if float(q[2:]) <= 0:
                    continue
            except ValueError:
                continue
        if name.strip():
            out.add(name.strip().lower())
    return out


def matches_etag(if_none_match: str, etag: str) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (weak comparison, as RFC 9110 asks)."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    return any(t.strip().removeprefix("W/") == etag for t in if_none_match.split(","))


def versioned(name: str, asset: Asset) -> str:
    """``dist/app.js`` as the page names it: ``dist/app.<hash>.js``."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}.{asset.version}.{ext}" if dot else name


def split_version(path: Path) -> tuple[Path, str] | None:
    """``dist/app.<hash>.js`` -> (``dist/app.js``, hash); None for another name."""
    found = VERSIONED.match(path.name)
    if found is None:
        return None
    return path.with_name(found["stem"] + found["ext"]), found["hash"]


class AssetCache:
    """Files by path, reread when their size or modification time changes."""

    def __init__(self) -> None:
        self._files: dict[Path, tuple[tuple[int, int], Asset]] = {}
        self._pages: dict[tuple[str, ...], Asset] = {}

    def get(self, path: Path) -> Asset:
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        kept = self._files.get(path)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        asset = make_asset(path.read_bytes(), path.suffix)
        if len(asset.body) <= MAX_CACHED:
            self._files[path] = (stamp, asset)
        return asset

    def page(self, path: Path, root: Path) -> Asset:
        """The page at ``path`` with each ``dist/`` file it loads (under ``root``) renamed by
        its hash; a file it names that is absent keeps its name (and answers 404)."""
        asset = self.get(path)
        text = asset.body.decode("utf-8", errors="replace")
        names: dict[str, str] = {}
        for found in LOADED.finditer(text):
            name = found["name"]
            file = root.joinpath(*name.split("/"))
            if name not in names and file.is_file():
                names[name] = versioned(name, self.get(file))
        key = (asset.digest, *sorted(names.values()))
        kept = self._pages.get(key)
        if kept is None:
            body = LOADED.sub(lambda m: f'{m["attr"]}{names.get(m["name"], m["name"])}"', text)
            kept = make_asset(body.encode("utf-8"), path.suffix)
            self._pages = {key: kept}  # the current page only: an old one is never asked for
        return kept
