// What a tab keeps so that a reload carries on: the seat's token and the tokens of the
// in-page bots of a match started here, in sessionStorage (this tab only, gone when it
// closes; never in the URL, which holds only the match and the seat).
const key = (matchId) => `cardarena.match.${matchId}`;

export function remember(matchId, entry) {
  const all = recall(matchId);
  sessionStorage.setItem(key(matchId), JSON.stringify({ ...all, ...entry }));
}

// { seats: { [seat]: token }, bots: [{ seat, token }] }
export function recall(matchId) {
  try {
    return JSON.parse(sessionStorage.getItem(key(matchId)) || "{}");
  } catch {
    return {};
  }
}
