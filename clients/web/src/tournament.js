// A hosted tournament, live (WatchTournament): its progress, the standings (mean score per
// match with its interval, wins, rating, faults), the crosstable of paired differences, and
// its matches (GetTournament with include_matches), each a click from its table: the live
// table while it is played, the replay once it has ended. And the list of tournaments.
import { h } from "./dom.js";
import { tournaments } from "./rpc.js";
import { games } from "./games.js";
import { scoreText } from "./model.js";
import { view, ready, flag, showError, crumbs, link } from "./ui.js";
import { tournamentError } from "./errors.js";
import { HELD_BACK, heldGroups } from "./held.js";

const num = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "");
const ENDED = 2;
const MATCH_RUNNING = 2, MATCH_ENDED = 3;

function standingsTable(info) {
  const order = info.lowestWins ? "lowest" : "highest";
  return h("section", { id: "standings", className: "card-panel" },
    h("h2", {}, "Standings"),
    h("table", { className: "grid" },
      h("thead", {}, h("tr", {}, ...["#", "entrant", "matches", "groups", "mean", "95% interval", "wins", "win rate", "rating", "faults", "forfeits"].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...info.standings.map((s, i) => h("tr", { className: "standing", "data-entrant": s.entrant },
        h("td", {}, String(i + 1)), h("th", {}, s.entrant), h("td", {}, String(s.matches)), h("td", {}, String(s.groups)),
        h("td", {}, s.hasMean ? num(s.mean) : ""), h("td", {}, s.hasInterval ? `${num(s.ciLow)} … ${num(s.ciHigh)}` : ""),
        h("td", {}, num(s.wins, 1)), h("td", {}, num(s.winRate * 100, 0) + "%"), h("td", {}, num(s.ordinal)),
        h("td", {}, String(s.faults)), h("td", {}, String(s.forfeits)))))),
    h("p", { className: "rule" }, `Mean score per match over the duplicate groups; the ${order} mean ranks first.` +
      (info.status === ENDED ? "" : " While the tournament runs, a group counts once every match of it has ended: until then its cards and results are held back.")));
}

// Entrant a's row, entrant b's column: a's mean paired difference over b (positive: a did better).
function crosstable(info) {
  const names = info.entrants;
  const cell = new Map(info.crosstable.map((p) => [`${p.a}\u0000${p.b}`, p]));
  const text = (a, b) => {
    const p = cell.get(`${a}\u0000${b}`);
    if (p) return p.hasMean ? num(p.mean) : "";
    const q = cell.get(`${b}\u0000${a}`);
    return q && q.hasMean ? num(-q.mean) : "";
  };
  return h("section", { id: "crosstable", className: "card-panel" },
    h("h2", {}, "Crosstable"),
    h("table", { className: "grid" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), ...names.map((n) => h("th", {}, n)))),
      h("tbody", {}, ...names.map((a) => h("tr", { "data-entrant": a }, h("th", {}, a),
        ...names.map((b) => h("td", { className: a === b ? "self" : "" }, a === b ? "—" : text(a, b))))))),
    h("p", { className: "rule" }, "Row over column: the mean paired difference of their scores in the groups both played."));
}

