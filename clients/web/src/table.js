// The table view: seats around a felt, the trick or the layout in the middle, the round and
// its trump above, the score sheet beside it, the reader's own hand below. Drawn from the
// state of model.js, for a spectator, a seat or a replay alike.
import { h } from "./dom.js";
import { cardFace, cardBack, suitSymbol, suitName } from "./cards.js";
import { SUIT_LETTERS, tricksRound, scoreText, scoreValue } from "./model.js";

const face = (card, spanish) => cardFace(card.code, spanish);

// Where seat `seat` sits, in percent of the felt: the viewer (or seat 0) at the bottom.
function place(seat, players, viewer) {
  const p = (seat - (viewer ?? 0) + players) % players;
  const angle = Math.PI / 2 + (2 * Math.PI * p) / players;
  return { x: 50 + 41 * Math.cos(angle), y: 50 + 41 * Math.sin(angle), dx: Math.cos(angle), dy: Math.sin(angle) };
}

function suitBadge(suit, spanish) {
  const letter = SUIT_LETTERS[suit];
  return h("span", { className: `suit-badge s-${letter}`, "data-suit": letter }, suitSymbol(letter, spanish), " ", suitName(letter, spanish));
}

// Who is winning the trick so far: the highest trump, else the highest card of the led suit
// (a trick led with a Joker is left unsaid: its rules are Triathlon's own).
function winningSoFar(state) {
  const t = state.trick;
  if (!t || !t.plays.length || t.winner !== null || !tricksRound(state)) return null;
  const led = t.plays[0].card;
  if (!led || led.code === "JK") return null;
  let best = t.plays[0];
  for (const play of t.plays.slice(1)) {
    const c = play.card, b = best.card;
    if (!c || c.code === "JK") continue;
    const trumpC = state.trump && c.suit === state.trump, trumpB = state.trump && b.suit === state.trump;
    if ((trumpC && !trumpB) || (c.suit === b.suit && c.rank > b.rank)) best = play;
  }
  return best.seat;
}

function clockText(state) {
  if (!state.deadline || state.over) return "";
  const left = Math.max(0, Math.ceil((state.deadline - Date.now()) / 1000));
  return `${left}s`;
}

function seatBox(state, seat, ctx) {
  const pos = place(seat, state.players, state.viewer);
  const hand = state.hands[seat];
  const mine = state.viewer === seat;
  const toAct = state.toAct === seat && !state.over;
  const winner = state.over && state.winners.includes(seat);
  const facts = [];
  if (tricksRound(state)) facts.push(h("span", { className: "fact tricks", "data-tricks": state.tricksWon[seat] || 0 }, `tricks ${state.tricksWon[seat] || 0}`));
  if (state.kind && !tricksRound(state) && state.round >= 0) facts.push(h("span", { className: "fact passes" }, `passes ${state.passes[seat] || 0}`));
  const total = state.totals[seat];
  const size = hand ? (hand.hidden ? hand.size : hand.cards.length) : 0;
  let cards = null;
  if (hand && !mine) {
    cards = hand.hidden
      ? h("div", { className: "backs" }, ...Array.from({ length: Math.min(size, 13) }, cardBack))
      : h("div", { className: "mini" }, ...hand.cards.map((c) => face(c, state.spanish)));
  }
  const dead = (state.dead[seat] || []).length
    ? h("div", { className: "dead", title: "dead cards" }, h("small", {}, "dead"), ...state.dead[seat].map((c) => face(c, state.spanish)))
    : null;
  return h("div", {
    className: `seat${toAct ? " to-act" : ""}${mine ? " mine" : ""}${winner ? " winner" : ""}${pos.dy > 0.3 ? " lower" : ""}`,
    style: `left:${pos.x}%;top:${pos.y}%`,
    "data-seat": seat, "data-size": size, "data-hidden": hand ? hand.hidden : true,
  },
    h("div", { className: "nameplate" },
      state.dealer === seat ? h("span", { className: "dealer-button", title: "dealer" }, "D") : null,
      h("b", { className: "name" }, ctx.names[seat] || state.names[seat] || `seat ${seat}`),
      total ? h("span", { className: "total" }, scoreText(total)) : null,
      toAct ? h("span", { className: "clock", "data-clock": "" }, clockText(state) || "to play") : null),
    h("div", { className: "facts" }, ...facts, size ? h("span", { className: "fact count" }, `${size} card${size === 1 ? "" : "s"}`) : null),
    cards, dead);
}

function centre(state, ctx) {
  const parts = [];
  if (tricksRound(state) && state.trick) {
    const t = state.trick;
    const winning = winningSoFar(state);
    for (const play of t.plays) {
      const pos = place(play.seat, state.players, state.viewer);
      const card = face(play.card, state.spanish);
      const slot = h("div", {
        className: `played${t.winner === play.seat ? " won" : ""}${winning === play.seat ? " winning" : ""}`,
        style: `left:${50 + 20 * pos.dx}%;top:${50 + 23 * pos.dy}%`, "data-seat": play.seat,
      }, card);
      parts.push(slot);
    }
    const names = (s) => ctx.names[s] || state.names[s] || `seat ${s}`;
    const caption = [`Trick ${t.number}`, `led by ${names(t.leader)}`];
    if (t.winner !== null) caption.push(`won by ${names(t.winner)}`);
    else if (winning !== null) caption.push(`${names(winning)} winning`);
    parts.push(h("div", { id: "trick", className: "caption", "data-leader": t.leader, "data-winner": t.winner ?? "", "data-number": t.number }, caption.join(" · ")));
  } else if (!tricksRound(state) && state.round >= 0) {
    parts.push(layoutRows(state));
    const last = state.trick && state.trick.plays[0];
    if (last) {
      const who = ctx.names[last.seat] || state.names[last.seat] || `seat ${last.seat}`;
      parts.push(h("div", { className: "caption last-play" }, last.card ? `${who} played ${last.card.code}` : `${who} passed`));
    }
  }
  return h("div", { className: "centre-area" }, ...parts);
}

