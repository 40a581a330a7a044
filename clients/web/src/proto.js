// A hand-written protobuf codec for the few cardarena.v1 messages the web app needs, and a
// gRPC-Web client (application/grpc-web+proto) over fetch. Field numbers follow
// proto/cardarena/v1/{game,service}.proto; unknown fields are skipped.
//
// A field is [name, kind, flag]: kind u (uint varint), i (int64), b (bool), e (enum), s (string),
// y (bytes), d (double) or a message name; flag 1 = repeated, 2 = optional (no default).

const seat = { 1: ["seat", "u"] };
export const TYPES = {
  Card: { 1: ["suit", "e"], 2: ["rank", "u"], 3: ["code", "s"] },
  CardList: { 1: ["cards", "Card", 1] },
  Score: { 1: ["numerator", "i"], 2: ["denominator", "i"] },
  Pass: {},
  Action: { 1: ["play", "Card"], 2: ["pass", "Pass"], 3: ["exclude_suit", "e", 2], 4: ["choose_trump", "e", 2] },
  Hand: { 1: ["hidden", "b"], 2: ["size", "u"], 3: ["cards", "Card", 1] },
  SeatInfo: { 1: ["seat", "u"], 2: ["taken", "b"], 3: ["name", "s"] },
  MatchInfo: {
    1: ["match_id", "s"], 2: ["game", "s"], 3: ["players", "u"], 5: ["status", "e"],
    6: ["seats", "SeatInfo", 1], 7: ["created_unix_ms", "i"], 9: ["last_seq", "u"],
    11: ["totals", "Score", 1], 12: ["winners", "u", 1],
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
    1: ["match_id", "s"], 2: ["seat", "u"], 3: ["action", "Action"], 4: ["expected_seq", "u"],
    5: ["request_id", "s"],
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
    1: ["match_id", "s"], 2: ["game", "s"], 3: ["players", "u"], 4: ["viewer_seat", "u", 2],
    5: ["seq", "u"], 6: ["round", "u"], 7: ["round_kind", "s"], 8: ["dealer", "u"], 9: ["trump", "e"],
    10: ["to_act", "u", 2], 11: ["hands", "Hand", 1], 12: ["legal_actions", "Action", 1],
    13: ["totals", "Score", 1], 14: ["over", "b"], 15: ["winners", "u", 1], 16: ["trick", "Trick"],
    17: ["tricks_won", "u", 1], 20: ["table", "Card", 1],
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
    1: ["seq", "u"], 10: ["match_started", "MatchStarted"], 11: ["seat_joined", "SeatJoined"],
    12: ["dealer_drawn", "DealerDrawn"], 13: ["round_started", "RoundStarted"],
    14: ["trump_drawn", "TrumpDrawn"], 15: ["dealt", "Dealt"], 16: ["suit_excluded", "SuitExcluded"],
    17: ["trump_chosen", "TrumpChosen"], 18: ["card_played", "CardPlayed"], 19: ["passed", "Passed"],
    20: ["trick_won", "TrickWon"], 21: ["cards_dead", "CardsDead"], 23: ["round_scored", "RoundScored"],
    24: ["match_ended", "MatchEnded"], 25: ["timed_out", "TimedOut"], 26: ["seed_revealed", "SeedRevealed"],
  },
};
// Messages with a oneof `kind`: decode() sets obj.kind to the field present.
const ONEOF = {
  Event: Object.values(TYPES.Event).map((f) => f[0]).filter((n) => n !== "seq"),
  Action: ["play", "pass", "exclude_suit", "choose_trump"],
  StreamEventsResponse: ["snapshot", "event", "your_turn"],
  WatchMatchResponse: ["snapshot", "event"],
};
const NUMERIC = new Set(["u", "i", "b", "e"]);

// --- encoding --------------------------------------------------------------------------------

class Writer {
  constructor() { this.bytes = []; }
  varint(value) {
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) { this.bytes.push(Number(v & 0x7fn) | 0x80); v >>= 7n; }
    this.bytes.push(Number(v));
  }
  tag(field, wire) { this.varint(field * 8 + wire); }
  chunk(field, data) { this.tag(field, 2); this.varint(data.length); for (const b of data) this.bytes.push(b); }
  result() { return Uint8Array.from(this.bytes); }
}

function encodeValue(value) {
  const w = new Writer();
  if (value === null) { w.tag(1, 0); w.varint(0); }
  else if (typeof value === "number") {
    w.tag(2, 1);
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, value, true);
    for (const b of new Uint8Array(view.buffer)) w.bytes.push(b);
  } else if (typeof value === "string") w.chunk(3, new TextEncoder().encode(value));
  else if (typeof value === "boolean") { w.tag(4, 0); w.varint(value ? 1 : 0); }
  else if (Array.isArray(value)) {
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

export function encode(type, message) {
  if (type === "Struct") return encodeStruct(message);
  const w = new Writer();
  for (const [number, [name, kind, flag]] of Object.entries(TYPES[type])) {
    const value = message[name];
    if (value === undefined || value === null) continue;
    const values = flag === 1 ? value : [value];
    for (const item of values) {
      if (NUMERIC.has(kind)) { w.tag(Number(number), 0); w.varint(kind === "b" ? (item ? 1 : 0) : item); }
      else if (kind === "s") w.chunk(Number(number), new TextEncoder().encode(item));
      else if (kind === "y") w.chunk(Number(number), item);
      else w.chunk(Number(number), encode(kind, item));
    }
  }
  return w.result();
}

// --- decoding --------------------------------------------------------------------------------

class Reader {
  constructor(bytes) { this.bytes = bytes; this.pos = 0; }
  varint() {
    let result = 0n, shift = 0n;
    for (;;) {
      const b = this.bytes[this.pos++];
      if (b === undefined) throw new Error("truncated varint");
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return result;
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
}

function scalar(kind, raw) {
  if (kind === "b") return raw !== 0n;
  if (kind === "i") return Number(BigInt.asIntN(64, raw));
  return Number(raw);
}

export function decode(type, bytes) {
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
    if (!field) { r.skip(wire); continue; }
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
  if (ONEOF[type]) out.kind = ONEOF[type].find((name) => out[name] !== undefined);
  return out;
}

// --- gRPC-Web ----------------------------------------------------------------------------------

const SERVICE = "/cardarena.v1.MatchService/";

export class GrpcError extends Error {
  constructor(code, message) {
    super(`gRPC status ${code}: ${message}`);
    this.code = code;
    this.details = message;
  }
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

// Pull whole frames off a growing buffer; returns [frames, rest].
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

// Calls onMessage for each decoded response; resolves at a status 0 trailer, rejects otherwise.
export async function call(method, reqType, resType, message, { token, signal, onMessage } = {}) {
  const response = await request(method, reqType, message, token, signal);
  if (!response.ok) throw new GrpcError(14, `HTTP ${response.status}`);
  const reader = response.body.getReader();
  let buffer = new Uint8Array(0);
  const results = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new GrpcError(14, "the stream ended without a status");
    const joined = new Uint8Array(buffer.length + value.length);
    joined.set(buffer);
    joined.set(value, buffer.length);
    const [found, rest] = frames(joined);
    buffer = rest;
    for (const f of found) {
      if (f.flags & 0x80) {
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

export async function unary(method, reqType, resType, message, options = {}) {
  const [result] = await call(method, reqType, resType, message, options);
  return result;
}
