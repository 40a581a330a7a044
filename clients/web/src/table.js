// The table view: seats around a felt, the trick or the layout in the middle, the round and
// its trump above, the reader's own hand below, the score sheet beside (or, on a phone,
// under) it. Drawn from the state of model.js, for a spectator, a seat or a replay alike.
//
// The felt is a size container: cards, seats and rows are sized from its width and height
// (cqw, cqh), so the trick, the table and the hand fit the screen from a phone to a big
// screen. On a wide felt the seats sit around an oval; on a tall one (a phone) the others sit
// in a row along the top and the middle is left to the trick or the layout. Every element
// that stays from one event to the next carries a data-key, so that live.js can update the
// view in place (dom.js morph) and a played card, alone, animates in.
import { h } from "./dom.js";
import { cardFace, cardBack, suitSymbol, suitName, parseCode } from "./cards.js";
import { SUIT_LETTERS, tricksRound, scoreText, scoreValue, seatName, clocksLeft } from "./model.js";

const pct = (x) => `${x.toFixed(2)}%`;

// A card face keyed by its code (a Joker by its place: there may be two).
function face(card, spanish, key = card.code) {
  const el = cardFace(card.code, spanish);
  el.dataset.key = key;
  return el;
}

// Where seat `seat` sits, in percent of the felt, for a wide felt (an oval, the viewer at the
// bottom) and a tall one (the viewer at the bottom, the others in a row along the top), and
// where its card lands in the trick. `side` anchors a seat at the oval's left or right edge.
export function place(seat, players, viewer) {
  const p = (seat - (viewer ?? 0) + players) % players;
  const angle = Math.PI / 2 + (2 * Math.PI * p) / players;
  const dx = Math.cos(angle), dy = Math.sin(angle);
  const wide = { x: 50 + 42 * dx, y: 50 + 40 * dy, tx: 50 + 21 * dx, ty: 50 + 24 * dy };
  let tall;
  if (p === 0) tall = { x: 50, y: 93, tx: 50, ty: 66 };
  else {
    const others = players - 1, k = p - 1;
    const x = others === 1 ? 50 : 8 + 84 * (k + 0.5) / others;
    const arc = others > 2 ? 3 * Math.abs(k - (others - 1) / 2) / ((others - 1) / 2) : 0;
    tall = { x, y: 1.5 + arc, tx: 50 + (x - 50) * 0.62, ty: 38 + arc / 2 };
  }
  const side = dx < -0.35 ? "west" : dx > 0.35 ? "east" : dy < 0 ? "north" : "south";
  return { wide, tall, side, dx, dy, p, width: players > 1 ? 84 / (players - 1) : 84 };
}

// A seat at a side is kept clear of the felt's rounded corners: the further from the middle
// of the side, the further in.
const placeStyle = (pos) =>
  `--x:${pct(pos.wide.x)};--y:${pct(pos.wide.y)};--px:${pct(pos.tall.x)};--py:${pct(pos.tall.y)};--pw:${pos.width.toFixed(2)}cqw;--in:${(2.5 + 6 * pos.dy * pos.dy).toFixed(2)}cqw`;

function suitBadge(suit, spanish) {
  const letter = SUIT_LETTERS[suit];
  return h("span", { className: `suit-badge s-${letter}`, "data-suit": letter }, suitSymbol(letter, spanish), " ", suitName(letter, spanish));
}

