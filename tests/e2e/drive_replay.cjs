// Click through the HTML replay in headless Chromium and print what each step shows, as JSON.
//
// Usage: node drive_replay.cjs PLAYWRIGHT_CORE_DIR CHROMIUM FILE_URL
// Why playwright-core: it drives the system's Chromium (never downloads a browser) with real
// clicks and key presses, which is what a person does with the page.
"use strict";

const [playwrightDir, executablePath, url] = process.argv.slice(2);
const { chromium } = require(playwrightDir);
const { launch, collectErrors } = require("./chromium.cjs");

// Runs inside the page: everything a test compares, read through the page's stable hooks.
function observe() {
  const q = (selector) => document.querySelector(selector);
  const all = (selector, root) => [...(root || document).querySelectorAll(selector)];
  const trick = q("#trick");
  const marker = q("#step");
  return {
    step: Number(marker.dataset.step),
    steps: Number(marker.dataset.steps),
    label: marker.textContent,
    hands: all(".hand").map((hand) => all(".card", hand).map((card) => card.dataset.card)),
    trick: {
      leader: trick.dataset.leader === undefined ? null : Number(trick.dataset.leader),
      winner: trick.dataset.winner === undefined ? null : Number(trick.dataset.winner),
      plays: all(".play", trick).map((play) => [Number(play.dataset.seat), all(".card", play)[0].dataset.card || all(".card", play)[0].textContent]),
      highlighted: all(".play.winner", trick).map((play) => Number(play.dataset.seat)),
      caption: (trick.querySelector(".caption") || {}).textContent || "",
    },
    table: all("#table .card").map((card) => card.dataset.card),
    totals: all("#totals td").map((cell) => cell.textContent),
    scoreRows: all("#scores tbody tr").length,
    winners: q("#winners").textContent,
    prevDisabled: q("#prev").disabled,
    nextDisabled: q("#next").disabled,
  };
}

async function main() {
  const browser = await launch(chromium, executablePath);
  try {
    const page = await browser.newPage();
    const requests = [];
    const errors = [];
    page.on("request", (request) => {
      if (!request.url().startsWith("file:")) requests.push(request.url());
    });
    collectErrors(page, errors);
    const open = async (address) => {
      await page.goto(address);
      await page.waitForSelector('body[data-ready="true"]');
      return page.evaluate(observe);
    };
    const press = async (key) => {
      await page.keyboard.press(key);
      return page.evaluate(observe);
    };
    const clicks = [await open(url)];
    while (!clicks[clicks.length - 1].nextDisabled && clicks.length < 2000) {
      await page.click("#next");
      clicks.push(await page.evaluate(observe));
    }
    await page.click("#prev");
    const afterPrev = await page.evaluate(observe);
    const home = await press("Home");
    await press("ArrowRight");
    const right = await press("ArrowRight");
    const left = await press("ArrowLeft");
    const end = await press("End");
    const deepLink = await open(url + "?step=5");
    console.log(JSON.stringify({ clicks, afterPrev, home, right, left, end, deepLink, requests, errors }));
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
