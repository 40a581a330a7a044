// A ladder, live (docs/ladders.md): its board (each player's conservative rating and its
// OpenSkill mu and sigma, games, mean score with its interval, connected, away or retired,
// last seen), the matches of the duplicate groups still being played (GetLadder with
// include_playing: held back until their group ends, each saying when it becomes
// watchable) and the latest counted ones (the last page of GetLadderSnapshot), each a link
// to its replay. Asked again every few seconds while the page is in view, and updated in
// place. And the lobby's list of ladders.
import { h, morph } from "./dom.js";
import { ladders, ConnectError, Code, errorText } from "./rpc.js";
import { games } from "./games.js";
import { view, ready, flag, showError, crumbs, link, ago, fullDate } from "./ui.js";
import { errorPage } from "./errors.js";

const REFRESH_MS = 3000;
// The latest counted matches shown (one page of the snapshot's lines).
const RECENT = 20;
const CLOSED = 2; // LadderStatus.LADDER_STATUS_CLOSED
const RUNNING = 2, ENDED = 3; // MatchStatus

const num = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "");
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : /(s|ch)$/.test(word) ? "es" : "s"}`;
// A cell that names its column, for the narrow layout (each row a block of labelled cells).
const cell = (label, content, attrs = {}) => h("td", { "data-label": label, ...attrs }, content);

function state(row) {
  if (row.retired) return ["retired", "retired"];
  return row.connected ? ["connected", "connected"] : ["away", "away"];
}

function lastSeen(row) {
  if (row.connected && !row.retired) return "now";
  const ms = Number(row.lastSeenUnixMs);
  if (!ms) return h("span", { title: "not connected since the server started" }, "—");
  return h("time", { dateTime: new Date(ms).toISOString(), title: fullDate(ms) }, ago(ms));
}

function board(info) {
  const order = info.lowestWins ? "the lowest mean is best" : "the highest mean is best";
  const rows = info.board.map((r, i) => {
    const [word, kind] = state(r);
    return h("tr", { className: `rung ${kind}`, "data-key": r.player, "data-player": r.player, "data-state": kind },
      cell("#", String(i + 1), { className: "place" }),
      h("th", { scope: "row", className: "player" }, r.player),
      cell("rating", num(r.ordinal), { className: "ordinal", title: "mu − 3 sigma: the board's order" }),
      cell("μ", num(r.mu)), cell("σ", num(r.sigma)),
      cell("games", String(r.matches), { title: `${plural(r.groups, "complete group")}` }),
      cell("mean", r.hasMean ? [num(r.mean), r.hasInterval ? h("span", { className: "interval" }, ` [${num(r.ciLow)}, ${num(r.ciHigh)}]`) : ""] : "—",
        { className: "mean" }),
      cell("state", word, { className: `state ${kind}` }),
      cell("last seen", lastSeen(r), { className: "seen" }));
  });
  return h("section", { id: "ladder-board", className: "card-panel", "data-key": "board" },
    h("h2", {}, "Board"),
    rows.length
      ? h("table", { className: "grid ladder-table" },
        h("thead", {}, h("tr", {}, ...["#", "player", "rating", "μ", "σ", "games", "mean [95% interval]", "state", "last seen"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, ...rows))
      : h("p", { className: "empty" }, "Nobody has played yet: the board fills as the first groups end."),
    h("p", { className: "rule" },
      `Ordered by rating, mu − 3 sigma (OpenSkill), over the ${plural(info.counted, "match")} counted so far: ` +
      "a match counts once every match before it has ended and its group's seed is revealed. " +
      `The mean is the score per match over complete duplicate groups (${order}), with its 95% interval.`));
}

// When the matches of a group still being played become watchable, and how far it is.
function groupWords(group, lines) {
  const ended = lines.filter((m) => m.status === ENDED).length;
  return `watchable once all ${lines.length} rotations of group ${group + 1} have ended (${ended} ${ended === 1 ? "has" : "have"})`;
}

function playing(list, players) {
  const groups = new Map();
  for (const m of list) {
    if (!groups.has(m.group)) groups.set(m.group, []);
    groups.get(m.group).push(m);
  }
  const rows = [];
  for (const [group, lines] of groups) {
    const when = groupWords(group, lines);
    for (const m of lines) {
      const status = m.cancelled ? "void" : m.status === RUNNING ? "playing" : m.status === ENDED ? "ended" : "waiting";
      const go = !m.matchId ? h("span", { className: "waiting" }, "not started: waiting for its players to have room")
        : h("span", { className: "held-back" },
          // The server refuses spectators until the group ends: the link leads to a page
          // that says so, with the server's words, and back here.
          h("a", { href: `?match=${encodeURIComponent(m.matchId)}`, className: "held", title: "why it cannot be watched yet" }, "held back"),
          `: ${when}`);
      rows.push(h("tr", { className: `lmatch ${status}`, "data-key": `p${m.index}`, "data-id": m.matchId, "data-index": m.index, "data-group": m.group },
        cell("match", `#${m.index + 1}`, { className: "index" }),
        cell("", `group ${group + 1}, rotation ${m.index - group * players + 1}`, { className: "where" }),
        cell("seats", m.players.join(" · "), { className: "seats" }),
        cell("state", status, { className: `status ${status}` }),
        cell("", go, { className: "go" })));
    }
  }
  const running = list.filter((m) => m.status === RUNNING).length;
  return h("section", { id: "ladder-playing", className: "card-panel", "data-key": "playing" },
    h("h2", {}, `Playing now (${running} running)`),
    rows.length
      ? h("table", { className: "grid ladder-table" },
        h("thead", {}, h("tr", {}, ...["match", "where", "seats", "state", ""].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, ...rows))
      : h("p", { className: "empty" }, "No group is being played right now."),
    h("p", { className: "rule" }, "Every rotation of a duplicate group is dealt the same cards, so nobody outside a match may watch it " +
      "until every match of its group has ended; then its matches count and can be replayed below."));
}

