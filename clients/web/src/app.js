// The cardarena web app. Views by URL: / the lobby (new match, match list);
// ?match=ID a live table as a spectator; ?match=ID&seat=N the table as seat N (its token
// kept in this tab's sessionStorage, so a reload carries on); ?log=ID the replay;
// ?tournament=ID a tournament's standings, crosstable and matches.
import { lobbyView } from "./lobby.js";
import { liveView } from "./live.js";
import { replayView } from "./replay.js";
import { tournamentView } from "./tournament.js";
import { showError, ready } from "./ui.js";

async function main() {
  const params = new URLSearchParams(location.search);
  try {
    if (params.get("match")) await liveView(params.get("match"), params.get("seat"));
    else if (params.get("log")) await replayView(params.get("log"));
    else if (params.get("tournament")) await tournamentView(params.get("tournament"));
    else await lobbyView();
  } catch (error) {
    showError(error);
    ready();
  }
}

main();
