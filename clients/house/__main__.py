"""``python -m cardarena.clients.house --server ADDRESS``: the house worker (see :mod:`.worker`)."""

from .worker import main

raise SystemExit(main())
