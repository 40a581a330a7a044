// The replay of an ended match from its stored log (GetMatchLog): the same table, stepped
// by trick (or turn, on a layout), by round, or played at a chosen speed; any round reached
// from the score sheet; and what this browser can check of the log itself, the hash chain
// and the revealed seed against its commitment (the full audit recomputes every deal:
// `cardarena audit`).
import { h, morph } from "./dom.js";
import { matches, decodeEvent } from "./rpc.js";
import { newState, applyEvent, LAYOUT_KINDS } from "./model.js";
import { tableView } from "./table.js";
import { games, gameContext } from "./games.js";
import { view, ready, flag, crumbs, link, fitTable } from "./ui.js";
import { isHeldBack, heldBackView } from "./held.js";
import { matchError } from "./errors.js";

const enc = new TextEncoder();
const hex = (bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
const concat = (a, b) => { const out = new Uint8Array(a.length + b.length); out.set(a); out.set(b, a.length); return out; };
const sha256 = async (bytes) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// The log's own checks, in words: chain intact, seed matches.
async function verify(resp) {
  if (!globalThis.crypto || !crypto.subtle) return { ok: null, text: "not checked here: this page is not a secure context (open it on localhost or over https)" };
  let prev = await sha256(enc.encode(`cardarena-log-v1${resp.match.matchId}`));
  for (const entry of resp.entries) {
    const hash = await sha256(concat(prev, entry.event));
    if (!same(hash, entry.hash)) return { ok: false, text: `hash chain broken at seq ${entry.seq}` };
    prev = hash;
  }
  const parts = [`hash chain of ${resp.entries.length} entries intact`];
  if (resp.seed.length) {
    const commitment = hex(await sha256(concat(enc.encode("cardarena-seed-v1"), resp.seed)));
    if (commitment !== resp.match.seedCommitment) return { ok: false, text: "the revealed seed does not match its commitment" };
    parts.push("the revealed seed matches its commitment");
  }
  return { ok: true, text: parts.join("; ") };
}

// Where a step ends: after a trick (or a play on a layout), after a round's scores.
function stops(events) {
  const trick = [], round = [];
  let kind = "";
  events.forEach((e, i) => {
    const k = e.kind.case;
    if (k === "roundStarted") kind = e.kind.value.kind;
    if (k === "trickWon" || (LAYOUT_KINDS.has(kind) && (k === "cardPlayed" || k === "passed")) || k === "suitExcluded" || k === "trumpChosen" || k === "dealt") trick.push(i);
    if (k === "roundScored" || k === "matchEnded" || k === "matchCancelled") { round.push(i); trick.push(i); }
  });
  return { trick, round };
}

export async function replayView(params, signal) {
  const matchId = params.get("log");
  let resp;
  try {
    resp = await matches.getMatchLog({ matchId });
  } catch (error) {
    if (isHeldBack(error)) return heldBackView(matchId, error);
    return matchError(matchId, error, "log");
  }
  const info = resp.match;
  const game = (await games()).find((g) => g.name === info.game);
  const ctx = gameContext(game, info);
  ctx.names = info.seats.map((s) => s.name);
  const events = resp.entries.map((entry) => decodeEvent(entry.event));
  const { trick, round } = stops(events);
  const verdict = h("p", { id: "verdict", className: "verdict" }, "audit: checking…");
  let at = events.length - 1, timer = null;
  const speed = h("select", { id: "speed" }, ...[[2000, "slow"], [1000, "normal"], [400, "fast"], [100, "very fast"]]
    .map(([ms, words]) => h("option", { value: ms, selected: ms === 1000 }, words)));
  const button = (id, text, title, onclick) => { const b = h("button", { id, type: "button", title }, text); b.onclick = onclick; return b; };
  const nextOf = (list) => list.find((i) => i > at) ?? events.length - 1;
  const prevOf = (list) => [...list].reverse().find((i) => i < at) ?? 0;
  const go = (i) => { at = Math.max(0, Math.min(events.length - 1, i)); show(); };
  const play = button("play", "▶ Play", "play trick by trick at the chosen speed", () => {
    if (timer) { clearInterval(timer); timer = null; play.textContent = "▶ Play"; return; }
    if (at >= events.length - 1) at = 0;
    play.textContent = "❚❚ Pause";
    timer = setInterval(() => { go(nextOf(trick)); if (at >= events.length - 1) play.click(); }, Number(speed.value));
    signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  });
  const step = h("span", { id: "step" });
  const slider = h("input", { id: "slider", type: "range", min: 1, max: Math.max(events.length, 1), value: events.length, "aria-label": "event" });
  slider.oninput = () => go(Number(slider.value) - 1);
  const nav = h("nav", { className: "replay-nav" },
    button("first", "« first", "the start (Home)", () => go(0)),
    button("prev-round", "◀◀ round", "previous round", () => go(prevOf(round))),
    button("prev-trick", "◀ trick", "previous trick (left arrow)", () => go(prevOf(trick))),
    step,
    button("next-trick", "trick ▶", "next trick (right arrow)", () => go(nextOf(trick))),
    button("next-round", "round ▶▶", "next round", () => go(nextOf(round))),
    button("last", "last »", "the end (End)", () => go(events.length - 1)),
    play, speed, slider);
  ctx.onRound = (r) => go(events.findIndex((e) => e.seq === r.seq));
  const board = h("div", { id: "board" });
  const show = () => {
    const state = newState(info.players);
    state.names = info.seats.map((s) => s.name);
    for (const e of events.slice(0, at + 1)) applyEvent(state, e);
    state.deadline = 0;
    step.dataset.step = String(at + 1);
    step.dataset.steps = String(events.length);
    step.textContent = `event ${at + 1} of ${events.length}`;
    slider.value = String(at + 1);
    const table = tableView(state, ctx);
    if (board.firstChild) morph(board.firstChild, table);
    else board.append(table);
    fitTable();
    flag("step", at + 1);
  };
  const onKey = (e) => {
    if (e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName)) return;
    const moves = { ArrowRight: () => go(nextOf(trick)), ArrowLeft: () => go(prevOf(trick)), Home: () => go(0), End: () => go(events.length - 1) };
    if (moves[e.key]) { e.preventDefault(); moves[e.key](); }
  };
  document.addEventListener("keydown", onKey);
  signal.addEventListener("abort", () => document.removeEventListener("keydown", onKey), { once: true });
  crumbs(link("./", "Matches"), ` › replay of ${ctx.title || info.game} · match ${matchId}`);
  view().replaceChildren(verdict, nav, board);
  const asked = Number(new URLSearchParams(location.search).get("step"));
  go(asked ? asked - 1 : events.length - 1);
  flag("match", matchId);
  ready();
  const checked = await verify(resp).catch((error) => ({ ok: false, text: String(error) }));
  verdict.textContent = `audit in this browser: ${checked.text}`;
  verdict.className = `verdict${checked.ok === false ? " failed" : ""}`;
  verdict.dataset.ok = String(checked.ok);
}
