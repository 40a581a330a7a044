// Playing a seat: the reader's hand with its legal cards highlighted and clickable (and
// reachable by keyboard: Tab or the arrow keys, then Enter or Space), a button for every
// other legal action (a pass, Triathlon's suit exclusions and trump choice), the refused
// action's message; and the in-page bots that play the other seats of a match started here.
import { h } from "./dom.js";
import { cardFace, suitSymbol, suitName } from "./cards.js";
import { matches, withToken, errorText, ConnectError, Code } from "./rpc.js";
import { SUIT_LETTERS } from "./model.js";

// 16 random bytes in hex: another seat must not guess and spend this seat's next id.
// getRandomValues, unlike randomUUID, also works on a page served over plain http.
export function requestId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function submit(matchId, seat, token, seq, action) {
  return matches.submitAction({ matchId, seat, action, expectedSeq: seq, requestId: requestId() }, withToken(token));
}

const ACTION_WORDS = { excludeSuit: "Exclude", chooseTrump: "Trump" };

// The reader's hand and action buttons. `onAct(action)` sends one. `waitingFor`: the words
// for whose turn it is when it is not the reader's.
export function handView(state, refused, onAct, waitingFor = "") {
  const legal = state.legal || [];
  const byCode = new Map(legal.filter((a) => a.kind.case === "play").map((a) => [a.kind.value.code, a]));
  const hand = state.viewer === null ? null : state.hands[state.viewer];
  const seen = new Map();
  const cards = (hand ? hand.cards : []).map((card) => {
    const action = byCode.get(card.code);
    const el = cardFace(card.code, state.spanish, "button");
    const n = seen.get(card.code) || 0; // two Jokers are two cards
    seen.set(card.code, n + 1);
    el.dataset.key = n ? `${card.code}.${n}` : card.code;
    el.type = "button";
    if (action) {
      el.classList.add("legal");
      el.onclick = () => onAct(action);
    } else {
      el.disabled = true;
    }
    return h("span", { className: "slot", "data-key": el.dataset.key }, el);
  });
  const others = legal.filter((a) => a.kind.case !== "play").map((a) => {
    let label;
    if (a.kind.case === "pass") label = ["Pass"];
    else {
      const letter = SUIT_LETTERS[a.kind.value];
      label = [`${ACTION_WORDS[a.kind.case]} `, suitSymbol(letter, state.spanish), ` ${suitName(letter, state.spanish)}`];
    }
    const suit = a.kind.case === "pass" ? "" : SUIT_LETTERS[a.kind.value];
    const button = h("button", { type: "button", className: `action legal ${a.kind.case}`, "data-action": a.kind.case, "data-suit": suit, "data-key": `${a.kind.case}${suit}` }, ...label);
    button.onclick = () => onAct(a);
    return button;
  });
  const prompt = state.over ? "The match is over."
    : legal.length ? (others.length && !byCode.size ? choosePrompt(legal) : "Your turn: play a highlighted card")
    : waitingFor || "Waiting for the others…";
  const area = h("section", { id: "my-hand", className: legal.length ? "my-turn" : "", "data-key": "my-hand" },
    h("div", { className: "prompt" },
      h("p", { id: "turn", "aria-live": "polite" }, prompt),
      others.length ? h("div", { id: "actions" }, ...others) : null,
      h("p", { id: "refused", role: "alert" }, refused || "")),
    h("div", { id: "hand", className: "fan hand", role: "group", "aria-label": "your hand", tabIndex: -1, "data-count": cards.length }, ...cards));
  area.onkeydown = (e) => arrowKeys(area, e);
  return area;
}

function choosePrompt(legal) {
  const kind = legal[0].kind.case;
  if (kind === "excludeSuit") return "Your call: name a suit that will not be trump";
  if (kind === "chooseTrump") return "You are the dealer: choose trump from the two suits left";
  return "Your turn: no card can be played";
}

// Left/right arrows move between the legal cards and buttons.
function arrowKeys(area, e) {
  if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
  const items = [...area.querySelectorAll("button.legal")];
  if (!items.length) return;
  const at = items.indexOf(document.activeElement);
  const next = e.key === "ArrowRight" ? (at + 1) % items.length : (at - 1 + items.length) % items.length;
  items[at < 0 ? 0 : next].focus();
  e.preventDefault();
}

// A refused action in words for the player.
export function refusal(error) {
  if (error instanceof ConnectError) {
    if (error.code === Code.Aborted) return "The table moved on before your action arrived: look again and play.";
    if (error.code === Code.FailedPrecondition) return `Refused: ${error.rawMessage}`;
  }
  return `Refused: ${errorText(error)}`;
}

// An in-page bot for one seat: a random legal action whenever its stream says it is to
// act. Resumes its stream (after the last seq seen) if the connection breaks.
export function runBot(matchId, seat, token, signal, onError) {
  let stream = null; // the open stream's controller: a failed action reopens it
  const act = (seq, legal) => {
    if (!legal.length) return;
    const action = legal[Math.floor(Math.random() * legal.length)];
    submit(matchId, seat, token, seq, action).catch((error) => {
      if (error instanceof ConnectError && error.code === Code.Aborted) return; // stale: a newer prompt follows
      onError(error);
      // No prompt comes again for a turn whose action was lost: a fresh stream's snapshot is one.
      if (stream) stream.abort();
    });
  };
  const loop = async () => {
    for (let attempt = 0; !signal.aborted && attempt < 20; attempt += 1) {
      stream = new AbortController();
      const mine = stream;
      signal.addEventListener("abort", () => mine.abort(), { once: true });
      try {
        for await (const msg of matches.streamEvents({ matchId, seat, afterSeq: 0n }, withToken(token, { signal: mine.signal }))) {
          // Each (re)opened stream starts with a snapshot, whose legal actions are the prompt
          // of the position it shows: a bot taken over from a closed tab, or whose action
          // was lost, acts on it.
          const v = msg.kind.value;
          if (msg.kind.case === "snapshot") { if (!v.over) act(v.seq, v.legalActions); }
          else if (msg.kind.case === "yourTurn") act(v.seq, v.legalActions);
        }
        return;
      } catch (error) {
        if (signal.aborted) return;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  return loop();
}
