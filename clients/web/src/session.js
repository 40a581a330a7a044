// What the browser keeps so that a reload, or the same link opened in another tab, carries
// on: the seat's token and the tokens of the in-page bots of a match started here, in
// localStorage (this browser only; never in the URL, which holds only the match and the
// seat). The newest MAX_KEPT matches are kept.
const PREFIX = "cardarena.match.";
const key = (matchId) => `${PREFIX}${matchId}`;
const MAX_KEPT = 50;

function storage() {
  try {
    return window.localStorage;
  } catch {
    return window.sessionStorage; // storage refused (a private window): this tab only
  }
}

export function remember(matchId, entry) {
  const all = recall(matchId);
  const store = storage();
  store.setItem(key(matchId), JSON.stringify({ ...all, ...entry, at: Date.now() }));
  prune(store);
}

// { seats: { [seat]: token }, bots: [{ seat, token }], practice: {...} }
export function recall(matchId) {
  for (const store of [storage(), window.sessionStorage]) {
    try {
      const kept = store.getItem(key(matchId));
      if (kept) return JSON.parse(kept);
    } catch {
      // unreadable: as if nothing were kept
    }
  }
  return {};
}

function prune(store) {
  const kept = [];
  for (let i = 0; i < store.length; i += 1) {
    const k = store.key(i);
    if (!k || !k.startsWith(PREFIX)) continue;
    let at = 0;
    try { at = JSON.parse(store.getItem(k)).at || 0; } catch { /* oldest */ }
    kept.push([at, k]);
  }
  kept.sort((a, b) => b[0] - a[0]);
  for (const [, k] of kept.slice(MAX_KEPT)) store.removeItem(k);
}
