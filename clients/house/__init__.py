"""The house worker: plays the seats a cardarena server hands it, as a client of that server.

``cardarena serve --house-bots N`` starts a few of these (``python -m cardarena.clients.house
--server ADDRESS``, :mod:`cardarena.server.house.workers`): the reference bots live here, with
the clients, and the server never imports them. A worker plays each seat it is given on an
ordinary ``Play`` call with the seat's token, so it sees what the seat may see and acts
through every check a player's action meets. :mod:`.worker` is the whole of it.
"""

from .worker import main, make_bot, work

__all__ = ["main", "make_bot", "work"]
