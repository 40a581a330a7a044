"""Where the browser app is, and whether it is complete enough to serve.

The app (``clients/web``: ``index.html`` and the committed bundle ``dist/app.js``) ships in
the wheel as package data of ``cardarena.clients``, so it sits beside this package both in a
source checkout and on a regular install. It is looked up relative to the installed
``cardarena`` package, never through the source tree (``Path.resolve`` would follow an
editable install's links back to the checkout and hide a wheel that lacks the files). A
server that cannot serve it says why at start-up instead of answering 404 in silence.
"""

from __future__ import annotations

from pathlib import Path

# server/api/grpcweb/webapp.py -> the cardarena package -> clients/web
WEB_ROOT = Path(__file__).parents[3] / "clients" / "web"
REQUIRED = ("index.html", "dist/app.js")


def missing(root: Path) -> str | None:
    """Why ``root`` cannot serve the app, in words; None when it can."""
    if not root.is_dir():
        return f"{root} is not a directory (the web app is not installed with this package)"
    absent = [name for name in REQUIRED if not (root / name).is_file()]
    if absent:
        return f"{root} lacks {', '.join(absent)}"
    return None
