// The cardarena web app: list matches, watch one live, step through an ended match's log,
// and play seat 0 against simple in-page bots. Views: /, ?watch=ID, ?log=ID.
import { matches, withToken, decodeEvent, errorText, ConnectError, Code } from "./rpc.js";

const view = document.getElementById("view");
const STATUS = ["unspecified", "waiting", "running", "ended"];
const h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("data-")) el.setAttribute(k, String(v));
    else el[k] = v;
  }
  for (const child of children) el.append(child);
  return el;
};
const score = (s) => (s.denominator > 1n ? `${s.numerator}/${s.denominator}` : String(s.numerator));
const showError = (error) => { document.getElementById("error").textContent = errorText(error); };
const done = (over) => { document.body.dataset.over = over ? "true" : "false"; };
const ready = () => { document.body.dataset.ready = "true"; };

function totalsTable(totals, winners, names) {
  return h("div", {},
    h("table", { id: "totals" }, h("tr", {}, ...totals.map((t) => h("td", {}, score(t))))),
    h("p", { id: "winners" }, winners.length ? "Won by " + winners.map((w) => names[w] || `seat ${w}`).join(", ") : ""));
}

function describe(event) {
  const e = event.kind.value || {};
  switch (event.kind.case) {
    case "cardPlayed": return `seat ${e.seat} plays ${e.card.code}`;
    case "passed": return `seat ${e.seat} passes`;
    case "trickWon": return `trick ${e.trick} won by seat ${e.seat}`;
    case "roundStarted": return `round ${e.round}: ${e.kind}, dealer seat ${e.dealer}`;
    case "roundScored": return `round ${e.round} scored: ${e.totals.map(score).join(" ")}`;
    case "matchEnded": return `match ended: ${e.totals.map(score).join(" ")}`;
    case "seatJoined": return `seat ${e.seat} joined: ${e.name}`;
    default: return event.kind.case || "event";
  }
}

// --- list and create ------------------------------------------------------------------------

async function listView() {
  const form = h("form", { id: "create" },
    h("label", {}, "game ", h("input", { id: "game", value: "pentathlon" })), " ",
    h("label", {}, "players ", h("input", { id: "players", type: "number", value: "3" })), " ",
    h("label", {}, "options ", h("input", { id: "options", value: "{}" })), " ",
    h("button", { id: "new-match", type: "submit" }, "Play against bots"));
  form.addEventListener("submit", (ev) => { ev.preventDefault(); playAgainstBots().catch(showError); });
  const rows = h("tbody");
  view.replaceChildren(h("h2", {}, "New match"), form, h("h2", {}, "Matches"),
    h("table", { id: "matches" }, h("thead", {}, h("tr", {}, h("th", {}, "match"), h("th", {}, "game"), h("th", {}, "status"), h("th", {}, "totals"))), rows));
  const resp = await matches.listMatches({ pageSize: 100 });
  for (const m of resp.matches) {
    const status = STATUS[m.status] || "?";
    const href = status === "ended" ? `?log=${m.matchId}` : `?watch=${m.matchId}`;
    rows.append(h("tr", { className: "match", "data-id": m.matchId, "data-status": status },
      h("td", {}, h("a", { href }, m.matchId)), h("td", {}, m.game), h("td", {}, status),
      h("td", {}, m.totals.map(score).join(" "))));
  }
  ready();
}

async function consume(stream, onMessage) {
  for await (const msg of stream) onMessage(msg);
}

// --- spectator -------------------------------------------------------------------------------

async function watchView(matchId) {
  const state = { hands: [], totals: [], winners: [], over: false, lastEvent: "" };
  const render = () => {
    view.replaceChildren(h("h2", {}, `Watching ${matchId}`),
      h("div", { id: "hands" }, ...state.hands.map((hand, seat) =>
        h("div", { className: "hand", "data-seat": seat, "data-hidden": hand.hidden, "data-size": hand.hidden ? hand.size : hand.cards.length },
          `seat ${seat}: `, ...(hand.hidden ? [`${hand.size} hidden cards`] : hand.cards.map((c) => h("span", { className: "card", "data-card": c.code }, c.code)))))),
      h("p", { id: "last" }, state.lastEvent),
      totalsTable(state.totals, state.winners, []));
    done(state.over);
  };
  const onMessage = (msg) => {
    if (msg.kind.case === "snapshot") {
      const s = msg.kind.value;
      Object.assign(state, { hands: s.hands, totals: s.totals, winners: s.winners, over: s.over });
    } else {
      const e = msg.kind.value, k = e.kind.case, v = e.kind.value;
      state.lastEvent = describe(e);
      if (k === "dealt") state.hands = v.hands;
      if (k === "cardPlayed") {
        const hand = state.hands[v.seat];
        if (hand) { if (hand.hidden) hand.size = Math.max(0, hand.size - 1); else hand.cards = hand.cards.filter((c) => c.code !== v.card.code); }
      }
      if (k === "roundScored") state.totals = v.totals;
      if (k === "matchEnded") Object.assign(state, { totals: v.totals, winners: v.winners, over: true });
    }
    render();
  };
  render();
  ready();
  for await (const msg of matches.watchMatch({ matchId })) onMessage(msg);
}

// --- log replay ------------------------------------------------------------------------------