function recent(lines, counted) {
  const rows = [...lines].reverse().map((m) => h("tr", { className: `lmatch counted${m.cancelled ? " void" : ""}`, "data-key": `c${m.index}`, "data-id": m.matchId, "data-index": m.index },
    cell("match", `#${m.index + 1}`, { className: "index" }),
    cell("", `group ${m.group + 1}`, { className: "where" }),
    cell("seats", m.players.join(" · "), { className: "seats" }),
    cell("", m.cancelled ? h("span", { className: "void", title: "a player was away when its turn came, or the ladder closed" }, "void")
      : h("a", { href: `?log=${encodeURIComponent(m.matchId)}`, className: "replay" }, "replay"), { className: "go" })));
  return h("section", { id: "ladder-recent", className: "card-panel", "data-key": "recent" },
    h("h2", {}, counted ? `Latest counted matches (${lines.length} of ${counted})` : "Latest counted matches"),
    rows.length
      ? h("table", { className: "grid ladder-table" },
        h("thead", {}, h("tr", {}, ...["match", "where", "seats", ""].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, ...rows))
      : h("p", { className: "empty" }, "No match has counted yet."),
    h("p", { className: "rule" }, "The board's matches, newest first. ", h("code", {}, "cardarena ladder snapshot"),
      " keeps a signed snapshot of the board and ", h("code", {}, "cardarena audit --ladder"), " recomputes it from these matches' logs."));
}

function ladderError(id, error) {
  const lobby = link("./", "Back to the lobby", { className: "button" });
  if (error instanceof ConnectError && error.code === Code.NotFound) {
    return errorPage("No such ladder", [`This server has no ladder ${id}.`], [lobby], "not-found");
  }
  return errorPage("This ladder cannot be shown", [`The server: ${errorText(error)}`], [lobby]);
}

export async function ladderView(params, signal) {
  const id = params.get("ladder");
  const all = await games();
  let info = null, list = [], lines = [], linesAt = -1;
  const read = async () => {
    const answer = await ladders.getLadder({ ladderId: id, includePlaying: true }, { signal });
    info = answer.ladder;
    list = answer.playing;
    // The latest counted matches: the snapshot's last page, asked for again only when more
    // have counted.
    if (info.counted !== linesAt) {
      if (info.counted === 0) lines = [];
      else {
        const from = Math.max(0, info.counted - RECENT);
        const snapshot = await ladders.getLadderSnapshot({ ladderId: id, matchesFrom: from, matchesLimit: RECENT }, { signal });
        lines = snapshot.matches;
      }
      linesAt = info.counted;
    }
  };
  const draw = () => {
    if (signal.aborted) return;
    const game = all.find((g) => g.name === info.game);
    const closed = info.status === CLOSED;
    const connected = info.board.filter((r) => r.connected && !r.retired).length;
    crumbs(link("./", "Matches"), ` › ladder ${info.name || id}`);
    const fresh = h("div", { id: "ladder", "data-key": "ladder" },
      h("h2", { id: "ladder-title" }, `${info.name || "Ladder"}: ${game ? game.title : info.game}, ${info.players} seats`),
      h("p", { id: "ladder-progress", "data-status": closed ? "closed" : "running" },
        `${closed ? "closed" : "running"} · ${plural(info.counted, "match")} counted, ${info.running} running, ${info.scheduled} scheduled · ` +
        `${connected} of the board's ${plural(info.board.length, "player")} connected · opened ${ago(Number(info.createdUnixMs))}`),
      board(info), playing(list, info.players), recent(lines, info.counted));
    const root = view();
    if (root.firstElementChild && root.firstElementChild.id === "ladder" && root.childNodes.length === 1) morph(root.firstElementChild, fresh);
    else root.replaceChildren(fresh);
    flag("ladder", closed ? "closed" : "running");
    flag("ladderCounted", info.counted);
  };
  try {
    await read();
  } catch (error) {
    if (signal.aborted) return;
    return ladderError(id, error);
  }
  draw();
  ready();
  // Live: asked again every few seconds while the page is in view (a closed ladder's board
  // no longer changes, but its last groups may still be played out).
  while (!signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, REFRESH_MS));
    if (signal.aborted || document.visibilityState !== "visible") continue;
    try {
      await read();
      showError(null);
      draw();
    } catch (error) {
      if (!signal.aborted) showError(error);
    }
    if (info.status === CLOSED && list.length === 0) break;
  }
}

