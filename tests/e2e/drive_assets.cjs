// What the browser fetches: open the lobby in a fresh browser (every byte of script it
// transfers, compressed), move to another view by a link (no page load), then open a
// second tab on another view (a new page load: the page is asked again, its script and
// style sheet must come from the cache). Prints what it saw as JSON.
//
// Usage: node drive_assets.cjs PLAYWRIGHT_CORE_DIR CHROMIUM BASE_URL
"use strict";

const [playwrightDir, executablePath, base] = process.argv.slice(2);
const { chromium } = require(playwrightDir);
const { launch, collectErrors } = require("./chromium.cjs");
const WAIT = { timeout: 30000 };

// Every response a page gets, through the DevTools protocol: whether it came over the
// network or from the cache, and how many bytes crossed the wire.
async function track(context, page) {
  const seen = new Map();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.setCacheDisabled", { cacheDisabled: false });
  cdp.on("Network.requestWillBeSent", (e) => seen.set(e.requestId, { url: e.request.url, type: e.type, cached: false, status: 0, bytes: 0, encoding: "" }));
  cdp.on("Network.requestServedFromCache", (e) => { if (seen.has(e.requestId)) seen.get(e.requestId).cached = true; });
  cdp.on("Network.responseReceived", (e) => {
    const r = seen.get(e.requestId);
    if (!r) return;
    r.status = e.response.status;
    r.cached = r.cached || e.response.fromDiskCache || e.response.fromPrefetchCache || false;
    const headers = Object.fromEntries(Object.entries(e.response.headers).map(([k, v]) => [k.toLowerCase(), v]));
    r.encoding = headers["content-encoding"] || "";
    r.cacheControl = headers["cache-control"] || "";
  });
  cdp.on("Network.loadingFinished", (e) => { const r = seen.get(e.requestId); if (r) r.bytes = e.encodedDataLength; });
  return () => [...seen.values()].filter((r) => r.url.startsWith(base));
}

async function main() {
  const browser = await launch(chromium, executablePath);
  const errors = [];
  const out = { errors };
  try {
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, reducedMotion: "reduce" });
    const page = await context.newPage();
    collectErrors(page, errors);
    const first = await track(context, page);
    await page.goto(base + "/");
    await page.waitForSelector('body[data-ready="true"]', WAIT);
    await page.waitForTimeout(300);
    out.first = first();
    await page.evaluate(() => { window.__sameDocument = true; });
    // A view change by a link: no page load.
    await page.click("#matches a.watch");
    await page.waitForSelector('body[data-ready="true"]', WAIT);
    out.linked = { same: await page.evaluate(() => window.__sameDocument === true), url: page.url(), requests: first().length - out.first.length };
    // The match waits for its players: how many seats are open, and the link to share.
    await page.waitForSelector("#open-seats", WAIT);
    out.waiting = await page.evaluate(() => ({ open: Number(document.querySelector("#open-seats").dataset.open), link: document.querySelector("#share-link").value }));
    // A second page load, in a new tab, from the shared link: the page again, nothing else
    // over the network; the link took the next open seat.
    const second = await context.newPage();
    collectErrors(second, errors);
    const again = await track(context, second);
    await second.goto(out.waiting.link);
    await second.waitForSelector('body[data-ready="true"]', WAIT);
    await second.waitForFunction(() => document.querySelector("#open-seats") && Number(document.querySelector("#open-seats").dataset.open) === 3, null, WAIT);
    await second.waitForTimeout(300);
    out.second = again();
    out.joined = await second.evaluate(() => ({ url: location.search, seat: document.body.dataset.seat, open: Number(document.querySelector("#open-seats").dataset.open) }));
    // The first page sees the seat taken.
    await page.waitForFunction(() => Number(document.querySelector("#open-seats").dataset.open) === 3, null, WAIT);
    // The seat's link in yet another tab: the same seat, not a spectator.
    const third = await context.newPage();
    collectErrors(third, errors);
    await third.goto(`${base}/${out.joined.url}`);
    await third.waitForSelector('body[data-ready="true"]', WAIT);
    out.again = await third.evaluate(() => ({ seat: document.body.dataset.seat || "", notice: (document.querySelector(".notice") || {}).textContent || "" }));
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((error) => { console.error(error); process.exit(1); });
