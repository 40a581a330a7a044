var __defProp = Object.defineProperty;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __esm = (fn, res, err) => function __init() {
  if (err) throw err[0];
  try {
    return fn && (res = (0, fn[__getOwnPropNames(fn)[0]])(fn = 0)), res;
  } catch (e) {
    throw err = [e], e;
  }
};
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};

// src/proto.js
var proto_exports = {};
__export(proto_exports, {
  GrpcError: () => GrpcError,
  TYPES: () => TYPES,
  call: () => call,
  decode: () => decode,
  encode: () => encode,
  unary: () => unary
});
function encodeValue(value) {
  const w = new Writer();
  if (value === null) {
    w.tag(1, 0);
    w.varint(0);
  } else if (typeof value === "number") {
    w.tag(2, 1);
    const view2 = new DataView(new ArrayBuffer(8));
    view2.setFloat64(0, value, true);
    for (const b of new Uint8Array(view2.buffer)) w.bytes.push(b);
  } else if (typeof value === "string") w.chunk(3, new TextEncoder().encode(value));
  else if (typeof value === "boolean") {
    w.tag(4, 0);
    w.varint(value ? 1 : 0);
  } else if (Array.isArray(value)) {
    const list = new Writer();
    for (const item of value) list.chunk(1, encodeValue(item));
    w.chunk(6, list.result());
  } else w.chunk(5, encodeStruct(value));
  return w.result();
}
function encodeStruct(object) {
  const w = new Writer();
  for (const [key, value] of Object.entries(object)) {
    const entry = new Writer();
    entry.chunk(1, new TextEncoder().encode(key));
    entry.chunk(2, encodeValue(value));
    w.chunk(1, entry.result());
  }
  return w.result();
}
function encode(type, message) {
  if (type === "Struct") return encodeStruct(message);
  const w = new Writer();
  for (const [number, [name, kind, flag]] of Object.entries(TYPES[type])) {
    const value = message[name];
    if (value === void 0 || value === null) continue;
    const values = flag === 1 ? value : [value];
    for (const item of values) {
      if (NUMERIC.has(kind)) {
        w.tag(Number(number), 0);
        w.varint(kind === "b" ? item ? 1 : 0 : item);
      } else if (kind === "s") w.chunk(Number(number), new TextEncoder().encode(item));
      else if (kind === "y") w.chunk(Number(number), item);
      else w.chunk(Number(number), encode(kind, item));
    }
  }
  return w.result();
}
function scalar(kind, raw) {
  if (kind === "b") return raw !== 0n;
  if (kind === "i") return Number(BigInt.asIntN(64, raw));
  return Number(raw);
}
function decode(type, bytes) {
  const fields = TYPES[type];
  const out = {};
  for (const [name, kind, flag] of Object.values(fields)) {
    if (flag === 1) out[name] = [];
    else if (flag !== 2 && NUMERIC.has(kind)) out[name] = kind === "b" ? false : 0;
    else if (kind === "s") out[name] = "";
  }
  const r = new Reader(bytes);
  while (r.pos < bytes.length) {
    const key = Number(r.varint());
    const number = Math.floor(key / 8), wire = key & 7;
    const field = fields[number];
    if (!field) {
      r.skip(wire);
      continue;
    }
    const [name, kind, flag] = field;
    let values;
    if (NUMERIC.has(kind)) {
      if (wire === 2) {
        const packed = new Reader(r.take(Number(r.varint())));
        values = [];
        while (packed.pos < packed.bytes.length) values.push(scalar(kind, packed.varint()));
      } else values = [scalar(kind, r.varint())];
    } else {
      const data = r.take(Number(r.varint()));
      if (kind === "s") values = [new TextDecoder().decode(data)];
      else if (kind === "y") values = [data.slice()];
      else values = [decode(kind, data)];
    }
    if (flag === 1) out[name].push(...values);
    else out[name] = values[values.length - 1];
  }
  if (ONEOF[type]) out.kind = ONEOF[type].find((name) => out[name] !== void 0);
  return out;
}
function request(method, type, message, token, signal) {
  const body = encode(type, message);
  const framed = new Uint8Array(5 + body.length);
  new DataView(framed.buffer).setUint32(1, body.length);
  framed.set(body, 5);
  const headers = { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" };
  if (token) headers.authorization = `Bearer ${token}`;
  return fetch(SERVICE + method, { method: "POST", headers, body: framed, signal });
}
function frames(buffer) {
  const found = [];
  let pos = 0;
  while (buffer.length - pos >= 5) {
    const length = new DataView(buffer.buffer, buffer.byteOffset + pos + 1, 4).getUint32(0);
    if (buffer.length - pos - 5 < length) break;
    found.push({ flags: buffer[pos], data: buffer.slice(pos + 5, pos + 5 + length) });
    pos += 5 + length;
  }
  return [found, buffer.slice(pos)];
}
function trailers(data) {
  const text = new TextDecoder().decode(data);
  const out = {};
  for (const line of text.split("\r\n")) {
    const at = line.indexOf(":");
    if (at > 0) out[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return { code: Number(out["grpc-status"] ?? 2), message: decodeURIComponent(out["grpc-message"] ?? "") };
}
async function call(method, reqType, resType, message, { token, signal, onMessage } = {}) {
  const response = await request(method, reqType, message, token, signal);
  if (!response.ok) throw new GrpcError(14, `HTTP ${response.status}`);
  const reader = response.body.getReader();
  let buffer = new Uint8Array(0);
  const results = [];
  for (; ; ) {
    const { done: done2, value } = await reader.read();
    if (done2) throw new GrpcError(14, "the stream ended without a status");
    const joined = new Uint8Array(buffer.length + value.length);
    joined.set(buffer);
    joined.set(value, buffer.length);
    const [found, rest] = frames(joined);
    buffer = rest;
    for (const f of found) {
      if (f.flags & 128) {
        const status = trailers(f.data);
        if (status.code !== 0) throw new GrpcError(status.code, status.message);
        return results;
      }
      const decoded = decode(resType, f.data);
      if (onMessage) onMessage(decoded);
      else results.push(decoded);
    }
  }
}
async function unary(method, reqType, resType, message, options = {}) {
  const [result] = await call(method, reqType, resType, message, options);
  return result;
}
var seat, TYPES, ONEOF, NUMERIC, Writer, Reader, SERVICE, GrpcError;
var init_proto = __esm({
  "src/proto.js"() {
    seat = { 1: ["seat", "u"] };
    TYPES = {
      Card: { 1: ["suit", "e"], 2: ["rank", "u"], 3: ["code", "s"] },
      CardList: { 1: ["cards", "Card", 1] },
      Score: { 1: ["numerator", "i"], 2: ["denominator", "i"] },
      Pass: {},
      Action: { 1: ["play", "Card"], 2: ["pass", "Pass"], 3: ["exclude_suit", "e", 2], 4: ["choose_trump", "e", 2] },
      Hand: { 1: ["hidden", "b"], 2: ["size", "u"], 3: ["cards", "Card", 1] },
      SeatInfo: { 1: ["seat", "u"], 2: ["taken", "b"], 3: ["name", "s"] },
      MatchInfo: {
        1: ["match_id", "s"],
        2: ["game", "s"],
        3: ["players", "u"],
        5: ["status", "e"],
        6: ["seats", "SeatInfo", 1],
        7: ["created_unix_ms", "i"],
        9: ["last_seq", "u"],
        11: ["totals", "Score", 1],
        12: ["winners", "u", 1]
      },
      ListMatchesRequest: { 1: ["page_size", "u"], 2: ["page_token", "s"], 3: ["status", "e"] },
      ListMatchesResponse: { 1: ["matches", "MatchInfo", 1], 2: ["next_page_token", "s"] },
      CreateMatchRequest: { 1: ["game", "s"], 2: ["players", "u"], 3: ["options", "Struct"] },
      CreateMatchResponse: { 1: ["match", "MatchInfo"] },
      GetMatchRequest: { 1: ["match_id", "s"] },
      GetMatchResponse: { 1: ["match", "MatchInfo"] },
      JoinMatchRequest: { 1: ["match_id", "s"], 2: ["seat", "u", 2], 3: ["name", "s"] },
      JoinMatchResponse: { 1: ["seat", "u"], 2: ["token", "s"], 3: ["match", "MatchInfo"] },
      SubmitActionRequest: {
        1: ["match_id", "s"],
        2: ["seat", "u"],
        3: ["action", "Action"],
        4: ["expected_seq", "u"],
        5: ["request_id", "s"]
      },
      SubmitActionResponse: { 1: ["first_seq", "u"], 2: ["last_seq", "u"] },
      StreamEventsRequest: { 1: ["match_id", "s"], 2: ["seat", "u"], 3: ["after_seq", "u"] },
      StreamEventsResponse: { 1: ["snapshot", "Snapshot"], 2: ["event", "Event"], 3: ["your_turn", "YourTurn"] },
      WatchMatchRequest: { 1: ["match_id", "s"], 2: ["after_seq", "u"] },
      WatchMatchResponse: { 1: ["snapshot", "Snapshot"], 2: ["event", "Event"] },
      GetMatchLogRequest: { 1: ["match_id", "s"] },
      LogEntry: { 1: ["seq", "u"], 2: ["event", "y"], 3: ["hash", "y"] },
      GetMatchLogResponse: { 1: ["match", "MatchInfo"], 2: ["entries", "LogEntry", 1] },
      YourTurn: { 1: ["seq", "u"], 2: ["legal_actions", "Action", 1], 3: ["deadline_unix_ms", "i"] },
      Trick: { 1: ["leader", "u"], 2: ["cards", "Card", 1] },
      Snapshot: {
        1: ["match_id", "s"],
        2: ["game", "s"],
        3: ["players", "u"],
        4: ["viewer_seat", "u", 2],
        5: ["seq", "u"],
        6: ["round", "u"],
        7: ["round_kind", "s"],
        8: ["dealer", "u"],
        9: ["trump", "e"],
        10: ["to_act", "u", 2],
        11: ["hands", "Hand", 1],
        12: ["legal_actions", "Action", 1],
        13: ["totals", "Score", 1],
        14: ["over", "b"],
        15: ["winners", "u", 1],
        16: ["trick", "Trick"],
        17: ["tricks_won", "u", 1],
        20: ["table", "Card", 1]
      },
      MatchStarted: { 1: ["match_id", "s"], 2: ["game", "s"], 3: ["players", "u"] },
      SeatJoined: { 1: ["seat", "u"], 2: ["name", "s"] },
      DealerDrawn: seat,
      RoundStarted: { 1: ["round", "u"], 2: ["kind", "s"], 3: ["dealer", "u"], 4: ["trump", "e"], 5: ["multiplier", "u"] },
      TrumpDrawn: { 1: ["round", "u"], 2: ["suit", "e"] },
      Dealt: { 1: ["round", "u"], 2: ["hands", "Hand", 1] },
      SuitExcluded: { 1: ["seat", "u"], 2: ["suit", "e"] },
      TrumpChosen: { 1: ["seat", "u"], 2: ["suit", "e"] },
      CardPlayed: { 1: ["seat", "u"], 2: ["card", "Card"] },
      Passed: { 1: ["seat", "u"], 2: ["reason", "e"] },
      TrickWon: { 1: ["trick", "u"], 2: ["leader", "u"], 3: ["cards", "Card", 1], 4: ["seat", "u"] },
      CardsDead: { 1: ["seat", "u"], 2: ["cards", "Card", 1] },
      RoundScored: { 1: ["round", "u"], 2: ["scores", "Score", 1], 3: ["totals", "Score", 1] },
      MatchEnded: { 1: ["totals", "Score", 1], 2: ["winners", "u", 1] },
      TimedOut: seat,
      SeedRevealed: { 1: ["seed", "y"] },
      Event: {
        1: ["seq", "u"],
        10: ["match_started", "MatchStarted"],
        11: ["seat_joined", "SeatJoined"],
        12: ["dealer_drawn", "DealerDrawn"],
        13: ["round_started", "RoundStarted"],
        14: ["trump_drawn", "TrumpDrawn"],
        15: ["dealt", "Dealt"],
        16: ["suit_excluded", "SuitExcluded"],
        17: ["trump_chosen", "TrumpChosen"],
        18: ["card_played", "CardPlayed"],
        19: ["passed", "Passed"],
        20: ["trick_won", "TrickWon"],
        21: ["cards_dead", "CardsDead"],
        23: ["round_scored", "RoundScored"],
        24: ["match_ended", "MatchEnded"],
        25: ["timed_out", "TimedOut"],
        26: ["seed_revealed", "SeedRevealed"]
      }
    };
    ONEOF = {
      Event: Object.values(TYPES.Event).map((f) => f[0]).filter((n) => n !== "seq"),
      Action: ["play", "pass", "exclude_suit", "choose_trump"],
      StreamEventsResponse: ["snapshot", "event", "your_turn"],
      WatchMatchResponse: ["snapshot", "event"]
    };
    NUMERIC = /* @__PURE__ */ new Set(["u", "i", "b", "e"]);
    Writer = class {
      constructor() {
        this.bytes = [];
      }
      varint(value) {
        let v = BigInt.asUintN(64, BigInt(value));
        while (v >= 0x80n) {
          this.bytes.push(Number(v & 0x7fn) | 128);
          v >>= 7n;
        }
        this.bytes.push(Number(v));
      }
      tag(field, wire) {
        this.varint(field * 8 + wire);
      }
      chunk(field, data) {
        this.tag(field, 2);
        this.varint(data.length);
        for (const b of data) this.bytes.push(b);
      }
      result() {
        return Uint8Array.from(this.bytes);
      }
    };
    Reader = class {
      constructor(bytes) {
        this.bytes = bytes;
        this.pos = 0;
      }
      varint() {
        let result = 0n, shift = 0n;
        for (; ; ) {
          const b = this.bytes[this.pos++];
          if (b === void 0) throw new Error("truncated varint");
          result |= BigInt(b & 127) << shift;
          if (b < 128) return result;
          shift += 7n;
        }
      }
      take(n) {
        if (this.pos + n > this.bytes.length) throw new Error("truncated field");
        const out = this.bytes.subarray(this.pos, this.pos + n);
        this.pos += n;
        return out;
      }
      skip(wire) {
        if (wire === 0) this.varint();
        else if (wire === 1) this.take(8);
        else if (wire === 2) this.take(Number(this.varint()));
        else if (wire === 5) this.take(4);
        else throw new Error(`unsupported wire type ${wire}`);
      }
    };
    SERVICE = "/cardarena.v1.MatchService/";
    GrpcError = class extends Error {
      constructor(code, message) {
        super(`gRPC status ${code}: ${message}`);
        this.code = code;
        this.details = message;
      }
    };
  }
});

// src/app.js
init_proto();
var view = document.getElementById("view");
var STATUS = ["unspecified", "waiting", "running", "ended"];
var h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("data-")) el.setAttribute(k, String(v));
    else el[k] = v;
  }
  for (const child of children) el.append(child);
  return el;
};
var score = (s) => s.denominator > 1 ? `${s.numerator}/${s.denominator}` : String(s.numerator);
var showError = (error) => {
  document.getElementById("error").textContent = String(error.message || error);
};
var done = (over) => {
  document.body.dataset.over = over ? "true" : "false";
};
var ready = () => {
  document.body.dataset.ready = "true";
};
function totalsTable(totals, winners, names) {
  return h(
    "div",
    {},
    h("table", { id: "totals" }, h("tr", {}, ...totals.map((t) => h("td", {}, score(t))))),
    h("p", { id: "winners" }, winners.length ? "Won by " + winners.map((w) => names[w] || `seat ${w}`).join(", ") : "")
  );
}
function describe(event) {
  const e = event[event.kind] || {};
  switch (event.kind) {
    case "card_played":
      return `seat ${e.seat} plays ${e.card.code}`;
    case "passed":
      return `seat ${e.seat} passes`;
    case "trick_won":
      return `trick ${e.trick} won by seat ${e.seat}`;
    case "round_started":
      return `round ${e.round}: ${e.kind}, dealer seat ${e.dealer}`;
    case "round_scored":
      return `round ${e.round} scored: ${e.totals.map(score).join(" ")}`;
    case "match_ended":
      return `match ended: ${e.totals.map(score).join(" ")}`;
    case "seat_joined":
      return `seat ${e.seat} joined: ${e.name}`;
    default:
      return event.kind || "event";
  }
}
async function listView() {
  const form = h(
    "form",
    { id: "create" },
    h("label", {}, "game ", h("input", { id: "game", value: "pentathlon" })),
    " ",
    h("label", {}, "players ", h("input", { id: "players", type: "number", value: "3" })),
    " ",
    h("label", {}, "options ", h("input", { id: "options", value: "{}" })),
    " ",
    h("button", { id: "new-match", type: "submit" }, "Play against bots")
  );
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    playAgainstBots().catch(showError);
  });
  const rows = h("tbody");
  view.replaceChildren(
    h("h2", {}, "New match"),
    form,
    h("h2", {}, "Matches"),
    h("table", { id: "matches" }, h("thead", {}, h("tr", {}, h("th", {}, "match"), h("th", {}, "game"), h("th", {}, "status"), h("th", {}, "totals"))), rows)
  );
  const resp = await unary("ListMatches", "ListMatchesRequest", "ListMatchesResponse", { page_size: 100 });
  for (const m of resp.matches) {
    const status = STATUS[m.status] || "?";
    const href = status === "ended" ? `?log=${m.match_id}` : `?watch=${m.match_id}`;
    rows.append(h(
      "tr",
      { className: "match", "data-id": m.match_id, "data-status": status },
      h("td", {}, h("a", { href }, m.match_id)),
      h("td", {}, m.game),
      h("td", {}, status),
      h("td", {}, m.totals.map(score).join(" "))
    ));
  }
  ready();
}
async function watchView(matchId) {
  const state = { hands: [], totals: [], winners: [], over: false, lastEvent: "" };
  const render = () => {
    view.replaceChildren(
      h("h2", {}, `Watching ${matchId}`),
      h("div", { id: "hands" }, ...state.hands.map((hand, seat2) => h(
        "div",
        { className: "hand", "data-seat": seat2, "data-hidden": hand.hidden, "data-size": hand.hidden ? hand.size : hand.cards.length },
        `seat ${seat2}: `,
        ...hand.hidden ? [`${hand.size} hidden cards`] : hand.cards.map((c) => h("span", { className: "card", "data-card": c.code }, c.code))
      ))),
      h("p", { id: "last" }, state.lastEvent),
      totalsTable(state.totals, state.winners, [])
    );
    done(state.over);
  };
  const onMessage = (msg) => {
    if (msg.kind === "snapshot") {
      const s = msg.snapshot;
      Object.assign(state, { hands: s.hands, totals: s.totals, winners: s.winners, over: s.over });
    } else {
      const e = msg.event;
      state.lastEvent = describe(e);
      if (e.kind === "dealt") state.hands = e.dealt.hands;
      if (e.kind === "card_played") {
        const hand = state.hands[e.card_played.seat];
        if (hand) {
          if (hand.hidden) hand.size = Math.max(0, hand.size - 1);
          else hand.cards = hand.cards.filter((c) => c.code !== e.card_played.card.code);
        }
      }
      if (e.kind === "round_scored") state.totals = e.round_scored.totals;
      if (e.kind === "match_ended") Object.assign(state, { totals: e.match_ended.totals, winners: e.match_ended.winners, over: true });
    }
    render();
  };
  render();
  ready();
  await call("WatchMatch", "WatchMatchRequest", "WatchMatchResponse", { match_id: matchId }, { onMessage });
}
async function logView(matchId) {
  const resp = await unary("GetMatchLog", "GetMatchLogRequest", "GetMatchLogResponse", { match_id: matchId });
  const { decode: decode2 } = await Promise.resolve().then(() => (init_proto(), proto_exports));
  const events = resp.entries.map((entry) => decode2("Event", entry.event));
  const names = resp.match.seats.map((s) => s.name);
  let step = 1;
  const show = () => {
    let totals = [], winners = [];
    for (const e of events.slice(0, step)) {
      if (e.kind === "round_scored") totals = e.round_scored.totals;
      if (e.kind === "match_ended") ({ totals, winners } = e.match_ended);
    }
    const prev = h("button", { id: "prev", disabled: step <= 1 }, "Previous");
    const next = h("button", { id: "next", disabled: step >= events.length }, "Next");
    prev.onclick = () => {
      step -= 1;
      show();
    };
    next.onclick = () => {
      step += 1;
      show();
    };
    view.replaceChildren(
      h("h2", {}, `Log of ${matchId}`),
      h("p", { id: "step", "data-step": step, "data-steps": events.length }, `step ${step} of ${events.length}`),
      prev,
      " ",
      next,
      h("p", { id: "event" }, events.length ? describe(events[step - 1]) : ""),
      totalsTable(totals, winners, names)
    );
  };
  show();
  ready();
}
function requestId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
function submit(matchId, seat2, token, seq, action) {
  return unary("SubmitAction", "SubmitActionRequest", "SubmitActionResponse", {
    match_id: matchId,
    seat: seat2,
    action,
    expected_seq: seq,
    request_id: requestId()
  }, { token });
}
function runBot(matchId, seat2, token, signal) {
  const act = (seq, legal) => {
    if (!legal.length) return;
    submit(matchId, seat2, token, seq, legal[0]).catch((error) => {
      if (!(error instanceof GrpcError && error.code === 10)) showError(error);
    });
  };
  const onMessage = (msg) => {
    if (msg.kind === "your_turn") act(msg.your_turn.seq, msg.your_turn.legal_actions);
    else if (msg.kind === "snapshot" && !msg.snapshot.over) act(msg.snapshot.seq, msg.snapshot.legal_actions);
  };
  return call("StreamEvents", "StreamEventsRequest", "StreamEventsResponse", { match_id: matchId, seat: seat2 }, { token, signal, onMessage }).catch((error) => {
    if (!signal.aborted) showError(error);
  });
}
async function playAgainstBots() {
  const options = JSON.parse(document.getElementById("options").value || "{}");
  const created = await unary("CreateMatch", "CreateMatchRequest", "CreateMatchResponse", {
    game: document.getElementById("game").value,
    players: Number(document.getElementById("players").value),
    options
  });
  const match = created.match;
  const me = await unary("JoinMatch", "JoinMatchRequest", "JoinMatchResponse", { match_id: match.match_id, seat: 0, name: "you" });
  const controller = new AbortController();
  const state = { hand: [], legal: [], seq: 0, totals: [], winners: [], over: false, lastEvent: "" };
  const names = ["you"];
  const render = () => {
    const legalCodes = new Map(state.legal.filter((a) => a.kind === "play").map((a) => [a.play.code, a]));
    const cards = state.hand.map((c) => {
      const action = legalCodes.get(c.code);
      const button = h("button", { className: action ? "card legal" : "card", disabled: !action, "data-card": c.code }, c.code);
      if (action) button.onclick = () => play(action);
      return button;
    });
    const pass = state.legal.find((a) => a.kind !== "play");
    const extra = pass ? [h("button", { id: "pass", className: "legal" }, pass.kind === "pass" ? "Pass" : pass.kind)] : [];
    if (pass) extra[0].onclick = () => play(pass);
    view.replaceChildren(
      h("h2", {}, "Playing "),
      h("span", { id: "match-id" }, match.match_id),
      h("p", { id: "turn" }, state.over ? "The match is over." : state.legal.length ? "Your turn" : "Waiting\u2026"),
      h("div", { id: "hand" }, ...cards, ...extra),
      h("p", { id: "last" }, state.lastEvent),
      totalsTable(state.totals, state.winners, names)
    );
    document.body.dataset.match = match.match_id;
    done(state.over);
  };
  const play = (action) => {
    const seq = state.seq;
    state.legal = [];
    render();
    submit(match.match_id, 0, me.token, seq, action).catch(showError);
  };
  const onMessage = (msg) => {
    if (msg.kind === "snapshot") {
      const s = msg.snapshot;
      state.hand = s.hands[0] && s.hands[0].cards || [];
      Object.assign(state, { legal: s.legal_actions, seq: s.seq, totals: s.totals, winners: s.winners, over: s.over });
    } else if (msg.kind === "your_turn") {
      Object.assign(state, { legal: msg.your_turn.legal_actions, seq: msg.your_turn.seq });
    } else {
      const e = msg.event;
      state.lastEvent = describe(e);
      if (e.kind === "dealt") state.hand = e.dealt.hands[0].cards;
      if (e.kind === "card_played" && e.card_played.seat === 0) state.hand = state.hand.filter((c) => c.code !== e.card_played.card.code);
      if (e.kind === "round_scored") state.totals = e.round_scored.totals;
      if (e.kind === "seat_joined") names[e.seat_joined.seat] = e.seat_joined.name;
      if (e.kind === "match_ended") {
        Object.assign(state, { totals: e.match_ended.totals, winners: e.match_ended.winners, over: true, legal: [] });
      }
    }
    render();
    if (state.over) setTimeout(() => controller.abort(), 0);
  };
  render();
  const mine = call("StreamEvents", "StreamEventsRequest", "StreamEventsResponse", { match_id: match.match_id, seat: 0 }, { token: me.token, signal: controller.signal, onMessage }).catch((error) => {
    if (!controller.signal.aborted) showError(error);
  });
  const bots = [];
  for (let seat2 = 1; seat2 < match.players; seat2 += 1) {
    const joined = await unary("JoinMatch", "JoinMatchRequest", "JoinMatchResponse", { match_id: match.match_id, seat: seat2, name: `bot${seat2}` });
    bots.push(runBot(match.match_id, seat2, joined.token, controller.signal));
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