// A card in a line of text: its rank and its suit's symbol, coloured as on the card.
export function cardInline(card, spanish) {
  if (!card) return "";
  const { rank, suit } = parseCode(card.code);
  const shown = suit === "J" ? "Joker" : spanish ? rank : ({ 11: "J", 12: "Q", 13: "K", 14: "A" }[rank] || rank);
  return h("span", { className: `inline-card s-${suit}${spanish ? " spanish" : ""}`, title: suit === "J" ? "Joker" : `${shown} of ${suitName(suit, spanish)}` },
    shown, suit === "J" ? null : suitSymbol(suit, spanish));
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

// Milliseconds as a clock shows them, rounded up as the turn's clock is: "1:05", "42s", "4.2s".
export function duration(ms) {
  if (ms < 9900) return `${(Math.ceil(ms / 100) / 10).toFixed(1)}s`;
  const s = Math.ceil(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// What a seat has left of its bank and of its round budget, in a match with either: counting
// down while it is to act (tickClock), `data-ms` what it had as its turn started.
function budgetFacts(state, seat) {
  const left = clocksLeft(state, seat);
  if (!left) return [];
  const running = seat === state.toAct && !state.over && state.deadline > 0;
  const fact = (what, ms, title) => h("span", {
    className: `fact ${what}${running ? " running" : ""}`, "data-ms": state.clocks[what][seat], title,
  }, `${what} ${duration(ms)}`);
  return [
    left.bank === null ? null : fact("bank", left.bank, "what is left of its bank for the match"),
    left.round === null ? null : fact("round", left.round, "what is left of its time for this round"),
  ].filter(Boolean);
}

const nameOf = (state, ctx, seat) => (ctx.names && ctx.names[seat]) || seatName(state, seat);

// A hand as a fan: each card a slot that narrows as the hand grows, so that the fan never
// passes its box; the rank in each card's corner stays readable ("10" as well).
function fan(className, cards, label) {
  return h("div", { className: `fan ${className}`, role: label ? "group" : null, "aria-label": label || null, "data-count": cards.length },
    ...cards.map((c) => h("span", { className: "slot", "data-key": c.dataset.key || "" }, c)));
}

function seatBox(state, seat, ctx) {
  const pos = place(seat, state.players, state.viewer);
  const hand = state.hands[seat];
  const mine = state.viewer === seat;
  const toAct = state.toAct === seat && !state.over;
  const winner = state.over && !state.cancelled && state.winners.includes(seat);
  const open = ctx.open && ctx.open[seat];
  const facts = [];
  if (tricksRound(state)) facts.push(h("span", { className: "fact tricks", "data-tricks": state.tricksWon[seat] || 0 }, `tricks ${state.tricksWon[seat] || 0}`));
  if (state.kind && !tricksRound(state) && state.round >= 0) facts.push(h("span", { className: "fact passes" }, `passes ${state.passes[seat] || 0}`));
  const total = state.totals[seat];
  const size = hand ? (hand.hidden ? hand.size : hand.cards.length) : 0;
  if (size) facts.push(h("span", { className: "fact count" }, `${size} card${size === 1 ? "" : "s"}`));
  let cards = null;
  if (hand && !mine && size) {
    cards = hand.hidden
      ? h("div", { className: "fan backs", "data-count": size }, ...Array.from({ length: Math.min(size, 13) }, (_, i) => {
        const back = cardBack();
        return h("span", { className: "slot", "data-key": `b${i}` }, back);
      }))
      : fan("mini", hand.cards.map((c, i) => face(c, state.spanish, `${c.code}.${i}`)));
  }
  const budget = budgetFacts(state, seat); // a line of its own: the seat grows no wider
  const deadCards = state.dead[seat] || [];
  const dead = deadCards.length
    ? h("div", { className: "dead", title: `dead cards of ${nameOf(state, ctx, seat)}`, "data-count": deadCards.length },
      h("small", {}, `dead ${deadCards.length}`), fan("mini", deadCards.map((c, i) => face(c, state.spanish, `d${c.code}.${i}`))))
    : null;
  // A pass shows at the seat for a moment (a forced one says so).
  const pass = state.lastPass && state.lastPass.seat === seat && state.trick && state.trick.plays[0] && state.trick.plays[0].card === null
    ? h("span", { className: `bubble${state.lastPass.forced ? " forced" : ""}`, "data-key": `pass${state.lastPass.seq}` },
      state.lastPass.forced ? "pass: no card to play" : "pass")
    : null;
  return h("div", {
    className: `seat${toAct ? " to-act" : ""}${mine ? " mine" : ""}${winner ? " winner" : ""}${pos.p === 0 ? " me lower" : pos.dy > 0.3 ? " lower" : ""}${pos.side ? ` ${pos.side}` : ""}${open ? " open" : ""}`,
    style: placeStyle(pos), "data-key": `seat${seat}`,
    "data-seat": seat, "data-size": size, "data-hidden": hand ? hand.hidden : true,
  },
    h("div", { className: "nameplate" },
      state.dealer === seat && state.round >= 0 ? h("span", { className: "dealer-button", title: "dealer" }, "D") : null,
      h("b", { className: "name", title: nameOf(state, ctx, seat) }, open ? "open seat" : nameOf(state, ctx, seat)),
      total ? h("span", { className: "total", title: "total" }, scoreText(total)) : null,
      toAct ? h("span", { className: "clock", "data-clock": "" }, clockText(state) || "to play") : null),
    facts.length ? h("div", { className: "facts" }, ...facts) : null,
    budget.length ? h("div", { className: "facts clocks" }, ...budget) : null,
    cards, dead, pass);
}

// The cards of a trick on the felt: each at its seat's side of the middle; a closed trick is
// gathered towards its winner (the CSS animation, which prefers-reduced-motion turns off).
function trickCards(state, trick, winning, keyPrefix) {
  const win = trick.winner === null ? null : place(trick.winner, state.players, state.viewer);
  return trick.plays.map((play) => {
    const pos = place(play.seat, state.players, state.viewer);
    const vars = [
      `--x:${pct(pos.wide.tx)}`, `--y:${pct(pos.wide.ty)}`, `--px:${pct(pos.tall.tx)}`, `--py:${pct(pos.tall.ty)}`,
      // whence it came (its seat) and, once the trick is won, where it goes
      `--fx:${(pos.wide.x - pos.wide.tx).toFixed(1)}cqw`, `--fy:${(pos.wide.y - pos.wide.ty).toFixed(1)}cqh`,
      `--pfx:${(pos.tall.x - pos.tall.tx).toFixed(1)}cqw`, `--pfy:${(pos.tall.y - pos.tall.ty).toFixed(1)}cqh`,
    ];
    if (win) {
      vars.push(`--gx:${(win.wide.x - pos.wide.tx).toFixed(1)}cqw`, `--gy:${(win.wide.y - pos.wide.ty).toFixed(1)}cqh`,
        `--pgx:${(win.tall.x - pos.tall.tx).toFixed(1)}cqw`, `--pgy:${(win.tall.y - pos.tall.ty).toFixed(1)}cqh`);
    }
    return h("div", {
      className: `played${trick.winner === play.seat ? " won" : ""}${trick.winner !== null ? " closed" : ""}${winning === play.seat ? " winning" : ""}`,
      style: vars.join(";"), "data-seat": play.seat, "data-key": `${keyPrefix}${trick.number}.${play.seat}`,
    }, face(play.card, state.spanish));
  });
}

function centre(state, ctx) {
  const parts = [];
  const names = (s) => nameOf(state, ctx, s);
  if (ctx.waiting) {
    parts.push(ctx.waiting);
  } else if (tricksRound(state) && state.trick) {
    const t = state.trick;
    const winning = winningSoFar(state);
    parts.push(...trickCards(state, t, winning, "t"));
    const caption = [`Trick ${t.number}`, ` · led by ${names(t.leader)}`];
    if (t.winner !== null) caption.push(` · won by ${names(t.winner)}`);
    else if (winning !== null) caption.push(` · ${names(winning)} winning`);
    parts.push(h("div", { id: "trick", className: "caption", "data-leader": t.leader, "data-winner": t.winner ?? "", "data-number": t.number }, ...caption));
  } else if (!tricksRound(state) && state.round >= 0) {
    const last = state.trick && state.trick.plays[0];
    let caption = null;
    if (last) {
      const who = names(last.seat);
      caption = h("div", { className: "caption last-play", "data-key": "last-play" },
        last.card ? [`${who} played `, cardInline(last.card, state.spanish)] : `${who} passed${last.forced ? ": no card to play" : ""}`);
    }
    parts.push(layoutRows(state, caption));
  }
  // The last trick, on demand (the button, or the L key).
  const last = state.trick && state.trick.winner !== null ? state.trick : state.lastTrick;
  if (ctx.showLast && last && tricksRound(state)) {
    parts.push(h("div", { id: "last-trick", className: "last-trick", role: "dialog", "aria-label": "the last trick" },
      h("div", { className: "last-cards" }, ...last.plays.map((play) => h("figure", { className: `last-play${last.winner === play.seat ? " won" : ""}`, "data-seat": play.seat },
        face(play.card, state.spanish), h("figcaption", {}, names(play.seat))))),
      h("p", {}, `Trick ${last.number}, led by ${names(last.leader)}, won by ${names(last.winner)}`)));
  }
  return h("div", { className: "centre-area", "data-key": "centre" }, ...parts);
}

// Fan Tan's rows (one per suit, in rank order, each rank in its own column so that the rows
// line up) and Crazy Sixes' (ranks 1 to 12).
function layoutRows(state, caption) {
  const bySuit = new Map();
  for (const card of state.table) {
    if (!bySuit.has(card.suit)) bySuit.set(card.suit, []);
    bySuit.get(card.suit).push(card);
  }
  // The columns: 2..A (French), 1..12 (Spanish).
  const spanish = state.spanish;
  const column = (card) => (card.code === "JK" ? 1 : spanish ? card.rank : card.rank - 1);
  const columns = spanish ? 12 : 13;
  const rows = [...bySuit.keys()].sort((a, b) => a - b).map((suit) => {
    const cards = bySuit.get(suit).sort((a, b) => column(a) - column(b));
    const letter = SUIT_LETTERS[suit];
    return h("div", { className: "row", "data-suit": letter, "data-key": `row${letter}` },
      h("span", { className: "row-suit", "data-key": "suit" }, suitSymbol(letter, spanish)),
      ...cards.map((c) => {
        const el = face(c, spanish);
        el.style.gridColumn = String(column(c) + 1);
        return el;
      }));
  });
  return h("div", { className: "layout-area", "data-key": "layout-area" },
    h("div", { id: "table", className: `layout cols-${columns}`, "data-key": "layout" }, ...rows), caption);
}

function roundInfo(state, ctx) {
  if (state.round < 0) return h("div", { id: "round", className: "round-info" }, h("h2", { id: "round-title" }, state.started ? "Waiting for the first deal" : ctx.title || ""));
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
      h("span", { className: "excl" }, suitBadge(e.suit, state.spanish), ` by ${nameOf(state, ctx, e.seat)} `))));
  }
  if (ctx.onToggleLast && tricksRound(state)) {
    const last = (state.trick && state.trick.winner !== null) || state.lastTrick;
    const b = h("button", { type: "button", id: "show-last", className: ctx.showLast ? "on" : "", disabled: !last, title: "the last trick (L)", "aria-pressed": String(Boolean(ctx.showLast)) }, "Last trick");
    b.onclick = ctx.onToggleLast;
    bits.push(b);
  }
  return h("div", { id: "round", className: "round-info" }, ...bits);
}

