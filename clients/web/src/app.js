// The cardarena web app. Views by URL: / the lobby (new match, match list);
// ?match=ID a live table as a spectator; ?match=ID&seat=N the table as seat N (its token
// kept in this browser's localStorage, so a reload or another tab carries on; seat=any
// takes the next open seat); ?log=ID the replay; ?tournament=ID a tournament's standings,
// crosstable and matches; ?ladder=ID a ladder's board and its matches.
//
// Moving between views is not a page load: a click on a link of the app (or go() in ui.js)
// changes the URL with history.pushState and shows the new view; the script and the style
// sheet, loaded once, serve every view (the gateway names them by their content's hash and
// lets the browser keep them). The view shown before is stopped through its AbortSignal
// (its streams and timers).
import { showError, ready } from "./ui.js";
import { lobbyView } from "./lobby.js";
import { liveView } from "./live.js";
import { replayView } from "./replay.js";
import { tournamentView } from "./tournament.js";
import { ladderView } from "./ladder.js";

const VIEWS = { match: liveView, log: replayView, tournament: tournamentView, ladder: ladderView, lobby: lobbyView };

let current = null;

async function show() {
  if (current) current.abort();
  const controller = new AbortController();
  current = controller;
  const params = new URLSearchParams(location.search);
  const name = ["match", "log", "tournament", "ladder"].find((k) => params.get(k)) || "lobby";
  for (const key of ["ready", "over", "legal", "seq", "toAct", "match", "seat", "step", "held", "tournament", "ladder", "ladderCounted", "listed", "errorPage"]) {
    delete document.body.dataset[key];
  }
  document.body.dataset.view = name;
  showError(null);
  try {
    const view = VIEWS[name];
    document.getElementById("view").replaceChildren();
    window.scrollTo(0, 0);
    await view(params, controller.signal);
  } catch (error) {
    if (controller.signal.aborted) return;
    showError(error);
    ready();
  }
}

function navigate(href, replace = false) {
  const url = new URL(href, location.href);
  if (url.origin !== location.origin || url.pathname !== location.pathname) {
    location.assign(url.href);
    return;
  }
  if (url.search === location.search && url.hash) {
    history.replaceState(null, "", url.href);
    document.getElementById(url.hash.slice(1))?.scrollIntoView();
    return;
  }
  if (replace) history.replaceState(null, "", url.href);
  else history.pushState(null, "", url.href);
  show();
}

// Links of the app are followed in place (a modified click still opens a new tab).
document.addEventListener("click", (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest && e.target.closest("a[href]");
  if (!a || a.target || a.hasAttribute("download")) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname !== location.pathname) return;
  e.preventDefault();
  navigate(url.href);
});
window.addEventListener("popstate", show);
window.addEventListener("cardarena:navigate", (e) => navigate(e.detail.href, e.detail.replace));

show();