// Fan Tan's rows (one per suit, both stacks of six-and-seven in rank order) and Crazy Sixes'.
function layoutRows(state) {
  const bySuit = new Map();
  for (const card of state.table) {
    if (!bySuit.has(card.suit)) bySuit.set(card.suit, []);
    bySuit.get(card.suit).push(card);
  }
  const rows = [...bySuit.keys()].sort((a, b) => a - b).map((suit) => {
    const cards = bySuit.get(suit).sort((a, b) => (a.rank % 14) - (b.rank % 14) || a.rank - b.rank);
    const letter = SUIT_LETTERS[suit];
    return h("div", { className: "row", "data-suit": letter },
      h("span", { className: "row-suit" }, suitSymbol(letter, state.spanish)),
      ...cards.map((c) => face(c, state.spanish)));
  });
  return h("div", { id: "table", className: "layout" }, ...rows);
}

function roundInfo(state, ctx) {
  if (state.round < 0) return h("div", { id: "round", className: "round-info" }, state.started ? "Waiting for the first deal" : "");
  const described = ctx.describe(state.kind);
  const count = ctx.roundCount ? ` of ${ctx.roundCount}` : "";
  const title = state.kind === "hand" || state.kind === "deal"
    ? `${ctx.kindTitle(state.kind)} ${state.round + 1}` : `Round ${state.round + 1}${count}: ${ctx.kindTitle(state.kind)}`;
  const bits = [h("h2", { id: "round-title" }, title)];
  if (described) bits.push(h("p", { className: "scores-what" }, described + (state.multiplier > 1 ? ` (×${state.multiplier})` : "")));
  if (state.trump) bits.push(h("p", { id: "trump" }, "Trump: ", suitBadge(state.trump, state.spanish), state.trumpHow ? ` — ${state.trumpHow}` : ""));
  else if (tricksRound(state) && state.game !== "triathlon") bits.push(h("p", { id: "trump" }, "No trump"));
  if (state.excluded.length) {
    bits.push(h("p", { id: "excluded" }, "Excluded: ", ...state.excluded.map((e) =>
      h("span", { className: "excl" }, suitBadge(e.suit, state.spanish), ` by ${ctx.names[e.seat] || state.names[e.seat] || `seat ${e.seat}`} `))));
  }
  return h("div", { id: "round", className: "round-info" }, ...bits);
}

// The score sheet: one row per round, the totals, the leader and the game's winner rule.
export function scoreSheet(state, ctx) {
  const names = Array.from({ length: state.players }, (_, s) => ctx.names[s] || state.names[s] || `seat ${s}`);
  const totals = state.totals.map(scoreValue);
  const best = totals.length && state.totals.some(Boolean)
    ? (ctx.lowestWins ? Math.min(...totals) : Math.max(...totals)) : null;
  const rows = state.rounds.map((r) => {
    const tr = h("tr", { className: ctx.onRound ? "round-row jump" : "round-row", "data-round": r.round + 1, tabIndex: ctx.onRound ? 0 : -1 },
      h("th", {}, `${r.round + 1}. ${(ctx.kindShort || ctx.kindTitle)(r.kind)}`),
      ...r.scores.map((s, seat) => h("td", { "data-seat": seat }, scoreText(s))));
    if (ctx.onRound) {
      tr.onclick = () => ctx.onRound(r);
      tr.onkeydown = (e) => { if (e.key === "Enter") ctx.onRound(r); };
    }
    return tr;
  });
  const rule = ctx.rule || (ctx.lowestWins ? "Lowest total wins." : "Highest total wins.");
  return h("section", { id: "score-sheet" },
    h("h3", {}, "Score sheet"),
    h("table", { id: "scores" },
      h("thead", {}, h("tr", {}, h("th", {}, "Round"), ...names.map((n, s) => h("th", { "data-seat": s }, n)))),
      h("tbody", {}, ...rows),
      h("tfoot", {}, h("tr", { id: "totals" }, h("th", {}, "Total"),
        ...state.totals.map((t, s) => h("td", { "data-seat": s, className: best !== null && scoreValue(t) === best ? "leader" : "" }, scoreText(t)))))),
    h("p", { className: "rule" }, rule),
    h("p", { id: "winners" }, state.over
      ? (state.cancelled ? `Cancelled: ${state.cancelled}` : `Won by ${state.winners.map((w) => names[w]).join(", ")}`)
      : ""));
}

// The whole table. `ctx`: names, describe(kind), kindTitle(kind), lowestWins, rule,
// roundCount, and optionally hand (the reader's own hand element) and onRound.
export function tableView(state, ctx) {
  const felt = h("div", { className: `felt players-${state.players}${state.spanish ? " spanish" : ""}` },
    centre(state, ctx),
    ...Array.from({ length: state.players }, (_, seat) => seatBox(state, seat, ctx)));
  return h("div", { className: "table-view", "data-over": state.over, "data-seq": String(state.seq) },
    h("div", { className: "table-main" }, roundInfo(state, ctx), felt, ctx.hand || null,
      h("ol", { id: "lines" }, ...state.lines.map((l) => h("li", {}, l)))),
    scoreSheet(state, ctx));
}

// Refresh only the clock of the seat to act (called a few times a second).
export function tickClock(root, state) {
  const clock = root.querySelector("[data-clock]");
  if (clock) clock.textContent = clockText(state) || "to play";
}