async function logView(matchId) {
  const resp = await matches.getMatchLog({ matchId });
  const events = resp.entries.map((entry) => decodeEvent(entry.event));
  const names = resp.match.seats.map((s) => s.name);
  let step = 1;
  const show = () => {
    let totals = [], winners = [];
    for (const e of events.slice(0, step)) {
      if (e.kind.case === "roundScored") totals = e.kind.value.totals;
      if (e.kind.case === "matchEnded") ({ totals, winners } = e.kind.value);
    }
    const prev = h("button", { id: "prev", disabled: step <= 1 }, "Previous");
    const next = h("button", { id: "next", disabled: step >= events.length }, "Next");
    prev.onclick = () => { step -= 1; show(); };
    next.onclick = () => { step += 1; show(); };
    view.replaceChildren(h("h2", {}, `Log of ${matchId}`),
      h("p", { id: "step", "data-step": step, "data-steps": events.length }, `step ${step} of ${events.length}`),
      prev, " ", next, h("p", { id: "event" }, events.length ? describe(events[step - 1]) : ""),
      totalsTable(totals, winners, names));
  };
  show();
  ready();
}

// --- playing against bots --------------------------------------------------------------------

// 16 random bytes in hex: another seat must not be able to guess and spend this seat's next
// id. getRandomValues, unlike randomUUID, also works on a page served over plain http.
function requestId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function submit(matchId, seat, token, seq, action) {
  return matches.submitAction({ matchId, seat, action, expectedSeq: seq, requestId: requestId() }, withToken(token));
}

// A bot: the first legal action, whenever its stream says it is to act.
function runBot(matchId, seat, token, signal) {
  const act = (seq, legal) => {
    if (!legal.length) return;
    submit(matchId, seat, token, seq, legal[0]).catch((error) => {
      if (!(error instanceof ConnectError && error.code === Code.Aborted)) showError(error); // a newer turn comes
    });
  };
  const onMessage = (msg) => {
    const v = msg.kind.value;
    if (msg.kind.case === "yourTurn") act(v.seq, v.legalActions);
    else if (msg.kind.case === "snapshot" && !v.over) act(v.seq, v.legalActions);
  };
  return consume(matches.streamEvents({ matchId, seat }, withToken(token, { signal })), onMessage)
    .catch((error) => { if (!signal.aborted) showError(error); });
}

async function playAgainstBots() {
  const options = JSON.parse(document.getElementById("options").value || "{}");
  const created = await matches.createMatch({
    game: document.getElementById("game").value, players: Number(document.getElementById("players").value), options,
  });
  const match = created.match;
  const me = await matches.joinMatch({ matchId: match.matchId, seat: 0, name: "you" });
  const controller = new AbortController();
  const state = { hand: [], legal: [], seq: 0, totals: [], winners: [], over: false, lastEvent: "" };
  const names = ["you"];
  const render = () => {
    const legalCodes = new Map(state.legal.filter((a) => a.kind.case === "play").map((a) => [a.kind.value.code, a]));
    const cards = state.hand.map((c) => {
      const action = legalCodes.get(c.code);
      const button = h("button", { className: action ? "card legal" : "card", disabled: !action, "data-card": c.code }, c.code);
      if (action) button.onclick = () => play(action);
      return button;
    });
    const pass = state.legal.find((a) => a.kind.case !== "play");
    const extra = pass ? [h("button", { id: "pass", className: "legal" }, pass.kind.case === "pass" ? "Pass" : pass.kind.case)] : [];
    if (pass) extra[0].onclick = () => play(pass);
    view.replaceChildren(h("h2", {}, "Playing "), h("span", { id: "match-id" }, match.matchId),
      h("p", { id: "turn" }, state.over ? "The match is over." : state.legal.length ? "Your turn" : "Waiting…"),
      h("div", { id: "hand" }, ...cards, ...extra), h("p", { id: "last" }, state.lastEvent),
      totalsTable(state.totals, state.winners, names));
    document.body.dataset.match = match.matchId;
    done(state.over);
  };
  const play = (action) => {
    const seq = state.seq;
    state.legal = [];
    render();
    submit(match.matchId, 0, me.token, seq, action).catch(showError);
  };
  const onMessage = (msg) => {
    const m = msg.kind.value;
    if (msg.kind.case === "snapshot") {
      state.hand = (m.hands[0] && m.hands[0].cards) || [];
      Object.assign(state, { legal: m.legalActions, seq: m.seq, totals: m.totals, winners: m.winners, over: m.over });
    } else if (msg.kind.case === "yourTurn") {
      Object.assign(state, { legal: m.legalActions, seq: m.seq });
    } else {
      const k = m.kind.case, v = m.kind.value;
      state.lastEvent = describe(m);
      if (k === "dealt") state.hand = v.hands[0].cards;
      if (k === "cardPlayed" && v.seat === 0) state.hand = state.hand.filter((c) => c.code !== v.card.code);
      if (k === "roundScored") state.totals = v.totals;
      if (k === "seatJoined") names[v.seat] = v.name;
      if (k === "matchEnded") {
        Object.assign(state, { totals: v.totals, winners: v.winners, over: true, legal: [] });
      }
    }
    render();
    if (state.over) setTimeout(() => controller.abort(), 0);
  };
  render();
  const mine = consume(matches.streamEvents({ matchId: match.matchId, seat: 0 }, withToken(me.token, { signal: controller.signal })), onMessage)
    .catch((error) => { if (!controller.signal.aborted) showError(error); });
  const bots = [];
  for (let seat = 1; seat < match.players; seat += 1) {
    const joined = await matches.joinMatch({ matchId: match.matchId, seat, name: `bot${seat}` });
    bots.push(runBot(match.matchId, seat, joined.token, controller.signal));
  }
  await Promise.all([mine, ...bots]);
}

async function main() {
  const params = new URLSearchParams(location.search);
  try {
    if (params.get("watch")) await watchView(params.get("watch"));
    else if (params.get("log")) await logView(params.get("log"));
    else await listView();
  } catch (error) {
    showError(error);
    ready();
  }
}

main();
