// What a reader knows about a match, folded from the projected event stream: the live table
// (WatchMatch for a spectator, StreamEvents for a seat) and the replay of a stored log both
// draw from this one fold. Messages are protobuf-es objects of src/gen (oneofs as
// { case, value }, uint64 as bigint).
//
// The stream sends a snapshot, then the history it reflects, then live events (see
// docs/protocol.md, "The event stream"). The fold rebuilds everything, the score sheet
// included, from the history; the snapshot adds what no event says: whose turn it is, the
// clock's deadline and the reader's legal actions at the snapshot's seq. On a live stream
// whose turn it is and the deadline then come from the server's Turn messages (applyTurn):
// no event names the seat to act (who holds 7H when Fan Tan starts, who opens a Crazy Sixes
// hand), so a state with `told` set leaves them to the Turns. A replay (no Turns, every hand
// seen) works them out from the events.
import { spanishSuit } from "./cards.js";

export const LAYOUT_KINDS = new Set(["fan_tan", "hand"]); // played onto the table, not in tricks
export const SUIT_LETTERS = { 1: "C", 2: "D", 3: "H", 4: "S", 5: "O", 6: "C", 7: "E", 8: "B", 9: "J" };

export function newState(players = 0) {
  return {
    matchId: "", game: "", players, names: [], options: {}, moveMs: 0, viewer: null,
    seq: 0n, round: -1, kind: "", dealer: null, trump: 0, trumpHow: "", excluded: [],
    multiplier: 1, hands: [], legal: [], toAct: null, deadline: 0,
    trick: null, trickNumber: 0, tricksWon: [], table: [], dead: [], passes: [],
    rounds: [], totals: [], over: false, winners: [], cancelled: "", spanish: false,
    lines: [], started: false, told: false, lastTrick: null, lastPass: null, joined: [],
    clocks: null,
  };
}

const seats = (state, value) => Array.from({ length: state.players }, () => value);
export const tricksRound = (state) => state.round >= 0 && !LAYOUT_KINDS.has(state.kind);

function handSize(hand) {
  return hand ? (hand.hidden ? hand.size : hand.cards.length) : 0;
}

function removeCards(state, seat, cards) {
  const hand = state.hands[seat];
  if (!hand) return;
  if (hand.hidden) hand.size = Math.max(0, hand.size - cards.length);
  else {
    const gone = new Set(cards.map((c) => c.code));
    // A Joker played is "a Joker": any one of them leaves the hand.
    let jokers = cards.filter((c) => c.code === "JK").length;
    hand.cards = hand.cards.filter((c) => {
      if (c.code === "JK" && jokers > 0) { jokers -= 1; return false; }
      return !gone.has(c.code) || c.code === "JK";
    });
  }
}

// The next seat that still holds cards, after `seat` (layout rounds skip empty hands).
function nextHolding(state, seat) {
  for (let step = 1; step <= state.players; step += 1) {
    const next = (seat + step) % state.players;
    if (handSize(state.hands[next]) > 0) return next;
  }
  return null;
}

function say(state, line) {
  state.lines.push(line);
  if (state.lines.length > 8) state.lines.shift();
}

// A seat's name as its name plate shows it (the one the seat joined with, else "seat N").
export const seatName = (state, seat) => state.names[seat] || `seat ${seat}`;
const name = seatName;
// A card in words for the event lines: "Q♣", "10♥", "6 of oros" (no codes).
const PIPS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const SPANISH_NAMES = { O: "oros", C: "copas", E: "espadas", B: "bastos" };
const RANK_WORDS = { 11: "J", 12: "Q", 13: "K", 14: "A" };
export function cardWords(card, spanish) {
  if (!card) return "";
  if (card.code === "JK") return "the Joker";
  const suit = card.code.slice(-1), rank = card.code.slice(0, -1);
  if (spanish) return `${rank} of ${SPANISH_NAMES[suit] || suit}`;
  return `${RANK_WORDS[Number(rank)] || rank}${PIPS[suit] || suit}`;
}
const suitWords = (state, suit) => {
  const letter = SUIT_LETTERS[suit];
  return state.spanish || suit >= 5 ? SPANISH_NAMES[letter] || letter : `${PIPS[letter] || letter}`;
};

// The clocks (docs/protocol.md, "Clocks"): what each seat has left of its bank and of its
// round budget, folded from the log as cardarena.v1.clocks.SeatClocks folds it. A RoundStarted
// renews every round budget; an entry with think_ms charges its seat that time, and a seat's
// own action (not a TimedOut) then adds the increment to its bank. `clocks` stays null for a
// match with neither.
const CHARGED = new Set(["cardPlayed", "passed", "suitExcluded", "trumpChosen", "timedOut"]);
const MAX_CLOCK_MS = 3600000;

