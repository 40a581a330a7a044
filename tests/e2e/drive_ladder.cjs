// Follow a ladder in the web app: find it in the lobby's list (and check the lobby's match
// list is newest first), open its page, read the board, open a held-back match of a group
// still being played (the page the server's refusal leads to, and back to the ladder), open
// a counted match's replay, and measure the page on a laptop and a phone: no sideways
// scrolling, every panel within the window. Prints what it saw as JSON.
//
// Usage: node drive_ladder.cjs PLAYWRIGHT_CORE_DIR CHROMIUM BASE_URL SHOTS_DIR LADDER_ID HELD_MATCH_ID
"use strict";

const path = require("path");
const [playwrightDir, executablePath, base, shots, ladderId, heldId] = process.argv.slice(2);
const { chromium } = require(playwrightDir);
const { launch, collectErrors } = require("./chromium.cjs");
const WAIT = { timeout: 60000 };
const SIZES = [[1366, 768, "ladder"], [390, 844, "ladder-phone"]];

function observe() {
  const all = (s) => [...document.querySelectorAll(s)];
  const text = (el, s) => ((el.querySelector(s) || {}).textContent || "").trim();
  const width = window.innerWidth;
  return {
    status: document.body.dataset.ladder || "",
    counted: Number(document.body.dataset.ladderCounted || "-1"),
    title: text(document, "#ladder-title"),
    progress: text(document, "#ladder-progress"),
    board: all("#ladder-board tbody tr").map((r) => ({
      player: r.dataset.player, state: r.dataset.state, rating: text(r, "td.ordinal"),
      games: text(r, "td[data-label=games]"), mean: text(r, "td.mean"), seen: text(r, "td.seen"),
    })),
    playing: all("#ladder-playing tbody tr").map((r) => ({ id: r.dataset.id, text: r.textContent, held: Boolean(r.querySelector("a.held")) })),
    recent: all("#ladder-recent tbody tr").map((r) => ({ id: r.dataset.id, replay: Boolean(r.querySelector("a.replay")) })),
    error: document.querySelector("#error").textContent,
    // Geometry: the page never scrolls sideways, and no panel is wider than its box or the window.
    scrollWidth: document.documentElement.scrollWidth,
    width,
    panels: all("#ladder .card-panel").map((p) => ({
      id: p.id, scroll: p.scrollWidth, client: p.clientWidth, right: Math.round(p.getBoundingClientRect().right),
    })),
    rowsPastEdge: all("#ladder tr").filter((r) => r.getBoundingClientRect().right > width + 1).length,
  };
}

async function main() {
  const browser = await launch(chromium, executablePath, { unthrottled: true });
  const errors = [];
  const out = { errors, sizes: {} };
  try {
    const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
    collectErrors(page, errors);
    await page.goto(base + "/");
    await page.waitForSelector('body[data-ready="true"]', WAIT);
    out.lobby = await page.evaluate(() => ({
      ladders: [...document.querySelectorAll("#ladders tr.ladder")].map((r) => r.dataset.id),
      created: [...document.querySelectorAll("#matches tr.match")].map((r) => Number(r.dataset.created)),
      page: (document.querySelector("#page") || {}).textContent || "",
      scrollWidth: document.documentElement.scrollWidth,
      width: window.innerWidth,
    }));
    await page.click(`#ladders tr.ladder[data-id="${ladderId}"] a`);
    await page.waitForSelector("#ladder-board tbody tr", WAIT);
    out.url = await page.evaluate(() => location.search);
    // The held-back match, then the page its link leads to: the server's words and the way back.
    const held = `#ladder-playing a.held[href="?match=${heldId}"]`;
    await page.waitForSelector(held, WAIT);
    out.first = await page.evaluate(observe);
    await page.click(held);
    await page.waitForSelector("#held-back", WAIT);
    out.heldPage = await page.evaluate(() => ({
      words: document.querySelector("#held-words").textContent,
      follow: (document.querySelector("#held-follow") || { getAttribute: () => "" }).getAttribute("href"),
      url: location.search,
    }));
    await page.click("#held-follow");
    await page.waitForSelector("#ladder-board tbody tr", WAIT);
    out.back = await page.evaluate(() => location.search);
    // A counted match's replay.
    await page.waitForSelector("#ladder-recent a.replay", WAIT);
    await page.click("#ladder-recent a.replay >> nth=0");
    await page.waitForFunction(() => document.querySelector("#verdict") && document.querySelector("#verdict").dataset.ok !== undefined, null, WAIT);
    out.replay = await page.evaluate(() => ({ ok: document.querySelector("#verdict").dataset.ok, url: location.search }));
    await page.close();
    for (const [width, height, name] of SIZES) {
      const sized = await browser.newPage({ viewport: { width, height } });
      collectErrors(sized, errors);
      await sized.goto(`${base}/?ladder=${ladderId}`);
      await sized.waitForSelector("#ladder-board tbody tr", WAIT);
      await sized.waitForSelector(held, WAIT);
      out.sizes[name] = await sized.evaluate(observe);
      await sized.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
      await sized.goto(`${base}/`);
      await sized.waitForSelector('body[data-ready="true"]', WAIT);
      out.sizes[name].lobby = await sized.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth }));
      await sized.close();
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((error) => { console.error(error); process.exit(1); });
