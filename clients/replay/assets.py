"""The inline CSS and JavaScript of the HTML replay (see :mod:`.page`).

Kept apart from the page builder so each reads on its own. The script uses no library and
no network: it reads the embedded JSON, draws one step, and moves on buttons, the slider,
the arrow keys, Home and End. Names reach the page only through ``textContent``.

The look of a card table is the browser app's, from one source: its built stylesheet
(``clients/web/dist/table.css``) and card faces (``dist/cards.js``, the global
``CardarenaCards``) ship in the package beside this one and are inlined into every page
(:func:`shared_style`, :func:`shared_cards`), so the replay and the live table draw a card
the same way, the Spanish suits as Spanish suits. Only the replay's own layout is here.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Final

# clients/replay/assets.py -> clients/web/dist (package data of cardarena.clients)
WEB_DIST = Path(__file__).parents[1] / "web" / "dist"


@cache
def shared_style() -> str:
    """The web app's table stylesheet, for a <style> element."""
    return (WEB_DIST / "table.css").read_text(encoding="utf-8").replace("</", "<\\/")


@cache
def shared_cards() -> str:
    """The web app's card rendering (``window.CardarenaCards``), for a <script> element."""
    return (WEB_DIST / "cards.js").read_text(encoding="utf-8").replace("</", "<\\/")


STYLE: Final = """
:root { --seat: #f3f6f2; }
* { box-sizing: border-box; }
body { font: 15px/1.4 system-ui, sans-serif; color: var(--ink); margin: 0 auto; max-width: 72rem; padding: 1rem; }
h1 { font-size: 1.3rem; margin: 0 0 .25rem; }
h2 { font-size: 1.05rem; margin: .25rem 0; }
h3 { font-size: .95rem; margin: 0 0 .3rem; }
.verdict { margin: 0 0 .75rem; color: #1e7b34; font-weight: 600; }
.verdict.failed { color: #b3261e; }
nav { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; padding: .5rem 0; position: sticky; top: 0; background: #fff; border-bottom: 1px solid var(--line); }
nav button { font: inherit; padding: .3rem .7rem; border: 1px solid var(--line); border-radius: .3rem; background: #fff; cursor: pointer; }
nav button:disabled { opacity: .4; cursor: default; }
#step { min-width: 22rem; font-weight: 600; }
#slider { flex: 1; min-width: 10rem; }
#seats { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: .6rem; margin: .6rem 0; }
.seat { border: 1px solid var(--line); border-radius: .4rem; padding: .5rem; background: var(--seat); }
.seat.dealer h3::after { content: " (dealer)"; color: var(--muted); font-weight: normal; }
.seat.won { outline: 2px solid #e0a800; }
.stats { color: var(--muted); font-size: .85rem; margin-top: .3rem; }
.hand, .cards, .row { display: flex; flex-wrap: wrap; gap: .2rem; min-height: 1.9rem; }
.hand .card.face + .card.face { margin-left: -1.3rem; }
.card.pass { width: 3.3rem; height: 4.6rem; display: inline-flex; align-items: center; justify-content: center; border: 1px dashed #aab; border-radius: .4rem; color: var(--muted); }
#play { border: 1px solid var(--line); border-radius: .4rem; padding: .5rem; min-height: 3rem; }
.play { display: inline-flex; flex-direction: column; align-items: center; margin-right: .4rem; }
.play small { color: var(--muted); }
.play.winner .card { outline: 3px solid #e0a800; }
#trick .caption { width: 100%; color: var(--muted); }
.row { align-items: center; margin: .15rem 0; } .row b { width: 1.5rem; }
#lines { margin: .3rem 0; padding-left: 1.4rem; color: var(--muted); }
table { border-collapse: collapse; margin-top: .5rem; }
th, td { border: 1px solid var(--line); padding: .2rem .6rem; text-align: right; }
th:first-child { text-align: left; }
tfoot { font-weight: 700; }
#winners { font-weight: 700; }
"""

