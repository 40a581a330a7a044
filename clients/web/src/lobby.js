// The front page: a new match against in-page bots, from a form generated from ListGames'
// options schema, and the list of matches (filter by game and status, paging, refreshed
// every few seconds) with links to watch, take a free seat, or replay.
import { h } from "./dom.js";
import { matches, ConnectError, Code, errorText } from "./rpc.js";
import { games } from "./games.js";
import { optionFields, readOptions, showErrors, namedOption } from "./forms.js";
import { remember } from "./session.js";
import { takeSeat } from "./live.js";
import { scoreText } from "./model.js";
import { tournamentList } from "./tournament.js";
import { view, showError, ready, STATUS } from "./ui.js";
import { HELD_BACK, listedHeldBack } from "./held.js";

const CLOCKS = [[0, "no clock"], [10000, "10 s a move"], [30000, "30 s a move"], [60000, "1 min a move"], [300000, "5 min a move"]];
const PAGE = 20;

async function newMatchForm() {
  const all = await games();
  const gameSelect = h("select", { id: "game", name: "game" }, ...all.map((g) => h("option", { value: g.name }, g.title)));
  const playersSelect = h("select", { id: "players", name: "players" });
  const fields = h("div", { id: "options", className: "fields" });
  const clock = h("select", { id: "clock", name: "clock" }, ...CLOCKS.map(([ms, words]) => h("option", { value: ms, selected: ms === 30000 }, words)));
  const name = h("input", { id: "name", name: "name", value: "you", maxLength: 40 });
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
  // The form's own checks name a bad option next to its field (the browser's would stop the
  // submit with a bubble, on a field a folded group may hide).
  const form = h("form", { id: "create", className: "card-panel", noValidate: true },
    h("h2", {}, "New match against bots"),
    h("div", { className: "fields" },
      h("div", { className: "field" }, h("label", { for: "game" }, "game"), gameSelect),
      h("div", { className: "field" }, h("label", { for: "players" }, "players"), playersSelect),
      h("div", { className: "field" }, h("label", { for: "name" }, "your name"), name),
      h("div", { className: "field" }, h("label", { for: "clock" }, "move clock"), clock)),
    fields, formError,
    h("button", { id: "new-match", type: "submit" }, "Deal me in"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const { options, errors } = readOptions(fields);
    showErrors(fields, errors);
    formError.textContent = "";
    if (Object.keys(errors).length) return;
    start(gameSelect.value, Number(playersSelect.value), options, Number(clock.value), name.value || "you")
      .catch((error) => {
        // The server names a bad option: put its words next to that field when it can.
        const text = errorText(error);
        const named = namedOption(fields, text) || Object.keys(options).find((k) => text.includes(k));
        if (error instanceof ConnectError && error.code === Code.InvalidArgument && named) showErrors(fields, { [named]: text });
        else formError.textContent = text;
      });
  });
  return form;
}

// Create the match, take seat 0, seat a bot in every other seat, and go to the table.
async function start(game, players, options, moveMs, name) {
  const created = (await matches.createMatch({ game, players, options, timeControl: { moveMs } })).match;
  const matchId = created.matchId;
  await takeSeat(matchId, 0, name);
  const bots = [];
  for (let seat = 1; seat < created.players; seat += 1) {
    const joined = await matches.joinMatch({ matchId, seat, name: `bot ${seat}` });
    bots.push({ seat, token: joined.token });
  }
  remember(matchId, { bots });
  location.assign(`?match=${encodeURIComponent(matchId)}&seat=0`);
}

function matchRow(m, all) {
  const status = STATUS[m.status] || "?";
  const game = all.find((g) => g.name === m.game);
  const seats = m.seats.map((s) => {
    if (s.taken) return h("span", { className: "seat-name" }, s.name || `seat ${s.seat}`);
    if (s.reserved || status !== "waiting") return h("span", { className: "seat-name free" }, "(reserved)");
    const sit = h("button", { type: "button", className: "sit", "data-seat": s.seat }, `sit at ${s.seat}`);
    sit.onclick = () => takeSeat(m.matchId, s.seat, "guest")
      .then((j) => location.assign(`?match=${encodeURIComponent(m.matchId)}&seat=${j.seat}`)).catch(showError);
    return sit;
  });
  const link = listedHeldBack(m) ? h("span", { className: "held-back" }, HELD_BACK)
    : status === "ended"
      ? h("a", { href: `?log=${encodeURIComponent(m.matchId)}`, className: "replay" }, "replay")
      : h("a", { href: `?match=${encodeURIComponent(m.matchId)}`, className: "watch" }, "watch");
  return h("tr", { className: "match", "data-id": m.matchId, "data-status": status, "data-game": m.game },
    h("td", {}, link), h("td", {}, game ? game.title : m.game), h("td", { className: `status ${status}` }, m.cancelled ? "cancelled" : status),
    h("td", { className: "seats" }, ...seats.flatMap((s, i) => (i ? [", ", s] : [s]))),
    h("td", {}, m.totals.map(scoreText).join(" · ")), h("td", { className: "id" }, m.matchId));
}

async function matchList() {
  const all = await games();
  const gameFilter = h("select", { id: "filter-game" }, h("option", { value: "" }, "every game"), ...all.map((g) => h("option", { value: g.name }, g.title)));
  const statusFilter = h("select", { id: "filter-status" }, h("option", { value: "0" }, "every status"),
    ...[1, 2, 3].map((s) => h("option", { value: s }, STATUS[s])));
  const rows = h("tbody");
  // ListMatches pages oldest first.
  const prev = h("button", { id: "page-prev", type: "button", disabled: true }, "◀ previous");
  const next = h("button", { id: "page-next", type: "button", disabled: true }, "next ▶");
  const pageLabel = h("span", { id: "page" });
  const tokens = [""]; // the page tokens of the pages seen, the first page's ""
  let page = 0;
  const load = async () => {
    // The server filters, by game and by status, so every page is a full one of the filter.
    const resp = await matches.listMatches({
      pageSize: PAGE, pageToken: tokens[page], status: Number(statusFilter.value), game: gameFilter.value,
    });
    const shown = resp.matches;
    rows.replaceChildren(...shown.map((m) => matchRow(m, all)));
    if (!shown.length) rows.append(h("tr", {}, h("td", { colSpan: 6, className: "empty" }, "No matches here yet.")));
    tokens[page + 1] = resp.nextPageToken;
    prev.disabled = page === 0;
    next.disabled = !resp.nextPageToken;
    pageLabel.textContent = `page ${page + 1}`;
    document.body.dataset.listed = String(shown.length);
  };
  const reload = () => load().catch(showError);
  gameFilter.onchange = statusFilter.onchange = () => { page = 0; tokens.length = 1; reload(); };
  prev.onclick = () => { page -= 1; reload(); };
  next.onclick = () => { page += 1; reload(); };
  await load();
  setInterval(reload, 3000); // live: statuses, seats and totals as they change
  return h("section", { id: "list", className: "card-panel" },
    h("h2", {}, "Matches"),
    h("div", { className: "filters" }, gameFilter, statusFilter, prev, pageLabel, next),
    h("table", { id: "matches" },
      h("thead", {}, h("tr", {}, ...["", "game", "status", "seats", "totals", "match"].map((t) => h("th", {}, t)))), rows));
}

export async function lobbyView() {
  const [form, list, cups] = await Promise.all([newMatchForm(), matchList(), tournamentList()]);
  view().replaceChildren(h("div", { className: "lobby" }, form, list, cups));
  ready();
}
