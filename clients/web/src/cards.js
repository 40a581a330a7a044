// Card faces, card backs and suit symbols: the one rendering of a card that the live app and
// the self-contained HTML replay (cardarena replay --html) share. A card is known by its
// RULES.md code ("QC", "10H", "6O", "JK") and its deck: in the Spanish deck "C" is copas,
// not clubs, and the four Spanish suits are drawn as themselves (a gold coin, a red cup, a
// blue sword, a green cudgel), not as French pips.
//
// No library, no innerHTML from data: elements are built node by node, so a name or a code
// can never become markup.

const SVG = "http://www.w3.org/2000/svg";

// French suits: Unicode pips. Spanish suits: small drawings (no Unicode symbol exists).
export const FRENCH = {
  C: { name: "clubs", pip: "\u2663", colour: "black" },
  D: { name: "diamonds", pip: "\u2666", colour: "red" },
  H: { name: "hearts", pip: "\u2665", colour: "red" },
  S: { name: "spades", pip: "\u2660", colour: "black" },
};
export const SPANISH = {
  O: { name: "oros", colour: "gold" },
  C: { name: "copas", colour: "red" },
  E: { name: "espadas", colour: "blue" },
  B: { name: "bastos", colour: "green" },
};
const RANKS = { 11: "J", 12: "Q", 13: "K", 14: "A" };

// Each drawing on a 24x24 grid, as [element, attributes] parts.
const DRAWINGS = {
  // oros: a gold coin with a rim and a flower in the middle
  O: [
    ["circle", { cx: 12, cy: 12, r: 10, fill: "#e8b923", stroke: "#8a6500", "stroke-width": 1.6 }],
    ["circle", { cx: 12, cy: 12, r: 5.6, fill: "none", stroke: "#8a6500", "stroke-width": 1.2 }],
    ["circle", { cx: 12, cy: 12, r: 1.8, fill: "#8a6500" }],
  ],
  // copas: a red chalice (bowl, stem, foot)
  C: [
    ["path", { d: "M4 3h16c0 6-3 9.5-8 9.5S4 9 4 3z", fill: "#c62828", stroke: "#7f0000", "stroke-width": 1.2 }],
    ["rect", { x: 10.6, y: 12.5, width: 2.8, height: 6, fill: "#e8b923", stroke: "#8a6500", "stroke-width": 0.8 }],
    ["path", { d: "M6.5 21.5c0-2.2 2.5-3 5.5-3s5.5.8 5.5 3z", fill: "#e8b923", stroke: "#8a6500", "stroke-width": 1 }],
  ],
  // espadas: a blue sword, point up, with a cross guard and a pommel
  E: [
    ["path", { d: "M12 1.5l2.2 3.5v11h-4.4v-11z", fill: "#90a4c8", stroke: "#1a3a78", "stroke-width": 1.1 }],
    ["rect", { x: 5.5, y: 15.6, width: 13, height: 2.4, rx: 1, fill: "#1f4fa0" }],
    ["rect", { x: 10.9, y: 18, width: 2.2, height: 3.2, fill: "#1f4fa0" }],
    ["circle", { cx: 12, cy: 22, r: 1.6, fill: "#e8b923" }],
  ],
  // bastos: a green knotted cudgel, thick end up
  B: [
    ["path", { d: "M9.5 2.5c3-1.2 6 .2 6.2 3.2L14 21.5c-.1 1-1.9 1-2 0L8.2 6.2C7.9 4.6 8.4 3 9.5 2.5z", fill: "#4e8a3a", stroke: "#1e4d12", "stroke-width": 1.1 }],
    ["circle", { cx: 9.8, cy: 8.5, r: 1.1, fill: "#a5d48c" }],
    ["circle", { cx: 14.4, cy: 11.5, r: 1.1, fill: "#a5d48c" }],
    ["circle", { cx: 11, cy: 15, r: 1, fill: "#a5d48c" }],
  ],
};

// "10H" -> { rank: "10", suit: "H" }; "JK" -> the Joker.
export function parseCode(code) {
  if (code === "JK") return { rank: "", suit: "J" };
  return { rank: code.slice(0, -1), suit: code.slice(-1) };
}

// Whether a protobuf Suit number is a Spanish suit (SUIT_OROS..SUIT_BASTOS = 5..8).
export function spanishSuit(suit) {
  return suit >= 5 && suit <= 8;
}

// The suit's name in words, for captions and screen readers.
export function suitName(letter, spanish) {
  if (letter === "J") return "Joker";
  const table = spanish ? SPANISH : FRENCH;
  return table[letter] ? table[letter].name : letter;
}

// A suit symbol: a pip (French) or a small drawing (Spanish), sized by CSS (.pip).
export function suitSymbol(letter, spanish) {
  if (letter === "J") {
    const star = document.createElement("span");
    star.className = "pip joker";
    star.textContent = "\u2605";
    return star;
  }
  if (spanish && DRAWINGS[letter]) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("class", "pip");
    svg.setAttribute("aria-hidden", "true");
    for (const [tag, attrs] of DRAWINGS[letter]) {
      const part = document.createElementNS(SVG, tag);
      for (const [k, v] of Object.entries(attrs)) part.setAttribute(k, String(v));
      svg.append(part);
    }
    return svg;
  }
  const pip = document.createElement("span");
  pip.className = "pip";
  pip.textContent = FRENCH[letter] ? FRENCH[letter].pip : letter;
  return pip;
}

function rankText(rank, spanish) {
  if (spanish) return rank;
  return RANKS[rank] || rank;
}

// A card face: rank and suit in two corners, the suit large in the middle. The element is a
// <span> unless `tag` says otherwise (a <button> for a playable card); data-card holds the
// code, data-suit the suit letter, and the classes say the deck and the colour.
export function cardFace(code, spanish, tag = "span") {
  const { rank, suit } = parseCode(code);
  const el = document.createElement(tag);
  const deck = spanish ? SPANISH : FRENCH;
  const colour = suit === "J" ? "purple" : deck[suit] ? deck[suit].colour : "black";
  el.className = `card face ${spanish ? "spanish" : "french"} c-${colour} s-${suit}`;
  el.dataset.card = code;
  el.dataset.suit = suit;
  const shown = suit === "J" ? "Joker" : rankText(rank, spanish);
  el.title = suit === "J" ? "Joker" : `${shown} of ${suitName(suit, spanish)}`;
  el.setAttribute("aria-label", el.title);
  for (const corner of ["tl", "br"]) {
    const c = document.createElement("span");
    c.className = `corner ${corner}`;
    const r = document.createElement("b");
    r.textContent = suit === "J" ? "JK" : shown;
    c.append(r, suitSymbol(suit, spanish));
    el.append(c);
  }
  const centre = document.createElement("span");
  centre.className = "centre";
  centre.append(suitSymbol(suit, spanish));
  el.append(centre);
  return el;
}

// The back of a card (a hidden card): no code, nothing to read.
export function cardBack() {
  const el = document.createElement("span");
  el.className = "card back";
  el.setAttribute("aria-hidden", "true");
  return el;
}