SCRIPT: Final = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("match-data").textContent);
  var steps = data.steps, names = data.names, current = 0;
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function card(code) {
    return window.CardarenaCards.cardFace(code, data.spanish);
  }
  function fill(node, children) {
    while (node.firstChild) { node.removeChild(node.firstChild); }
    children.forEach(function (c) { node.appendChild(c); });
  }
  function drawSeats(s) {
    names.forEach(function (name, seat) {
      var box = document.querySelector('.seat[data-seat="' + seat + '"]');
      var hand = document.querySelector('.hand[data-seat="' + seat + '"]');
      fill(hand, s.hands[seat].map(card));
      hand.dataset.count = String(s.hands[seat].length);
      box.classList.toggle("dealer", s.round >= 0 && s.dealer === seat);
      box.classList.toggle("won", s.winners.indexOf(seat) >= 0);
      var facts = [];
      if (!s.solitaire && s.round >= 0) { facts.push("tricks " + s.tricks[seat]); }
      if (s.passes[seat]) { facts.push("passes " + s.passes[seat]); }
      if (s.dead[seat].length) { facts.push("dead " + s.dead[seat].join(" ")); }
      document.querySelector('.stats[data-seat="' + seat + '"]').textContent = facts.join(" \u00b7 ");
    });
  }
  function drawPlay(s) {
    var trick = $("trick"), plays = s.trick ? s.trick.cards : s.plays;
    ["leader", "winner", "number"].forEach(function (k) { delete trick.dataset[k]; });
    var items = plays.map(function (p) {
      var box = el("span", "play");
      box.dataset.seat = String(p[0]);
      box.appendChild(el("small", "", names[p[0]]));
      var word = p[1].split(" ")[0];
      box.appendChild(word === "pass" ? el("span", "card pass", word) : card(word));
      if (p[1] !== word) { box.appendChild(el("small", "late", p[1].slice(word.length + 1))); }
      if (s.trick && s.trick.winner === p[0]) { box.classList.add("winner"); }
      return box;
    });
    if (s.trick) {
      trick.dataset.leader = String(s.trick.leader);
      trick.dataset.number = String(s.trick.number);
      var text = "Trick " + s.trick.number + ", led by " + names[s.trick.leader];
      if (s.trick.winner !== null) {
        trick.dataset.winner = String(s.trick.winner);
        text += ", won by " + names[s.trick.winner];
      }
      items.unshift(el("span", "caption", text));
    }
    fill(trick, items);
    fill($("table"), s.table.map(function (row) {
      var r = el("div", "row");
      r.dataset.suit = row[0];
      r.appendChild(el("b", "", row[0]));
      row[1].forEach(function (c) { r.appendChild(card(c)); });
      return r;
    }));
  }
  function drawScores(s) {
    var rows = [];
    for (var i = 0; i <= current; i++) {
      var t = steps[i];
      if (t.what === "scores" && t.round_scores) {
        var tr = el("tr");
        tr.dataset.round = String(t.round + 1);
        tr.appendChild(el("th", "", "Round " + (t.round + 1) + " (" + t.kind + ")"));
        t.round_scores.forEach(function (v, seat) {
          var td = el("td", "", v);
          td.dataset.seat = String(seat);
          tr.appendChild(td);
        });
        rows.push(tr);
      }
    }
    fill(document.querySelector("#scores tbody"), rows);
    s.totals.forEach(function (v, seat) {
      document.querySelector('#totals td[data-seat="' + seat + '"]').textContent = v;
    });
    $("winners").textContent = s.what === "end"
      ? "Won by " + s.winners.map(function (w) { return names[w]; }).join(", ")
      : s.what === "cancelled" ? "Cancelled: no winners" : "";
  }
  function show(i) {
    current = Math.max(0, Math.min(steps.length - 1, i));
    var s = steps[current], marker = $("step");
    marker.dataset.step = String(current + 1);
    marker.textContent = "Step " + (current + 1) + " of " + steps.length + ": " + s.label;
    $("slider").value = String(current + 1);
    $("first").disabled = $("prev").disabled = current === 0;
    $("last").disabled = $("next").disabled = current === steps.length - 1;
    $("round-title").textContent = s.round >= 0 ? "Round " + (s.round + 1) + ": " + s.kind : "";
    $("trump").textContent = s.trump ? "Trump: " + s.trump : "";
    fill($("lines"), s.lines.map(function (line) { return el("li", "", line); }));
    drawSeats(s);
    drawPlay(s);
    drawScores(s);
  }
  $("first").addEventListener("click", function () { show(0); });
  $("prev").addEventListener("click", function () { show(current - 1); });
  $("next").addEventListener("click", function () { show(current + 1); });
  $("last").addEventListener("click", function () { show(steps.length - 1); });
  $("slider").addEventListener("input", function (e) { show(Number(e.target.value) - 1); });
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.id === "slider") { return; }
    var moves = { ArrowRight: current + 1, ArrowLeft: current - 1, Home: 0, End: steps.length - 1 };
    if (e.key in moves) { e.preventDefault(); show(moves[e.key]); }
  });
  if (data.spanish) { document.body.classList.add("spanish"); }
  var asked = new URLSearchParams(location.search).get("step") || (location.hash.match(/step=(\d+)/) || [])[1];
  if (steps.length) { show(asked ? Number(asked) - 1 : 0); }
  document.body.dataset.ready = "true";
})();
"""
