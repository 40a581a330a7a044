// The live table: a spectator's (WatchMatch: hidden hands as backs) or a seat's
// (StreamEvents: its own hand face up, playable), resumed after a break from the last seq.
import { h } from "./dom.js";
import { matches, withToken, ConnectError, Code } from "./rpc.js";
import { newState, applyEvent, applySnapshot, applyTurn } from "./model.js";
import { tableView, tickClock } from "./table.js";
import { handView, submit, refusal, runBot } from "./play.js";
import { remember, recall } from "./session.js";
import { games, gameContext } from "./games.js";
import { view, showError, ready, flag } from "./ui.js";
import { isHeldBack, heldBackView } from "./held.js";

// Take `seat` of `matchId` (or the lowest free one) and keep its token for this tab.
export async function takeSeat(matchId, seat, name) {
  const joined = await matches.joinMatch({ matchId, seat, name });
  const kept = recall(matchId).seats || {};
  remember(matchId, { seats: { ...kept, [joined.seat]: joined.token } });
  return joined;
}

export async function liveView(matchId, seatParam) {
  // A seat's token reads its own match even while its duplicate group is held back.
  const kept = seatParam === null ? null : (recall(matchId).seats || {})[Number(seatParam)];
  let info;
  try {
    info = (await matches.getMatch({ matchId }, kept ? withToken(kept) : {})).match;
  } catch (error) {
    if (isHeldBack(error)) return heldBackView(matchId, error);
    throw error;
  }
  const game = (await games()).find((g) => g.name === info.game);
  const ctx = gameContext(game, info);
  ctx.names = info.seats.map((s) => s.name);
  let seat = seatParam === null ? null : Number(seatParam);
  let token = seat === null ? null : (recall(matchId).seats || {})[seat];
  let notice = "";
  if (seat !== null && !token) {
    const free = info.seats[seat] && !info.seats[seat].taken && !info.seats[seat].reserved;
    if (free) token = (await takeSeat(matchId, seat, "guest")).token;
    else { notice = `Seat ${seat} is taken and this tab holds no token for it: you are watching.`; seat = null; }
  }
  flag("match", matchId);
  if (seat !== null) flag("seat", seat);
  const controller = new AbortController();
  for (const bot of recall(matchId).bots || []) {
    runBot(matchId, bot.seat, bot.token, controller.signal, showError);
  }

  let state = newState(info.players);
  state.told = true; // whose turn: the snapshot's, then each Turn's
  let pending = null, turnSeq = 0n, refused = "", root = null, queued = false, focusCode = null;
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
  const draw = () => {
    const active = document.activeElement;
    focusCode = active && active.dataset ? active.dataset.card || active.dataset.suit || null : null;
    ctx.hand = seat === null ? null : handView(state, refused, act);
    root = tableView(state, ctx);
    view().replaceChildren(
      h("p", { className: "crumbs" }, h("a", { href: "./" }, "Matches"), ` › ${ctx.title || info.game} · match ${matchId}`,
        seat === null ? " · watching" : ` · playing seat ${seat}`,
        state.over ? [" · ", h("a", { href: `?log=${matchId}`, id: "replay-link" }, "replay")] : null),
      notice ? h("p", { className: "notice" }, notice) : "",
      root);
    if (focusCode) {
      const again = root.querySelector(`#my-hand button.legal[data-card="${focusCode}"], #my-hand button.legal[data-suit="${focusCode}"]`);
      if (again) again.focus();
    }
    flag("over", state.over);
    flag("legal", state.legal.length);
    flag("seq", state.seq);
    flag("toAct", state.toAct === null || state.over ? "" : state.toAct);
  };
  const schedule = () => {
    if (queued) return;
    queued = true;
    // A timer, not requestAnimationFrame: a table in a background tab or window (a
    // spectator's second page) must keep up too. The events of one action arrive together
    // and are drawn once.
    setTimeout(() => { queued = false; draw(); }, 0);
  };
  const clock = setInterval(() => { if (root) tickClock(root, state); }, 250);

  const onMessage = (msg) => {
    const v = msg.kind.value;
    if (msg.kind.case === "snapshot") {
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
      state.legal = v.legalActions;
      turnSeq = v.seq;
      state.toAct = seat;
      state.deadline = Number(v.deadlineUnixMs);
    }
    // Whose turn it is once the message's event is applied (alone: it changed with no event).
    if (msg.turn) applyTurn(state, msg.turn);
    schedule();
  };

  draw();
  ready();
  let held = null;
  for (let attempt = 0; attempt < 30 && !state.over; attempt += 1) {
    try {
      const options = seat === null ? { signal: controller.signal } : withToken(token, { signal: controller.signal });
      const request = { matchId, afterSeq: state.seq };
      const stream = seat === null ? matches.watchMatch(request, options) : matches.streamEvents({ ...request, seat }, options);
      for await (const msg of stream) onMessage(msg);
      if (state.over) break;
    } catch (error) {
      if (isHeldBack(error)) { held = error; break; }
      if (error instanceof ConnectError && [Code.NotFound, Code.Unauthenticated, Code.PermissionDenied].includes(error.code)) {
        showError(error);
        break;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  clearInterval(clock);
  if (held) {
    controller.abort();
    heldBackView(matchId, held);
    return;
  }
  draw();
  setTimeout(() => controller.abort(), 2000); // let the bots see the end
}