// The score sheet: one row per round, the totals, the leader and the game's winner rule.
export function scoreSheet(state, ctx) {
  const names = Array.from({ length: state.players }, (_, s) => nameOf(state, ctx, s));
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
  return h("section", { id: "score-sheet", "data-key": "score-sheet" },
    h("h3", {}, "Score sheet"),
    h("div", { className: "scroll" }, h("table", { id: "scores" },
      h("thead", {}, h("tr", {}, h("th", {}, "Round"), ...names.map((n, s) => h("th", { "data-seat": s, title: n }, n)))),
      h("tbody", {}, ...rows),
      h("tfoot", {}, h("tr", { id: "totals" }, h("th", {}, "Total"),
        ...state.totals.map((t, s) => h("td", { "data-seat": s, className: best !== null && scoreValue(t) === best ? "leader" : "" }, scoreText(t))))))),
    h("p", { className: "rule" }, rule),
    h("p", { id: "winners" }, state.over
      ? (state.cancelled ? `Cancelled: ${state.cancelled}` : `Won by ${state.winners.map((w) => names[w]).join(", ")}`)
      : ""));
}

// The whole table. `ctx`: names, describe(kind), kindTitle(kind), lowestWins, rule,
// roundCount, and optionally hand (the reader's own hand element), ending (the panel shown
// once the match is over), notice, waiting, open (seats not taken), showLast and
// onToggleLast (the last trick), onRound (a replay's jump to a round).
export function tableView(state, ctx) {
  const felt = h("div", { className: `felt players-${state.players}${state.spanish ? " spanish" : ""}${state.round >= 0 && !tricksRound(state) ? " layout-round" : ""}`, "data-key": "felt" },
    centre(state, ctx),
    ...Array.from({ length: state.players }, (_, seat) => seatBox(state, seat, ctx)));
  return h("div", { className: `table-view${ctx.hand ? " seated" : ""}`, "data-over": state.over, "data-seq": String(state.seq), "data-key": "table-view" },
    h("div", { className: "table-main", "data-key": "main" }, roundInfo(state, ctx), ctx.notice || null, felt, ctx.ending || ctx.hand || null),
    h("aside", { className: "table-side", "data-key": "side" }, scoreSheet(state, ctx),
      h("ol", { id: "lines" }, ...state.lines.map((l) => h("li", {}, l)))));
}

// Refresh only the clocks of the seat to act (called a few times a second).
export function tickClock(root, state) {
  const clock = root.querySelector("[data-clock]");
  if (clock) clock.textContent = clockText(state) || "to play";
  const left = state.toAct === null ? null : clocksLeft(state, state.toAct);
  for (const what of left ? ["bank", "round"] : []) {
    const fact = root.querySelector(`.seat[data-seat="${state.toAct}"] .fact.${what}`);
    if (fact && left[what] !== null) fact.textContent = `${what} ${duration(left[what])}`;
  }
}
