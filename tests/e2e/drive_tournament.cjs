// Follow a hosted tournament in the web app: find it in the lobby's list, open its page,
// watch the standings, crosstable and matches until it ends (following one match live if one
// is in play when the page opens), then open a finished match's replay from the page.
// Prints what it saw as JSON.
//
// Usage: node drive_tournament.cjs PLAYWRIGHT_CORE_DIR CHROMIUM BASE_URL SHOTS_DIR
"use strict";

const path = require("path");
const [playwrightDir, executablePath, base, shots] = process.argv.slice(2);
const { chromium } = require(playwrightDir);
const { launch, collectErrors } = require("./chromium.cjs");
const WAIT = { timeout: 60000 };

function observe() {
  const all = (s) => [...document.querySelectorAll(s)];
  return {
    status: document.body.dataset.tournament || "",
    progress: (document.querySelector("#progress") || {}).textContent || "",
    standings: all("#standings tbody tr").map((r) => r.dataset.entrant),
    crossRows: all("#crosstable tbody tr").length,
    crossCells: all("#crosstable tbody td").map((c) => c.textContent),
    matches: all("#tournament-matches tbody tr").map((r) => ({ id: r.dataset.id, link: (r.querySelector("a") || {}).className || "" })),
    error: document.querySelector("#error").textContent,
  };
}

async function main() {
  const browser = await launch(chromium, executablePath, { unthrottled: true });
  const errors = [];
  const out = { errors };
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 950 } });
    collectErrors(page, errors);
    for (let i = 0; i < 100; i += 1) {
      await page.goto(base + "/");
      await page.waitForSelector('body[data-ready="true"]', WAIT);
      if (await page.$("#tournaments tr.tournament a")) break;
      await page.waitForTimeout(200);
    }
    await page.click("#tournaments tr.tournament a");
    await page.waitForSelector("#standings", WAIT);
    out.first = await page.evaluate(observe);
    const live = await page.$("#tournament-matches a.watch");
    if (live) {
      const href = await live.getAttribute("href");
      const table = await browser.newPage({ viewport: { width: 1400, height: 950 } });
      await table.goto(base + "/" + href);
      await table.waitForSelector(".felt", WAIT);
      out.live = await table.evaluate(() => ({ seats: document.querySelectorAll(".felt .seat").length, match: document.body.dataset.match }));
      await table.close();
    }
    await page.waitForSelector('body[data-tournament="ended"]', WAIT);
    await page.waitForFunction(() => !document.querySelector("#tournament-matches a.watch"), null, WAIT);
    out.end = await page.evaluate(observe);
    await page.screenshot({ path: path.join(shots, "tournament.png"), fullPage: true });
    await page.click("#tournament-matches a.replay >> nth=0");
    await page.waitForSelector('body[data-ready="true"]', WAIT);
    await page.waitForFunction(() => document.querySelector("#verdict") && document.querySelector("#verdict").dataset.ok !== undefined, null, WAIT);
    out.replay = await page.evaluate(() => ({ ok: document.querySelector("#verdict").dataset.ok, steps: Number(document.querySelector("#step").dataset.steps), url: location.search }));
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((error) => { console.error(error); process.exit(1); });
