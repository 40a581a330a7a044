// Taking seats: a free seat of a listed match, or a practice match against bots (seat 0 for
// the player, a bot in every other seat), from the lobby's form or a rematch. The bots are the
// server's house bots where it offers them (ListGames says so): it plays them to the end,
// whether or not this page stays open. Elsewhere they are the page's own (play.js runBot).
// The player's name is kept in localStorage, so that every seat taken later is theirs too.
import { matches, ConnectError, Code } from "./rpc.js";
import { remember, recall } from "./session.js";
import { houseBots } from "./games.js";

// The house bot asked for each other seat: the rule-based one, a fair opponent that answers
// at once.
const HOUSE_BOT = "rules";

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

// Create a match with the server's house bots in every other seat if it offers them, take
// seat 0, and seat the page's own bots in any seat still free; the new match's id.
export async function startPractice(game, players, options, moveMs, name) {
  keepName(name);
  const settings = { game, players, options, timeControl: { moveMs } };
  const created = (await withHouseBots(settings)) || (await matches.createMatch(settings)).match;
  const matchId = created.matchId;
  await takeSeat(matchId, 0, name);
  const bots = [];
  for (const { seat } of created.seats.filter((s) => s.seat !== 0 && !s.taken)) {
    const joined = await matches.joinMatch({ matchId, seat, name: `bot ${seat}` });
    bots.push({ seat, token: joined.token });
  }
  remember(matchId, { bots, practice: { game, players, options, moveMs, name } });
  return matchId;
}

// The match created with a house bot in every seat but 0, or null where the server offers
// none, or none now (every house seat busy, or turned off since the page asked).
async function withHouseBots(settings) {
  const offer = await houseBots();
  const count = (settings.players || 0) - 1;
  if (!offer || !offer.bots.includes(HOUSE_BOT) || count < 1 || count > offer.maxSeats) return null;
  const houseSeats = Array.from({ length: count }, (_, i) => ({ seat: i + 1, bot: HOUSE_BOT }));
  try {
    return (await matches.createMatch({ ...settings, houseSeats })).match;
  } catch (error) {
    const busy = error instanceof ConnectError && [Code.ResourceExhausted, Code.FailedPrecondition].includes(error.code);
    if (busy) return null;
    throw error;
  }
}
