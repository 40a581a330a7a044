"""The games for researchers: OpenSpiel games and a PettingZoo environment over the engine.

Both are optional extras (``pip install 'cardarena[openspiel]'``, ``'cardarena[pettingzoo]'``),
so nothing here is imported by the rest of cardarena and the core install stays small.

* :mod:`.params` turns a library's flat parameters into a validated engine setup;
* :mod:`.chance` plays a match whose deals and draws come from an outside chance player
  (OpenSpiel's chance nodes), one card at a time;
* :mod:`.bounds` says how long a match can last and how far its scores can go;
* :mod:`.encoding` turns what a seat may see (the engine's views, nothing else) into tensors;
* :mod:`.openspiel` registers every game with ``pyspiel``; :mod:`.pettingzoo` is the AEC
  environment;
* :mod:`.learner` is docs/research.md's worked example: a small masked learner trained
  through the PettingZoo environment against the reference bots.

See docs/research.md.
"""
