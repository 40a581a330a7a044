// The games as ListGames describes them (titles, player counts, the options' JSON Schema),
// fetched once, and what a round kind is called and scores, read from that schema.
import { matches } from "./rpc.js";

let cache = null;
const listing = () => {
  if (!cache) cache = matches.listGames({});
  return cache;
};
export async function games() {
  return (await listing()).games;
}
// What the server's own bots may be asked to play (ListGamesResponse.house_bots), or null.
export async function houseBots() {
  return (await listing()).houseBots || null;
}

const KIND_TITLES = {
  pass: "Pass (dodge tricks)", clubs: "Clubs", queens: "Queens", grand: "Grand (take tricks)",
  trumps: "Trumps", finale: "Finale", fan_tan: "Fan Tan", hand: "Hand", deal: "Deal",
};

// The context table.js needs to name and explain a game's rounds.
export function gameContext(game, info) {
  const schema = (game && game.optionsSchema) || {};
  const props = schema.properties || {};
  const options = (info && info.options) || {};
  let roundCount = Array.isArray(options.rounds) ? options.rounds.length : 0;
  let rule = game ? (game.lowestWins ? "Lowest total wins." : "Highest total wins.") : "";
  if (game && game.name === "crazy_sixes") rule = `The game ends after the hand in which a total reaches ${options.target_score ?? 100}; highest total wins.`;
  if (game && game.name === "triathlon") {
    rule = `Deals score tricks plus feats (a multiple of three, the last trick, the middle count); the game ends after ${options.end === "triathlon_in_one_deal" ? "a deal in which one player earns all three feats" : "a player has earned every feat"} (at most ${options.max_deals ?? 50} deals). Highest total wins.`;
    roundCount = 0;
  }
  return {
    title: game ? game.title : "",
    lowestWins: game ? game.lowestWins : false,
    rule,
    roundCount,
    kindTitle: (kind) => KIND_TITLES[kind] || kind,
    kindShort: (kind) => (KIND_TITLES[kind] || kind).replace(/ \(.*\)$/, ""),
    describe: (kind) => {
      if (kind === "deal") return "Tricks plus feats: a multiple of three, the last trick, the middle count";
      if (kind === "hand") return "Each placed card scores 1; the winners share the unplaced cards";
      const p = props[kind];
      return p && p.description ? p.description[0].toUpperCase() + p.description.slice(1) : "";
    },
  };
}
