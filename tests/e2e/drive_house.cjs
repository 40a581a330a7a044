// Practice against the server's house bots in the web app: start a match from the lobby's
// form, close its tab, take the seat back in new tabs (by the seat's link, by the share link
// and from the spectator's page), then start a second match on a short move clock and close
// its tab for good. Prints what it saw as JSON; the test then follows the second match to its
// end through the server.
//
// Usage: node drive_house.cjs PLAYWRIGHT_CORE_DIR CHROMIUM BASE_URL
"use strict";

const [playwrightDir, executablePath, base] = process.argv.slice(2);
const { chromium } = require(playwrightDir);
const { launch, collectErrors } = require("./chromium.cjs");
const WAIT = { timeout: 30000 };

function observe() {
  return {
    url: location.search,
    match: document.body.dataset.match || "",
    seat: document.body.dataset.seat || "",
    names: [...document.querySelectorAll(".felt .seat")].map((s) => s.textContent),
    hand: document.querySelectorAll("#hand .card").length,
    notice: (document.querySelector(".notice") || {}).textContent || "",
    takeBack: Boolean(document.querySelector("#take-back")),
    error: document.querySelector("#error").textContent,
  };
}

// A new practice match from the lobby's form (Pentathlon, 3 players, its pass round alone);
// `moveMs` not among the form's clocks is added to its list, as a person cannot.
async function practice(page, moveMs) {
  await page.goto(base + "/");
  await page.waitForSelector('body[data-ready="true"]', WAIT);
  await page.selectOption("#game", "pentathlon");
  await page.selectOption("#players", "3");
  await page.fill('[id="opt-rounds"]', "pass");
  await page.$eval("#clock", (el, ms) => {
    if (![...el.options].some((o) => o.value === String(ms))) el.append(new Option(`${ms} ms`, String(ms)));
    el.value = String(ms);
  }, moveMs);
  await page.click("#new-match");
  await page.waitForURL(/seat=0/, WAIT);
  await page.waitForSelector('body[data-ready="true"]', WAIT);
  await page.waitForFunction(() => document.querySelectorAll("#hand .card").length > 0, null, WAIT);
  return page.evaluate(observe);
}

async function reopened(context, query) {
  const page = await context.newPage();
  await page.goto(base + "/" + query);
  await page.waitForSelector('body[data-ready="true"]', WAIT);
  return page;
}

async function main() {
  const browser = await launch(chromium, executablePath, { unthrottled: true });
  const errors = [];
  const out = { errors };
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 950 }, reducedMotion: "reduce" });
    context.on("page", (page) => collectErrors(page, errors));
    const first = await context.newPage();
    out.first = await practice(first, 30000);
    const id = out.first.match;
    out.kept = await first.evaluate((m) => JSON.parse(localStorage.getItem(`cardarena.match.${m}`)), id);
    await first.close();

    const bySeat = await reopened(context, `?match=${encodeURIComponent(id)}&seat=0`);
    await bySeat.waitForFunction(() => document.querySelectorAll("#hand .card").length > 0, null, WAIT);
    out.bySeat = await bySeat.evaluate(observe);
    await bySeat.close();

    const byShare = await reopened(context, `?match=${encodeURIComponent(id)}&seat=any`);
    await byShare.waitForFunction(() => document.querySelectorAll("#hand .card").length > 0, null, WAIT);
    out.byShare = await byShare.evaluate(observe);
    await byShare.close();

    const watching = await reopened(context, `?match=${encodeURIComponent(id)}`);
    await watching.waitForSelector("#take-back", WAIT);
    out.watching = await watching.evaluate(observe);
    await watching.click("#take-back");
    await watching.waitForURL(/seat=0/, WAIT);
    await watching.waitForFunction(() => document.querySelectorAll("#hand .card").length > 0, null, WAIT);
    out.takenBack = await watching.evaluate(observe);
    await watching.close();

    const second = await context.newPage();
    out.second = await practice(second, 200);
    await second.close(); // for good: the match must end without it
    await context.close();
  } catch (error) {
    out.failure = String(error && error.stack || error);
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
}

main();
