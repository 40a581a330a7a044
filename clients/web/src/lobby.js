// The front page: a new match against in-page bots, from a form generated from ListGames'
// options schema, and the list of matches, newest first (filter by game and by state, open
// seats among them; pages of 20 as the server pages them, newest first; refreshed every few
// seconds), each with its date, a link to watch or replay it, a button for each open seat
// and a link to share; the tournaments and the ladders.
import { h } from "./dom.js";
import { matches, ConnectError, Code, errorText } from "./rpc.js";
import { games } from "./games.js";
import { optionFields, readOptions, showErrors, namedOption } from "./forms.js";
import { takeSeat, startPractice, playerName, keepName } from "./practice.js";
import { scoreText } from "./model.js";
import { tournamentList } from "./tournament.js";
import { ladderList } from "./ladder.js";
import { view, showError, ready, STATUS, crumbs, go, ago, fullDate } from "./ui.js";
import { HELD_BACK, listedHeldBack } from "./held.js";

const CLOCKS = [[0, "no clock"], [10000, "10 s a move"], [30000, "30 s a move"], [60000, "1 min a move"], [300000, "5 min a move"]];
const PAGE = 20;
// A page of "open seats" or "running" is filtered by the server after its read (both are
// unfinished matches in the store), so one may come back short: the lobby reads on to fill
// its page, but at most this many times.
const READS = 10;

async function newMatchForm(params) {
  const all = await games();
  const wanted = params.get("game");
  const gameSelect = h("select", { id: "game", name: "game" }, ...all.map((g) => h("option", { value: g.name, selected: g.name === wanted }, g.title)));
  const playersSelect = h("select", { id: "players", name: "players" });
  const fields = h("div", { id: "options", className: "fields" });
  const clock = h("select", { id: "clock", name: "clock" }, ...CLOCKS.map(([ms, words]) => h("option", { value: ms, selected: ms === 30000 }, words)));
  const name = h("input", { id: "name", name: "name", value: playerName() || "you", maxLength: 40 });
  name.onchange = () => keepName(name.value.trim());
  const formError = h("p", { id: "form-error", className: "field-error", role: "alert" });
  const refill = (keepPlayers) => {
    const game = all.find((g) => g.name === gameSelect.value);
    if (!keepPlayers) {
      playersSelect.replaceChildren(...game.players.map((n) => h("option", { value: n, selected: n === game.defaultPlayers }, `${n} players`)));
    }
    fields.replaceChildren(...optionFields(game, Number(playersSelect.value)));
  };
  gameSelect.onchange = () => refill(false);
  playersSelect.onchange = () => refill(true);
  refill(false);
  const button = h("button", { id: "new-match", type: "submit" }, "Deal me in");
  // The form's own checks name a bad option next to its field (the browser's would stop the
  // submit with a bubble, on a field a folded group may hide).
  const form = h("form", { id: "create", className: "card-panel", noValidate: true },
    h("h2", {}, "New match against bots"),
    h("div", { className: "fields" },
      h("div", { className: "field" }, h("label", { for: "game" }, "game"), gameSelect),
      h("div", { className: "field" }, h("label", { for: "players" }, "players"), playersSelect),
      h("div", { className: "field" }, h("label", { for: "name" }, "your name"), name),
      h("div", { className: "field" }, h("label", { for: "clock" }, "move clock"), clock)),
    fields, formError, button);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const { options, errors } = readOptions(fields);
    showErrors(fields, errors);
    formError.textContent = "";
    if (Object.keys(errors).length) return;
    button.disabled = true;
    startPractice(gameSelect.value, Number(playersSelect.value), options, Number(clock.value), name.value.trim() || "you")
      .then((matchId) => go(`?match=${encodeURIComponent(matchId)}&seat=0`))
      .catch((error) => {
        button.disabled = false;
        // The server names a bad option: put its words next to that field when it can.
        const text = errorText(error);
        const named = namedOption(fields, text) || Object.keys(options).find((k) => text.includes(k));
        if (error instanceof ConnectError && error.code === Code.InvalidArgument && named) showErrors(fields, { [named]: text });
        else formError.textContent = text;
      });
  });
  return form;
}

const shareUrl = (m) => `${location.origin}${location.pathname}?match=${encodeURIComponent(m.matchId)}&seat=any`;