// The lobby's list of ladders (one page).
export async function ladderList() {
  // The newest first, as the server pages them: a lobby shows the latest ladders.
  const resp = await ladders.listLadders({ pageSize: 20, newestFirst: true });
  const all = await games();
  const rows = resp.ladders.map((l) => {
    const game = all.find((g) => g.name === l.game);
    const leader = l.board.find((r) => !r.retired && r.matches > 0);
    const connected = l.board.filter((r) => r.connected && !r.retired).length;
    return h("tr", { className: "ladder", "data-id": l.ladderId },
      h("td", {}, h("a", { href: `?ladder=${encodeURIComponent(l.ladderId)}` }, l.name || l.ladderId)),
      h("td", {}, game ? game.title : l.game), h("td", {}, l.status === CLOSED ? "closed" : "running"),
      h("td", {}, `${l.counted} counted, ${l.running} running`),
      h("td", {}, `${connected} of ${l.entrants.length}`),
      // Nobody leads before a match counts.
      h("td", { className: "leading" }, leader ? leader.player : "—"));
  });
  return h("section", { id: "ladders", className: "card-panel" },
    h("h2", {}, "Ladders"),
    rows.length
      ? h("table", { className: "grid" }, h("thead", {}, h("tr", {}, ...["", "game", "status", "matches", "connected", "leading"].map((t) => h("th", {}, t)))), h("tbody", {}, ...rows))
      : h("p", { className: "empty" }, "No ladders on this server yet."));
}
