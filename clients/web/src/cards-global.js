// The card rendering of cards.js as a global (window.CardarenaCards) for the self-contained
// HTML replay, which inlines dist/cards.js in a classic <script>.
import { cardFace, cardBack, suitSymbol, suitName } from "./cards.js";

globalThis.CardarenaCards = { cardFace, cardBack, suitSymbol, suitName };
