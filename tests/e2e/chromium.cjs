// What the driver scripts share: headless Chromium launched the way the end-to-end tests run
// it, and a page's errors (uncaught, or written with console.error) collected in a list.
"use strict";

const QUIET = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync"];
// Two pages at once (a seat and a spectator): neither is a throttled background tab.
const UNTHROTTLED = ["--disable-background-timer-throttling", "--disable-renderer-backgrounding",
  "--disable-backgrounding-occluded-windows"];

function launch(chromium, executablePath, { unthrottled = false } = {}) {
  return chromium.launch({
    executablePath, headless: true, args: unthrottled ? [...QUIET, ...UNTHROTTLED] : QUIET,
  });
}

function collectErrors(page, errors) {
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
}

// Where to click a card of a hand: its top left corner, which shows however tightly the
// hand's cards overlap (their middle is under the next card).
const CORNER = { x: 6, y: 10 };

module.exports = { launch, collectErrors, CORNER };
