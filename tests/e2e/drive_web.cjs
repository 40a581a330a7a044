// Play a whole match against the in-page bots through the web app (gRPC-Web), watch it as a
// spectator in a second page, then open its log from the match list; print what was seen.
//
// Usage: node drive_web.cjs PLAYWRIGHT_CORE_DIR CHROMIUM BASE_URL OPTIONS_JSON
"use strict";

const [playwrightDir, executablePath, base, options] = process.argv.slice(2);
const { chromium } = require(playwrightDir);

function observe() {
  const all = (selector) => [...document.querySelectorAll(selector)];
  return {
    over: document.body.dataset.over === "true",
    match: document.body.dataset.match || "",
    hands: all("#hands .hand").map((hand) => ({
      hidden: hand.dataset.hidden === "true",
      size: Number(hand.dataset.size),
      cards: [...hand.querySelectorAll(".card")].map((c) => c.dataset.card),
    })),
    myHand: all("#hand .card").map((c) => c.dataset.card),
    legal: all("#hand .legal").length,
    totals: all("#totals td").map((c) => c.textContent),
    winners: (document.querySelector("#winners") || {}).textContent || "",
    error: document.querySelector("#error").textContent,
  };
}

async function main() {
  const browser = await chromium.launch({
    executablePath, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  const errors = [];
  const watchErrors = (page) => {
    page.on("pageerror", (error) => errors.push(String(error)));
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  };
  try {
    const player = await browser.newPage();
    watchErrors(player);
    await player.goto(base + "/");
    await player.waitForSelector('body[data-ready="true"]');
    await player.fill("#game", "pentathlon");
    await player.fill("#players", "3");
    await player.fill("#options", options);
    await player.click("#new-match");
    await player.waitForSelector("body[data-match]");
    const match = await player.evaluate(() => document.body.dataset.match);

    const spectator = await browser.newPage();
    watchErrors(spectator);
    await spectator.goto(`${base}/?watch=${match}`);
    await spectator.waitForFunction(() => document.querySelectorAll("#hands .hand").length === 3);
    const watching = await spectator.evaluate(observe);

    let clicks = 0;
    for (; clicks < 500; clicks += 1) {
      await player.waitForFunction(() => document.body.dataset.over === "true" ||
        document.querySelector("#hand .legal:not([disabled])") !== null ||
        document.querySelector("#error").textContent !== "", null, { timeout: 20000 });
      const seen = await player.evaluate(observe);
      if (seen.over || seen.error) break;
      await player.click("#hand .legal:not([disabled])");
    }
    const final = await player.evaluate(observe);
    await spectator.waitForSelector('body[data-over="true"]', { timeout: 20000 });
    const watchedEnd = await spectator.evaluate(observe);

    await spectator.goto(base + "/");
    await spectator.waitForSelector('body[data-ready="true"]');
    const row = await spectator.evaluate((id) => {
      const tr = document.querySelector(`tr.match[data-id="${id}"]`);
      return tr ? tr.dataset.status : null;
    }, match);
    await spectator.click(`tr.match[data-id="${match}"] a`);
    await spectator.waitForSelector('body[data-ready="true"] #step');
    let steps = 0;
    while (!(await spectator.isDisabled("#next")) && steps < 5000) {
      await spectator.click("#next");
      steps += 1;
    }
    const log = await spectator.evaluate(() => ({
      step: Number(document.querySelector("#step").dataset.step),
      steps: Number(document.querySelector("#step").dataset.steps),
      totals: [...document.querySelectorAll("#totals td")].map((c) => c.textContent),
    }));
    console.log(JSON.stringify({ match, watching, clicks, final, watchedEnd, row, log, errors }));
  } finally {
    await browser.close();
  }
}

main().catch((error) => { console.error(error); process.exit(1); });