function foldClocks(state, event) {
  const v = event.kind.value, c = state.clocks;
  if (event.kind.case === "matchStarted") {
    const { moveMs, bankMs, incrementMs, roundMs } = v;
    state.clocks = bankMs || roundMs
      ? { moveMs, bankMs, incrementMs, roundMs, bank: seats(state, bankMs), round: seats(state, roundMs) } : null;
  } else if (c && event.kind.case === "roundStarted") {
    c.round = seats(state, c.roundMs);
  } else if (c && event.thinkMs !== undefined && CHARGED.has(event.kind.case) && v.seat < c.bank.length) {
    if (c.bankMs) {
      const left = Math.max(0, c.bank[v.seat] - event.thinkMs);
      c.bank[v.seat] = event.kind.case === "timedOut" ? left : Math.min(MAX_CLOCK_MS, left + c.incrementMs);
    }
    if (c.roundMs) c.round[v.seat] = Math.max(0, c.round[v.seat] - event.thinkMs);
  }
}

// What `seat` has left of its bank and of its round budget at `now` (null: neither clock, or
// that one, is on). While it is to act, the turn's deadline says what the turn has used: the
// turn ends when its allowance, the least of the clocks in force, is gone.
export function clocksLeft(state, seat, now = Date.now()) {
  const c = state.clocks;
  if (!c) return null;
  let bank = c.bank[seat], round = c.round[seat];
  if (seat === state.toAct && state.deadline && !state.over) {
    const limits = [[c.moveMs, c.moveMs], [c.bankMs, bank], [c.roundMs, round]].filter(([on]) => on).map(([, ms]) => ms);
    const used = Math.max(0, Math.min(...limits) - Math.max(0, state.deadline - now));
    bank = Math.max(0, bank - used);
    round = Math.max(0, round - used);
  }
  return { bank: c.bankMs ? bank : null, round: c.roundMs ? round : null };
}

// A seat's own prompt (YourTurn): its legal actions, its deadline, and what it has left as
// the turn starts, in the server's words (the same as the fold's).
export function applyYourTurn(state, seat, turn) {
  Object.assign(state, { legal: turn.legalActions, toAct: seat, deadline: Number(turn.deadlineUnixMs) });
  if (state.clocks && state.clocks.bankMs) state.clocks.bank[seat] = turn.bankMs;
  if (state.clocks && state.clocks.roundMs) state.clocks.round[seat] = turn.roundMs;
  return state;
}

