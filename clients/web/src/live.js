// The live table: a spectator's (WatchMatch: hidden hands as backs) or a seat's
// (StreamEvents: its own hand face up, playable), resumed after a break from the last seq.
//
// The view is updated in place after each message (dom.js morph), not rebuilt, so a played
// card flies in from its seat and a won trick is gathered to its winner. Bots answer at once,
// so live events are shown at a person's pace: a short pause after each card, a longer one
// after a trick, none under prefers-reduced-motion or while catching up on history.
import { h, morph } from "./dom.js";
import { matches, withToken, ConnectError, Code } from "./rpc.js";
import { newState, applyEvent, applySnapshot, applyTurn, applyYourTurn, unbatched, tricksRound, seatName, scoreText, scoreValue } from "./model.js";
import { tableView, tickClock } from "./table.js";
import { handView, submit, refusal, runBot } from "./play.js";
import { recall } from "./session.js";
import { takeSeat, startPractice } from "./practice.js";
import { games, gameContext, houseBots } from "./games.js";
import { view, showError, ready, flag, crumbs, link, fitTable, motion, go } from "./ui.js";
import { isHeldBack, heldBackView } from "./held.js";
import { matchError } from "./errors.js";

const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  if (signal) signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
});

// How long to leave a live event on screen before the next (ms).
function pauseAfter(msg, state) {
  if (msg.kind.case !== "event") return 0;
  const kind = msg.kind.value.kind.case;
  if (kind === "trickWon") return 1300;
  if (kind === "cardPlayed") return tricksRound(state) ? 420 : 260;
  if (kind === "passed") return 300;
  if (kind === "roundScored") return 900;
  return 0;
}

// Places by total (ties share a place), for the ending.
export function placings(state, lowestWins) {
  const seats = state.totals.map((t, seat) => ({ seat, value: scoreValue(t), total: t }));
  seats.sort((a, b) => (lowestWins ? a.value - b.value : b.value - a.value) || a.seat - b.seat);
  let place = 0;
  return seats.map((s, i) => {
    if (i === 0 || s.value !== seats[i - 1].value) place = i + 1;
    return { ...s, place };
  });
}

// The bots of a practice match play in one page of this browser, whatever view it shows (a
// view change is no page load), until their match ends. Another tab on the same seat waits
// for that page's lock (Web Locks) and takes the bots up if it closes.
const botsRunning = new Map();
function startBots(matchId, bots) {
  if (!bots.length) return new AbortController();
  let controller = botsRunning.get(matchId);
  if (controller && !controller.signal.aborted) return controller;
  controller = new AbortController();
  botsRunning.set(matchId, controller);
  const stop = controller;
  stop.signal.addEventListener("abort", () => { if (botsRunning.get(matchId) === stop) botsRunning.delete(matchId); }, { once: true });
  const run = () => Promise.all(bots.map((bot) => runBot(matchId, bot.seat, bot.token, stop.signal, showError)));
  if (navigator.locks) {
    navigator.locks.request(`cardarena.bots.${matchId}`, { signal: stop.signal }, run).catch(() => {});
  } else {
    run(); // no Web Locks (a page over plain http): this page plays them
  }
  return controller;
}