function matchList(info, list) {
  // A group's matches are held back (no table, no replay, no totals) until all have ended.
  const held = heldGroups(list, info.status === ENDED);
  const rows = list.map((m) => {
    const ended = m.status === MATCH_ENDED;
    const link = !m.matchId ? h("span", {}, "not started")
      : held.has(m.group) ? h("span", { className: "held-back" }, HELD_BACK)
        : ended ? h("a", { href: `?log=${encodeURIComponent(m.matchId)}`, className: "replay" }, "replay")
          : h("a", { href: `?match=${encodeURIComponent(m.matchId)}`, className: "watch" }, "watch live");
    return h("tr", { className: `tmatch${ended ? " ended" : m.matchId ? " playing" : ""}${m.matchId && held.has(m.group) ? " held" : ""}`, "data-id": m.matchId },
      h("td", {}, String(m.index + 1)), h("td", {}, `group ${m.group + 1}, deal ${m.deal + 1}, rotation ${m.rotation + 1}`),
      h("td", {}, m.entrants.join(" · ")), h("td", {}, m.totals.map(scoreText).join(" · ")),
      h("td", {}, m.cancelled ? "cancelled" : m.winners.map((w) => m.entrants[w]).join(", ")), h("td", {}, link));
  });
  const playing = list.filter((m) => m.status === MATCH_RUNNING).length;
  return h("section", { id: "tournament-matches", className: "card-panel" },
    h("h2", {}, `Matches (${playing} in play)`),
    h("table", { className: "grid" },
      h("thead", {}, h("tr", {}, ...["", "where", "seats", "totals", "won by", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...rows)));
}

export async function tournamentView(params, signal) {
  const id = params.get("tournament");
  const all = await games();
  let info = null, list = [], fetching = false, last = 0;
  const draw = () => {
    const game = all.find((g) => g.name === info.game);
    const status = info.status === ENDED ? (info.cancelled ? "cancelled" : "ended") : "running";
    if (signal.aborted) return;
    crumbs(link("./", "Matches"), ` › tournament ${id}`);
    view().replaceChildren(
      h("h2", { id: "tournament-title" }, `${info.name || "Tournament"}: ${game ? game.title : info.game}, ${info.players} seats`),
      h("p", { id: "progress", "data-status": status },
        `${status} · ${info.finished} of ${info.planned} matches finished, ${info.started} started` +
        (info.voidMatches ? `, ${info.voidMatches} of them void (every seat forfeited)` : "") +
        `, ${info.forfeits} seat forfeit${info.forfeits === 1 ? "" : "s"}, ${info.failed} cancelled or failed` +
        (info.endReason ? ` · ${info.endReason}` : "")),
      standingsTable(info), crosstable(info), matchList(info, list));
    flag("tournament", status);
  };
  const refreshMatches = async () => {
    if (fetching || Date.now() - last < 1000) return;
    fetching = true;
    try {
      const fresh = (await tournaments.getTournament({ tournamentId: id, includeMatches: true })).tournament;
      list = fresh.matches;
      // The header from the same answer as the list, unless the stream has told more since.
      if (fresh.finished >= info.finished && fresh.started >= info.started) info = fresh;
      last = Date.now();
    } finally { fetching = false; }
    draw();
  };
  try {
    info = (await tournaments.getTournament({ tournamentId: id, includeMatches: true })).tournament;
  } catch (error) {
    return tournamentError(id, error);
  }
  list = info.matches;
  draw();
  ready();
  for (let attempt = 0; attempt < 30 && info.status !== ENDED && !signal.aborted; attempt += 1) {
    try {
      for await (const update of tournaments.watchTournament({ tournamentId: id }, { signal })) {
        info = update.tournament;
        draw();
        refreshMatches().catch(showError);
        if (info.status === ENDED) break;
      }
    } catch (error) {
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  if (signal.aborted) return;
  last = 0;
  await refreshMatches();
}

// The lobby's list of tournaments (newest first, one page).
export async function tournamentList() {
  const resp = await tournaments.listTournaments({ pageSize: 20 });
  const all = await games();
  const rows = resp.tournaments.map((t) => {
    const game = all.find((g) => g.name === t.game);
    return h("tr", { className: "tournament", "data-id": t.tournamentId },
      h("td", {}, h("a", { href: `?tournament=${encodeURIComponent(t.tournamentId)}` }, t.name || t.tournamentId)),
      h("td", {}, game ? game.title : t.game), h("td", {}, t.status === ENDED ? "ended" : "running"),
      h("td", {}, `${t.finished} / ${t.planned}`),
      // Nobody leads before a result counts.
      h("td", { className: "leading" }, t.standings.length && t.standings[0].matches > 0 ? t.standings[0].entrant : "—"));
  });
  return h("section", { id: "tournaments", className: "card-panel" },
    h("h2", {}, "Tournaments"),
    rows.length
      ? h("table", { className: "grid" }, h("thead", {}, h("tr", {}, ...["", "game", "status", "matches", "leading"].map((t) => h("th", {}, t)))), h("tbody", {}, ...rows))
      : h("p", { className: "empty" }, "No tournaments on this server yet."));
}