function matchRow(m, all) {
  const status = STATUS[m.status] || "?";
  const game = all.find((g) => g.name === m.game);
  const open = m.seats.filter((s) => !s.taken && !s.reserved && status === "waiting");
  const seats = m.seats.map((s) => {
    if (s.taken) return h("span", { className: "seat-name" }, s.name || `seat ${s.seat}`);
    if (s.reserved || status !== "waiting") return h("span", { className: "seat-name free" }, "(reserved)");
    const sit = h("button", { type: "button", className: "sit", "data-seat": s.seat, title: `take seat ${s.seat}` }, `sit at ${s.seat}`);
    sit.onclick = () => takeSeat(m.matchId, s.seat)
      .then((j) => go(`?match=${encodeURIComponent(m.matchId)}&seat=${j.seat}`)).catch(showError);
    return sit;
  });
  const link = listedHeldBack(m) ? h("span", { className: "held-back" }, HELD_BACK)
    : status === "ended"
      ? h("a", { href: `?log=${encodeURIComponent(m.matchId)}`, className: "replay" }, "replay")
      : h("a", { href: `?match=${encodeURIComponent(m.matchId)}`, className: "watch" }, "watch");
  let share = null;
  if (open.length) {
    share = h("button", { type: "button", className: "share", title: "copy a link that takes the next open seat" }, "share link");
    share.onclick = () => {
      const url = shareUrl(m);
      (navigator.clipboard ? navigator.clipboard.writeText(url) : Promise.reject(new Error("no clipboard")))
        .then(() => { share.textContent = "link copied"; }, () => { window.prompt("Share this link:", url); });
    };
  }
  const created = Number(m.createdUnixMs);
  return h("tr", { className: "match", "data-id": m.matchId, "data-status": status, "data-game": m.game, "data-created": created },
    h("td", { className: "go" }, link),
    h("td", { className: "game" }, game ? game.title : m.game),
    h("td", { className: `status ${status}` }, m.cancelled ? "cancelled" : status === "waiting" ? `${open.length} open seat${open.length === 1 ? "" : "s"}` : status),
    h("td", { className: "when" }, h("time", { dateTime: new Date(created).toISOString(), title: fullDate(created) }, ago(created))),
    h("td", { className: "seats" }, ...seats.flatMap((s, i) => (i ? [", ", s] : [s])), share ? [" ", share] : null),
    h("td", { className: "totals" }, m.totals.map(scoreText).join(" · ")),
    h("td", { className: "id" }, m.matchId));
}

// One page of the filter, newest first, from `pageToken` ("" for the first): its matches and
// the token of the next page ("" on the last). The server orders and pages (keyset, so a page
// stays exact while matches are created); the lobby asks for what its page still lacks.
async function listPage(status, game, pageToken) {
  const out = [];
  let token = pageToken;
  for (let read = 0; read < READS && out.length < PAGE; read += 1) {
    const resp = await matches.listMatches({ pageSize: PAGE - out.length, pageToken: token, status, game, newestFirst: true });
    out.push(...resp.matches);
    token = resp.nextPageToken;
    if (!token) break;
  }
  return { matches: out, next: token };
}

async function matchList(signal) {
  const all = await games();
  const gameFilter = h("select", { id: "filter-game", "aria-label": "game" }, h("option", { value: "" }, "every game"), ...all.map((g) => h("option", { value: g.name }, g.title)));
  const statusFilter = h("select", { id: "filter-status", "aria-label": "state" }, h("option", { value: "0" }, "every state"),
    h("option", { value: "1" }, "open seats"), h("option", { value: "2" }, "running"), h("option", { value: "3" }, "ended"));
  const rows = h("tbody");
  const prev = h("button", { id: "page-prev", type: "button", disabled: true }, "◀ newer");
  const next = h("button", { id: "page-next", type: "button", disabled: true }, "older ▶");
  const pageLabel = h("span", { id: "page" });
  // starts[p]: the token page p starts from (page 0: ""); the next page's is learnt by
  // reading this one. A refresh reads the page shown again from its own start, so it stays
  // where it is while newer matches arrive on page 1.
  let page = 0, starts = [""], shown = [], more = false, asked = 0;
  const show = () => {
    rows.replaceChildren(...shown.map((m) => matchRow(m, all)));
    if (!shown.length) rows.append(h("tr", {}, h("td", { colSpan: 7, className: "empty" }, page ? "No older matches." : "No matches here yet.")));
    prev.disabled = page === 0;
    next.disabled = !more;
    pageLabel.textContent = `page ${page + 1}${page ? "" : " · newest first"}`;
    document.body.dataset.listed = String(shown.length);
  };
  const load = async () => {
    const mine = ++asked; // a later ask (a filter changed, a page turned) wins
    const got = await listPage(Number(statusFilter.value), gameFilter.value, starts[page]);
    if (signal.aborted || mine !== asked) return;
    shown = got.matches;
    more = Boolean(got.next);
    starts = starts.slice(0, page + 1);
    if (more) starts.push(got.next);
    show();
  };
  const reload = () => load().catch(showError);
  gameFilter.onchange = statusFilter.onchange = () => { page = 0; starts = [""]; reload(); };
  prev.onclick = () => { page = Math.max(0, page - 1); reload(); };
  next.onclick = () => { if (starts[page + 1] !== undefined) { page += 1; reload(); } };
  await load();
  // Live: statuses, seats and totals as they change, while the page is in view.
  const timer = setInterval(() => { if (document.visibilityState === "visible") reload(); }, 4000);
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  return h("section", { id: "list", className: "card-panel" },
    h("h2", {}, "Matches"),
    h("div", { className: "filters" }, gameFilter, statusFilter, h("span", { className: "pager" }, prev, pageLabel, next)),
    h("table", { id: "matches", className: "stack" },
      h("thead", {}, h("tr", {}, ...["", "game", "state", "created", "seats", "totals", "match"].map((t) => h("th", {}, t)))), rows));
}

export async function lobbyView(params, signal) {
  crumbs(h("span", {}, "card games for people and bots"));
  const [form, list, cups, ladderSection] = await Promise.all([newMatchForm(params), matchList(signal), tournamentList(), ladderList()]);
  if (signal.aborted) return;
  view().replaceChildren(h("div", { className: "lobby" }, form, list, cups, ladderSection));
  if (location.hash === "#create") form.scrollIntoView();
  ready();
}
