// A match of a tournament's or a ladder's duplicate group is held back until every match of
// its group has ended (docs/rules.md §4.10): every rotation of a group is dealt the same
// cards, so until then only its seats and the operator may read it, and the server refuses
// anyone else with FAILED_PRECONDITION in words that name the group. The pages say so
// plainly rather than fail.
import { h } from "./dom.js";
import { ConnectError, Code, errorText } from "./rpc.js";
import { view, ready, flag, crumbs, link } from "./ui.js";

export const HELD_BACK = "held back until its group ends";
const MATCH_ENDED = 3; // MatchStatus.MATCH_STATUS_ENDED

// Whether the server refused this call because the match's group is still being played.
export function isHeldBack(error) {
  return error instanceof ConnectError && error.code === Code.FailedPrecondition &&
    /duplicate group/.test(error.rawMessage || "");
}

// A listed match (MatchInfo) held back: a tournament's match shows its seed once its group has
// ended, and not before.
export function listedHeldBack(m) {
  return Boolean(m.tournamentId) && m.seed.length === 0;
}

// The groups of a tournament whose lines (TournamentMatch) are held back: while it runs, each
// group of which a match has not ended (or not started).
export function heldGroups(lines, tournamentEnded) {
  if (tournamentEnded) return new Set();
  return new Set(lines.filter((m) => m.status !== MATCH_ENDED).map((m) => m.group));
}

// The page of a match that is held back: what it is, why it cannot be shown yet, and when
// (the server's words name the tournament or the ladder whose group holds it back).
export function heldBackView(matchId, error) {
  const words = errorText(error);
  const [, kind = "tournament", id = ""] = /of (tournament|ladder) ([0-9a-f]+)/.exec(words) || [];
  crumbs(link("./", "Matches"), ` › match ${matchId}`);
  view().replaceChildren(
    h("section", { id: "held-back", className: "card-panel" },
      h("h2", {}, `This match is ${HELD_BACK}`),
      h("p", { className: "notice" }, `It is one rotation of a ${kind}'s duplicate group: every rotation is dealt the same cards, ` +
        "so nobody outside the match may see its table or its log until every match of its group has ended. " +
        "Then it can be watched and replayed like any other."),
      h("p", { id: "held-words" }, `The server: ${words}`),
      h("p", { className: "next" },
        id ? h("a", { href: `?${kind}=${encodeURIComponent(id)}`, className: "button primary", id: "held-follow" }, `Follow its ${kind}`) : "",
        " ", h("a", { href: "./", className: "button" }, "Back to the lobby"))));
  flag("held", "true");
  ready();
}
