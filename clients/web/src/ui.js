// Page-wide bits: the error line, the header's crumbs, the readiness flags tests and tools
// wait on, the table's height (what the window leaves below the header), and moving between
// views without a page load (app.js listens for "cardarena:navigate").
import { h } from "./dom.js";
import { errorText } from "./rpc.js";

export const view = () => document.getElementById("view");
export function showError(error) {
  document.getElementById("error").textContent = error ? errorText(error) : "";
}
export function ready() { document.body.dataset.ready = "true"; }
export function flag(name, value) { document.body.dataset[name] = String(value); }
export const STATUS = ["unspecified", "waiting", "running", "ended"];

// The header's second half: where this view is ("Matches › Hexathlon · match 3f2c…").
export function crumbs(...parts) {
  const nav = document.getElementById("crumbs");
  if (nav) nav.replaceChildren(...parts.flat().filter((p) => p !== null && p !== undefined && p !== ""));
}

// A link to another view of the app: followed without a page load.
export function link(href, text, attrs = {}) {
  return h("a", { href, ...attrs }, text);
}

export function go(href, replace = false) {
  window.dispatchEvent(new CustomEvent("cardarena:navigate", { detail: { href, replace } }));
}

// The table's height: the window's, less what is above the table, so that the felt, the
// trick and the reader's hand fit without scrolling (the score sheet goes beside or below).
export function fitTable() {
  const table = document.querySelector(".table-view");
  if (!table) return;
  const top = table.getBoundingClientRect().top + window.scrollY;
  const below = parseFloat(getComputedStyle(document.body).paddingBottom) || 0;
  const height = Math.max(360, window.innerHeight - top - below - 4);
  document.documentElement.style.setProperty("--table-h", `${height}px`);
}
window.addEventListener("resize", fitTable);

// Whether the page may move things about (prefers-reduced-motion turns the animations off,
// and the table then shows each event as soon as it arrives).
export const motion = () => !window.matchMedia("(prefers-reduced-motion: reduce)").matches;

// A short "5 min ago" for a Unix millisecond time, and the full date for its title.
export function ago(ms) {
  const seconds = Math.max(0, (Date.now() - ms) / 1000);
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return new Date(ms).toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}
export const fullDate = (ms) => new Date(ms).toLocaleString();
