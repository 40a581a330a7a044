// Pages for what went wrong, each saying what to do next: an unknown match or tournament
// (back to the lobby, start a match), the log of a match still being played (watch it
// live), a server that does not answer (try again). A match held back until its group ends
// has its own page (held.js).
import { h } from "./dom.js";
import { ConnectError, Code, errorText } from "./rpc.js";
import { view, ready, flag, crumbs, link } from "./ui.js";

export function errorPage(title, words, actions, kind = "error") {
  crumbs(link("./", "Matches"), " › ", title);
  view().replaceChildren(h("section", { id: "error-page", className: "card-panel", "data-kind": kind },
    h("h2", {}, title),
    ...[words].flat().map((w) => h("p", {}, w)),
    h("p", { className: "next" }, ...actions.flatMap((a, i) => (i ? [" ", a] : [a])))));
  flag("errorPage", kind);
  ready();
}

const lobby = () => link("./", "Back to the lobby", { className: "button" });
const newMatch = () => link("./#create", "Start a new match", { className: "button" });

// The page for an error met opening a match's table (`what`: "match" or "log").
export function matchError(matchId, error, what) {
  const code = error instanceof ConnectError ? error.code : null;
  const words = errorText(error);
  if (code === Code.NotFound) {
    return errorPage("No such match", [`This server has no match ${matchId}. The link may be mistyped, or the match was on another server.`],
      [lobby(), newMatch()], "not-found");
  }
  if (what === "log" && code === Code.FailedPrecondition) {
    return errorPage("This match is still being played", [
      "Its full log (every hand and the seed) is published once it has ended: until then you can watch it live, and the replay opens at the end.",
      `The server: ${words}`],
    [link(`?match=${encodeURIComponent(matchId)}`, "Watch it live", { className: "button primary", id: "watch-live" }), lobby()], "not-ended");
  }
  if (code === Code.Unavailable || code === Code.DeadlineExceeded || code === Code.Unknown || code === Code.Internal) {
    return errorPage("The server does not answer", [`It may be restarting: try again in a moment. (${words})`],
      [h("a", { href: location.search || "./", className: "button primary", onclick: () => location.reload() }, "Try again"), lobby()], "unavailable");
  }
  return errorPage("This match cannot be shown", [`The server: ${words}`], [lobby(), newMatch()]);
}

export function tournamentError(id, error) {
  const code = error instanceof ConnectError ? error.code : null;
  if (code === Code.NotFound) {
    return errorPage("No such tournament", [`This server has no tournament ${id}.`], [lobby()], "not-found");
  }
  return errorPage("This tournament cannot be shown", [`The server: ${errorText(error)}`], [lobby()]);
}
