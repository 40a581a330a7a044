#!/usr/bin/env node
// A cardarena bot in JavaScript, speaking the JSON-lines protocol of docs/bot-protocol.md.
//
// It plays the first legal action it is offered (cards come first, lowest first), which is
// what the server itself plays for a seat whose clock runs out, except where the pass is legal
// beside cards (a Fan Tan round with voluntary passes): there the server passes. It is a
// template: it keeps what a real bot would want (its hand, the cards played this round, the
// scores) up to date from the events, and `choose` is the one function to make clever.
//
// Run it in a tournament:
//   cardarena tournament --game hexathlon --bot random \
//       --bot 'exec:first=node clients/examples/first_legal_bot.js' ...
// Only node's standard library is used.
"use strict";

const readline = require("node:readline");

const me = { seat: -1, game: "", hand: [], played: [], totals: [] };

// The decision: one of `legal` (strings like "QC", "10H", "6O", "JK", "pass", "trump:H"),
// within `remainingMs` of the move's clock (null when the move has none: `decision_ms` then).
function choose(legal, state, remainingMs) {
  return legal[0];
}

// What to load before the first match (a model, tables, an opening book): done here, at
// start-up, before the first line is read, it costs no move. The runner starts the program
// ahead of its match, and waits for the answer to `hello` before it counts on it.
function load() {}

function onMessage(message) {
  switch (message.type) {
    case "hello":
      return { hello: true }; // loaded (protocol 3): say so, and wait for `start`

    case "start":
      me.seat = message.seat;
      me.game = message.game;
      return { ready: true }; // say so once set up: the runner waits for this before play

    case "event":
      if (message.event === "dealt" && message.hands[me.seat]) {
        me.hand = message.hands[me.seat].slice();
        me.played = [];
      } else if (message.event === "card_played") {
        me.played.push(message.card);
        if (message.seat === me.seat) me.hand = me.hand.filter((c) => c !== message.card);
      } else if (message.event === "round_scored") {
        me.totals = message.totals;
      }
      return null;
    case "turn": {
      // stderr is the bot's own log (`--bot-logs DIR` keeps it): the runner never reads it.
      process.stderr.write(`turn at seq ${message.seq}: ${message.remaining_ms} ms left\n`);
      const action = choose(message.legal, message.state, message.remaining_ms);
      // Echo the turn's id: an answer that comes too late is then dropped by the runner
      // instead of being taken for the answer to the next turn.
      return { id: message.id, action };
    }
    case "end":
      return null;
    default:
      return null; // a message type this bot does not know: ignore it, as the protocol asks
  }
}

load();
const input = readline.createInterface({ input: process.stdin, terminal: false });
input.on("line", (line) => {
  if (!line.trim()) return;
  const answer = onMessage(JSON.parse(line));
  if (answer !== null) process.stdout.write(JSON.stringify(answer) + "\n");
});
input.on("close", () => process.exit(0));