// Apply one Event (a protobuf-es cardarena.v1.Event) to the state.
export function applyEvent(state, event) {
  const v = event.kind.value;
  const told = { toAct: state.toAct, deadline: state.deadline };
  state.seq = event.seq;
  state.deadline = 0;
  switch (event.kind.case) {
    case "matchStarted":
      Object.assign(state, { matchId: v.matchId, game: v.game, players: v.players, options: v.options || {}, moveMs: v.moveMs, started: true });
      state.names = seats(state, "").map((_, s) => state.names[s] || "");
      state.totals = seats(state, null);
      break;
    case "seatJoined":
      state.names[v.seat] = v.name;
      state.joined[v.seat] = true;
      say(state, `${v.name || "someone"} takes seat ${v.seat}`);
      break;
    case "dealerDrawn":
      state.dealer = v.seat;
      say(state, `${name(state, v.seat)} deals first`);
      break;
    case "roundStarted":
      Object.assign(state, {
        round: v.round, kind: v.kind, dealer: v.dealer, trump: v.trump, multiplier: v.multiplier || 1,
        trumpHow: v.trump ? "fixed by the options" : "", excluded: [], trick: null, trickNumber: 0,
        table: [], toAct: null, legal: [], lastTrick: null, lastPass: null,
      });
      state.tricksWon = seats(state, 0);
      state.passes = seats(state, 0);
      state.dead = seats(state, []);
      say(state, `Round ${v.round + 1}: ${v.kind.replace(/_/g, " ")}, ${name(state, v.dealer)} deals`);
      break;
    case "trumpDrawn":
      state.trump = v.suit;
      state.trumpHow = "drawn at random";
      say(state, `Trump drawn: ${suitWords(state, v.suit)}`);
      break;
    case "dealt":
      state.hands = v.hands.map((h) => ({ hidden: h.hidden, size: h.size, cards: [...h.cards] }));
      state.spanish = v.hands.some((h) => h.cards.some((c) => spanishSuit(c.suit))) || state.game === "crazy_sixes";
      if (tricksRound(state)) state.toAct = (state.dealer + 1) % state.players;
      else if (state.kind === "fan_tan") {
        const holder = state.hands.findIndex((h) => !h.hidden && h.cards.some((c) => c.code === "7H"));
        state.toAct = holder >= 0 ? holder : null;
      }
      say(state, "The cards are dealt");
      break;
    case "suitExcluded":
      state.excluded.push({ seat: v.seat, suit: v.suit });
      state.toAct = state.excluded.length === 1 ? (v.seat + 1) % state.players : state.dealer;
      say(state, `${name(state, v.seat)} excludes ${suitWords(state, v.suit)}`);
      break;
    case "trumpChosen":
      state.trump = v.suit;
      state.trumpHow = `chosen by ${name(state, v.seat)}`;
      state.toAct = (state.dealer + 1) % state.players;
      say(state, `${name(state, v.seat)} chooses trump ${suitWords(state, v.suit)}`);
      break;
    case "cardPlayed": {
      removeCards(state, v.seat, [v.card]);
      if (tricksRound(state)) {
        if (!state.trick || state.trick.winner !== null) {
          if (state.trick && state.trick.winner !== null) state.lastTrick = state.trick;
          state.trick = { leader: v.seat, plays: [], winner: null, number: state.trickNumber + 1 };
        }
        state.trick.plays.push({ seat: v.seat, card: v.card });
        state.toAct = (v.seat + 1) % state.players;
      } else {
        state.table.push(v.card);
        state.trick = { leader: null, plays: [{ seat: v.seat, card: v.card }], winner: null, number: 0 };
        state.toAct = nextHolding(state, v.seat);
      }
      break;
    }
    case "passed":
      state.passes[v.seat] = (state.passes[v.seat] || 0) + 1;
      state.trick = { leader: null, plays: [{ seat: v.seat, card: null, forced: v.reason === 1 }], winner: null, number: 0 };
      state.lastPass = { seat: v.seat, forced: v.reason === 1, n: state.passes[v.seat], seq: event.seq };
      say(state, `${name(state, v.seat)} passes${v.reason === 1 ? " (no card to play)" : ""}`);
      state.toAct = nextHolding(state, v.seat);
      break;
    case "trickWon":
      if (state.trick) state.trick.winner = v.seat;
      state.trickNumber = v.trick + 1;
      state.tricksWon[v.seat] = (state.tricksWon[v.seat] || 0) + 1;
      state.toAct = v.seat;
      say(state, `Trick ${v.trick + 1} to ${name(state, v.seat)}`);
      break;
    case "cardsDead":
      removeCards(state, v.seat, v.cards);
      state.dead[v.seat] = [...(state.dead[v.seat] || []), ...v.cards];
      say(state, `Dead in the hand of ${name(state, v.seat)}: ${v.cards.map((c) => cardWords(c, state.spanish)).join(" ")}`);
      break;
    case "roundScored":
      state.rounds.push({ round: v.round, kind: state.kind, scores: v.scores, totals: v.totals, seq: event.seq });
      state.totals = v.totals;
      state.toAct = null;
      say(state, `Round ${v.round + 1} scored`);
      break;
    case "matchEnded":
      Object.assign(state, { totals: v.totals, winners: v.winners, over: true, toAct: null, legal: [] });
      if (state.trick && state.trick.winner !== null) state.lastTrick = state.trick;
      say(state, `The match is over: ${v.winners.map((w) => name(state, w)).join(", ")} won`);
      break;
    case "matchCancelled":
      Object.assign(state, { cancelled: v.reason, over: true, toAct: null, legal: [] });
      say(state, `Cancelled: ${v.reason}`);
      break;
    case "timedOut":
      say(state, `${name(state, v.seat)} ran out of time: the default action is played`);
      break;
    case "seatFaulted":
      say(state, `${name(state, v.seat)}: ${v.detail}`);
      break;
    case "seatForfeited":
      say(state, `${name(state, v.seat)} forfeits after ${v.faults} faults`);
      break;
    default:
      break;
  }
  foldClocks(state, event);
  if (state.toAct !== null && state.moveMs > 0) state.deadline = Date.now() + state.moveMs;
  if (state.told) Object.assign(state, state.over ? { toAct: null, deadline: 0 } : told);
  return state;
}

// A stream message as the messages it holds: a batched spectator's (WatchMatchRequest.batched)
// holds the ones after it in `more`, each as it would have come alone; any other is one.
export function unbatched(msg) {
  return msg.more && msg.more.length ? [msg, ...msg.more] : [msg];
}

// Whose turn it is and until when, as a live stream's Turn says (seat absent: nobody).
export function applyTurn(state, turn) {
  state.told = true;
  state.toAct = turn.seat === undefined ? null : turn.seat;
  state.deadline = Number(turn.deadlineUnixMs);
  return state;
}

// Overlay a snapshot (at the end of the history) for what events do not say.
export function applySnapshot(state, snap) {
  state.players = snap.players;
  state.game = snap.game;
  state.matchId = snap.matchId;
  state.viewer = snap.viewerSeat === undefined ? null : snap.viewerSeat;
  state.toAct = snap.toAct === undefined ? null : snap.toAct;
  state.deadline = Number(snap.deadlineUnixMs);
  state.legal = snap.legalActions;
  if (snap.hands.length) state.hands = snap.hands.map((h) => ({ hidden: h.hidden, size: h.size, cards: [...h.cards] }));
  state.seq = snap.seq;
  state.over = snap.over;
  return state;
}

// The score as text: "7", "-3", "35/2".
export function scoreText(score) {
  if (!score) return "";
  return score.denominator > 1n ? `${score.numerator}/${score.denominator}` : String(score.numerator);
}

export function scoreValue(score) {
  return score ? Number(score.numerator) / Number(score.denominator || 1n) : 0;
}
