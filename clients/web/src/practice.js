// Taking seats: a free seat of a listed match, or a practice match against the page's bots
// (seat 0 for the player, a bot in every other seat), from the lobby's form or a rematch.
// The player's name is kept in localStorage, so that every seat taken later is theirs too.
import { matches } from "./rpc.js";
import { remember, recall } from "./session.js";

const NAME = "cardarena.name";
export function playerName() {
  try { return localStorage.getItem(NAME) || ""; } catch { return ""; }
}
export function keepName(name) {
  try { if (name) localStorage.setItem(NAME, name); } catch { /* private mode: not kept */ }
}

// Take `seat` of `matchId` (absent: the lowest free one) and keep its token for this tab.
export async function takeSeat(matchId, seat, name) {
  const joined = await matches.joinMatch({ matchId, seat: seat ?? undefined, name: name || playerName() || "guest" });
  const kept = recall(matchId).seats || {};
  remember(matchId, { seats: { ...kept, [joined.seat]: joined.token } });
  return joined;
}

// Create a match, take seat 0, seat a bot in every other seat; the new match's id.
export async function startPractice(game, players, options, moveMs, name) {
  keepName(name);
  const created = (await matches.createMatch({ game, players, options, timeControl: { moveMs } })).match;
  const matchId = created.matchId;
  await takeSeat(matchId, 0, name);
  const bots = [];
  for (let seat = 1; seat < created.players; seat += 1) {
    const joined = await matches.joinMatch({ matchId, seat, name: `bot ${seat}` });
    bots.push({ seat, token: joined.token });
  }
  remember(matchId, { bots, practice: { game, players, options, moveMs, name } });
  return matchId;
}