export async function liveView(params, signal) {
  const matchId = params.get("match");
  const seatParam = params.get("seat");
  const kept = recall(matchId);
  // A seat's token reads its own match even while its duplicate group is held back.
  const keptToken = seatParam === null ? null : (kept.seats || {})[Number(seatParam)];
  let info;
  try {
    info = (await matches.getMatch({ matchId }, keptToken ? withToken(keptToken) : {})).match;
  } catch (error) {
    if (isHeldBack(error)) return heldBackView(matchId, error);
    return matchError(matchId, error, "match");
  }
  const game = (await games()).find((g) => g.name === info.game);
  const ctx = gameContext(game, info);
  const state = newState(info.players);
  state.names = info.seats.map((s) => s.name);
  state.joined = info.seats.map((s) => s.taken);
  let seat = seatParam === null ? null : seatParam === "any" ? -1 : Number(seatParam);
  // A seat this browser holds (its token kept: session.js) is taken back, whichever tab or
  // link opens the match: "any" open seat means this one, and a spectator is offered it.
  const mine = Object.keys(kept.seats || {}).map(Number).sort((a, b) => a - b);
  if (seat === -1 && mine.length) {
    seat = mine[0];
    history.replaceState(null, "", `?match=${encodeURIComponent(matchId)}&seat=${seat}`);
  }
  let token = seat === null || seat < 0 ? null : (kept.seats || {})[seat];
  const takeBack = seat === null && mine.length ? mine[0] : null;
  let notice = "";
  if (seat !== null && !token) {
    const free = seat < 0 ? info.seats.some((s) => !s.taken && !s.reserved) : info.seats[seat] && !info.seats[seat].taken && !info.seats[seat].reserved;
    if (free) {
      const joined = await takeSeat(matchId, seat < 0 ? null : seat);
      token = joined.token;
      seat = joined.seat;
      state.names[seat] = joined.name || state.names[seat];
      history.replaceState(null, "", `?match=${encodeURIComponent(matchId)}&seat=${seat}`);
    } else {
      notice = seat < 0 ? "Every seat of this match is taken: you are watching."
        : `Seat ${seat} is taken and this browser holds no token for it: you are watching.`;
      seat = null;
    }
  }
  const offer = seat !== null && !notice && info.seats.some((s) => s.name.endsWith(" (house)")) ? await houseBots() : null;
  if (offer) {
    const idle = offer.idleSeconds >= 120 ? `${Math.round(offer.idleSeconds / 60)} min` : `${offer.idleSeconds} s`;
    notice = `House bots play the other seats on the server: the match goes on if this page closes${offer.idleSeconds ? ` (cancelled after ${idle} with no player's page open)` : ""}.`;
  }
  flag("match", matchId);
  if (seat !== null) flag("seat", seat);
  const controller = new AbortController(); // this view's stream
  signal.addEventListener("abort", () => controller.abort(), { once: true });
  // Only a seat's page plays its practice match's bots: a spectator's never does.
  const bots = startBots(matchId, seat === null ? [] : kept.bots || []);

  state.told = true; // whose turn: the snapshot's, then each Turn's
  let pending = null, turnSeq = 0n, refused = "", caughtUp = 0n, showLast = false, keyboard = false;
  const act = (action) => {
    const legal = state.legal;
    state.legal = [];
    refused = "";
    draw();
    submit(matchId, seat, token, turnSeq, action).catch((error) => {
      refused = refusal(error);
      if (!(error instanceof ConnectError && error.code === Code.Aborted)) state.legal = legal;
      draw();
    });
  };
  const toggleLast = () => { showLast = !showLast; draw(); };
  const title = ctx.title || info.game;
  const shareUrl = () => `${location.origin}${location.pathname}?match=${encodeURIComponent(matchId)}&seat=any`;
  const waiting = () => {
    const open = state.joined.map((j, s) => (j ? null : s)).filter((s) => s !== null);
    // The first round may be started already: its cards come with the last join.
    if (state.over || !open.length || state.hands.some((hand) => hand.size || hand.cards.length)) return null;
    const input = h("input", { id: "share-link", readOnly: true, value: shareUrl(), "aria-label": "link to this match" });
    const copy = h("button", { type: "button", id: "copy-link" }, "Copy");
    copy.onclick = () => { input.select(); navigator.clipboard?.writeText(input.value).then(() => { copy.textContent = "Copied"; }, () => {}); };
    return h("div", { className: "waiting", "data-key": "waiting" },
      h("p", {}, h("b", { id: "open-seats", "data-open": open.length }, `${open.length} of ${state.players} seats open`),
        ` (${open.map((s) => `seat ${s}`).join(", ")}): the match starts when every seat is taken.`),
      h("p", {}, "Share this link: whoever opens it takes the next open seat."),
      h("p", { className: "share" }, input, " ", copy));
  };
  const ending = () => {
    if (!state.over) return null;
    const places = state.cancelled ? [] : placings(state, ctx.lowestWins);
    const practice = seat !== null && kept.practice;
    const buttons = [];
    if (practice) {
      const again = h("button", { type: "button", id: "rematch", className: "primary" }, "Rematch");
      again.onclick = () => {
        again.disabled = true;
        const p = kept.practice;
        startPractice(p.game, p.players, p.options, p.moveMs, p.name)
          .then((id) => go(`?match=${encodeURIComponent(id)}&seat=0`)).catch((e) => { again.disabled = false; showError(e); });
      };
      buttons.push(again);
    }
    buttons.push(link(`./?game=${encodeURIComponent(info.game)}#create`, "New match", { id: "new-match-link" }),
      link(`?log=${encodeURIComponent(matchId)}`, "Replay", { id: "replay-link", className: practice ? "" : "primary" }),
      link("./", "Lobby"));
    return h("section", { id: "ending", "data-key": "ending" },
      h("h3", {}, state.cancelled ? "The match was cancelled" : "The match is over"),
      state.cancelled ? h("p", {}, state.cancelled) : h("ol", { id: "placings" }, ...places.map((p) => h("li", {
        className: p.place === 1 ? "first" : "", value: p.place, "data-seat": p.seat,
      }, `${seatName(state, p.seat)}${p.seat === seat && seatName(state, p.seat) !== "you" ? " (you)" : ""}: ${scoreText(p.total)}${p.place === 1 ? (places.filter((q) => q.place === 1).length > 1 ? " — shared win" : " — wins") : ""}`))),
      h("div", { className: "buttons" }, ...buttons));
  };

  const draw = () => {
    const active = document.activeElement;
    const inHand = active && active.closest && active.closest("#my-hand");
    const toAct = state.toAct;
    const missing = state.joined.filter((j) => !j).length;
    const waitingFor = toAct !== null && toAct !== seat && !state.over ? `${seatName(state, toAct)} to play…`
      : missing && !state.over ? `Waiting for ${missing} more player${missing === 1 ? "" : "s"}: share the link above` : "";
    ctx.hand = seat === null ? null : handView(state, refused, act, waitingFor);
    ctx.showLast = showLast;
    ctx.onToggleLast = toggleLast;
    ctx.waiting = waiting();
    ctx.open = state.joined.map((j) => !j);
    ctx.ending = ending();
    ctx.notice = notice ? h("p", { className: "notice", "data-key": "notice" }, notice)
      : takeBack !== null ? h("p", { className: "notice", "data-key": "notice" }, `You hold seat ${takeBack} of this match in this browser: `,
        link(`?match=${encodeURIComponent(matchId)}&seat=${takeBack}`, "take it back", { id: "take-back" }), ".") : null;
    crumbs(link("./", "Matches"), ` › ${title}`, h("span", { className: "match-id" }, ` · match ${matchId}`), seat === null ? " · watching" : ` · playing seat ${seat}`,
      state.over ? [" · ", link(`?log=${encodeURIComponent(matchId)}`, "replay")] : null);
    const next = h("main", { id: "view" }, tableView(state, ctx));
    morph(view(), next);
    fitTable();
    // The focus stays in the hand: on the next legal card, else on the hand itself.
    if (inHand && !document.activeElement.closest("#my-hand")) {
      const target = document.querySelector("#my-hand button.legal") || document.getElementById("hand");
      if (target) target.focus({ preventScroll: true });
    } else if (keyboard && state.legal.length && document.activeElement && document.activeElement.id === "hand") {
      const first = document.querySelector("#my-hand button.legal");
      if (first) first.focus({ preventScroll: true });
    }
    flag("over", state.over);
    flag("legal", state.legal.length);
    flag("seq", state.seq);
    flag("toAct", state.toAct === null || state.over ? "" : state.toAct);
  };
  const onKey = (e) => {
    if (e.key === "Tab" || e.key.startsWith("Arrow")) keyboard = true;
    if ((e.key === "l" || e.key === "L") && !(e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName))) toggleLast();
  };
  document.addEventListener("keydown", onKey);
  signal.addEventListener("abort", () => document.removeEventListener("keydown", onKey), { once: true });

  const apply = (msg) => {
    const v = msg.kind.value;
    if (msg.kind.case === "snapshot") {
      if (caughtUp === 0n) caughtUp = v.seq;
      if (v.seq <= state.seq) applySnapshot(state, v);
      else pending = v;
      if (state.legal.length) turnSeq = v.seq;
    } else if (msg.kind.case === "event") {
      applyEvent(state, v);
      state.legal = [];
      if (pending && v.seq >= pending.seq) {
        applySnapshot(state, pending);
        if (state.legal.length) turnSeq = pending.seq;
        pending = null;
      }
    } else if (msg.kind.case === "yourTurn") {
      applyYourTurn(state, seat, v);
      turnSeq = v.seq;
    }
    // Whose turn it is once the message's event is applied (alone: it changed with no event).
    if (msg.turn) applyTurn(state, msg.turn);
  };

  // Messages wait in a queue and are shown in order, paced (see pauseAfter).
  const queue = [];
  let pumping = null, queued = false;
  const schedule = () => {
    if (queued) return;
    queued = true;
    // A timer, not requestAnimationFrame: a table in a background tab or window (a
    // spectator's second page) must keep up too. The events of one action arrive together
    // and are drawn once.
    setTimeout(() => { queued = false; if (!signal.aborted) draw(); }, 0);
  };
  const pump = async () => {
    await null; // `pumping` is set before the first message is shown
    while (queue.length && !signal.aborted) {
      const msg = queue.shift();
      apply(msg);
      const live = msg.kind.case === "event" && caughtUp > 0n && msg.kind.value.seq > caughtUp;
      const pause = live && motion() && queue.length < 24 ? pauseAfter(msg, state) : 0;
      if (pause) {
        draw();
        await sleep(pause, signal);
      } else if (msg.turn && caughtUp > 0n && queue.length) {
        // The end of a write with more behind it (a spectator's batch holds several): shown
        // before the next, as it was when each write came on its own.
        draw();
        await sleep(0, signal);
      } else schedule();
    }
    pumping = null;
  };
  const onMessage = (msg) => {
    queue.push(...unbatched(msg));
    if (!pumping) pumping = pump();
  };
  const drained = async () => { while (pumping) await pumping; };

  const clock = setInterval(() => { const root = document.querySelector(".table-view"); if (root) tickClock(root, state); }, 250);
  signal.addEventListener("abort", () => clearInterval(clock), { once: true });

  draw();
  ready();
  let held = null;
  for (let attempt = 0; attempt < 30 && !state.over && !signal.aborted; attempt += 1) {
    try {
      const options = seat === null ? { signal: controller.signal } : withToken(token, { signal: controller.signal });
      const request = { matchId, afterSeq: state.seq };
      // A spectator asks for batches (at most ten messages a second, whatever the pace of play).
      const stream = seat === null ? matches.watchMatch({ ...request, batched: true }, options) : matches.streamEvents({ ...request, seat }, options);
      for await (const msg of stream) onMessage(msg);
      await drained();
      if (state.over) break;
    } catch (error) {
      await drained();
      if (signal.aborted) return;
      if (isHeldBack(error)) { held = error; break; }
      if (error instanceof ConnectError && [Code.NotFound, Code.Unauthenticated, Code.PermissionDenied].includes(error.code)) {
        showError(error);
        break;
      }
      await sleep(1000, signal);
    }
  }
  clearInterval(clock);
  if (signal.aborted) return;
  if (held) {
    controller.abort();
    bots.abort();
    heldBackView(matchId, held);
    return;
  }
  draw();
  setTimeout(() => { controller.abort(); if (state.over) bots.abort(); }, 2000); // let the bots see the end
}
