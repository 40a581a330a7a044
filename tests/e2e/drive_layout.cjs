// The table's layout at each screen size of the plan: for each stage (a trick, a Fan Tan
// layout, a Crazy Sixes hand with dead piles), start a practice match from the lobby, play
// the first highlighted card until the stage is reached on this seat's turn, then measure
// where everything is (the hand's and the trick's boxes, the seats, the rows, the page's
// width) and take a screenshot. Then the ending, the lobby and an error page at that size.
// Prints what it measured as JSON.
//
// Usage: node drive_layout.cjs PLAYWRIGHT_CORE_DIR CHROMIUM BASE_URL SHOTS_DIR PLAN_JSON
"use strict";

const path = require("path");
const [playwrightDir, executablePath, base, shots, planJson] = process.argv.slice(2);
const { chromium } = require(playwrightDir);
const { launch, collectErrors, CORNER } = require("./chromium.cjs");
const plan = JSON.parse(planJson);
const WAIT = { timeout: 30000 };
const POLL = { timeout: 30000, polling: 50 };

// Runs in the page: every box that matters, in CSS pixels of the viewport.
function measure() {
  const box = (el) => { const r = el.getBoundingClientRect(); return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }; };
  const all = (s) => [...document.querySelectorAll(s)];
  const felt = document.querySelector(".felt");
  return {
    viewport: { width: window.innerWidth, height: window.innerHeight },
    page: { scrollWidth: document.documentElement.scrollWidth, scrollY: window.scrollY },
    felt: felt ? box(felt) : null,
    hand: all("#hand .card").map(box),
    handArea: document.querySelector("#my-hand") ? box(document.querySelector("#my-hand")) : null,
    trick: all(".felt .played .card").map(box),
    actions: all("#actions button").map(box),
    rows: all("#table .row .card").map(box),
    seats: all(".felt .seat").map((s) => ({ seat: Number(s.dataset.seat), box: box(s), plate: box(s.querySelector(".nameplate")) })),
    dead: all(".felt .seat .dead .card").map(box),
    deadCount: all(".felt .seat .dead .card").length,
    ranks: all("#hand .card .corner.tl b, .felt .seat .fan.mini .card .corner.tl b").map((b) => {
      // what of the rank shows: its box, less what the next card in its row covers
      const card = b.closest(".slot"), next = card.nextElementSibling;
      const r = b.getBoundingClientRect();
      const n = next && next.firstElementChild.getBoundingClientRect();
      const sameRow = n && Math.abs(n.top - card.firstElementChild.getBoundingClientRect().top) < 2;
      const visible = sameRow ? Math.min(r.right, n.left) - r.left : r.width;
      return { text: b.textContent, width: r.width, visible };
    }),
    legal: all("#my-hand button.legal").length,
    round: (document.querySelector("#round-title") || {}).textContent || "",
  };
}

async function newMatch(page, entry) {
  await page.goto(base + "/");
  await page.waitForSelector('body[data-ready="true"]', WAIT);
  await page.selectOption("#game", entry.game);
  if (entry.players) await page.selectOption("#players", String(entry.players));
  for (const [name, value] of Object.entries(entry.fields || {})) {
    const selector = `[id="opt-${name}"]`;
    if (await page.$eval(selector, (el) => el.tagName === "SELECT")) await page.selectOption(selector, String(value));
    else await page.fill(selector, String(value));
  }
  await page.click("#new-match");
  await page.waitForURL(/seat=0/, WAIT);
  await page.waitForSelector('body[data-ready="true"]', WAIT);
}

// Is the stage reached? (run in the page, on this seat's turn)
function reached(stage) {
  const n = (s) => document.querySelectorAll(s).length;
  if (stage === "trick") return n(".felt .played .card") >= 2;
  if (stage === "fantan") return n("#table .row .card") >= 14 && n("#table .row") >= 3;
  if (stage === "sixes") return n(".felt .seat .dead .card") >= 3 && n("#table .row .card") >= 8;
  if (stage === "call") return n("#actions button.legal") >= 2; // Triathlon: exclude a suit, or choose trump
  return true;
}

async function playTo(page, entry) {
  for (let moves = 0; moves < 400; moves += 1) {
    await page.waitForFunction(() => document.body.dataset.over === "true" || Number(document.body.dataset.legal) > 0, null, POLL);
    if (await page.evaluate(() => document.body.dataset.over === "true")) return false;
    if (moves >= (entry.minMoves || 0) && await page.evaluate(reached, entry.stage)) return true;
    try {
      await page.click("#my-hand button.legal >> nth=0", { timeout: 2000, position: CORNER });
    } catch (error) { /* redrawn under the pointer: look again */ }
  }
  return false;
}

// Updated in place: the cards still in the hand are the same elements after a move, and
// so is everything on the table when the view is redrawn. The last trick on demand.
async function extras(page, size) {
  const out = {};
  await page.evaluate(() => {
    for (const el of document.querySelectorAll("#hand .card, .felt .played")) el.__kept = true;
  });
  await page.click("#my-hand button.legal >> nth=0", { position: CORNER });
  await page.waitForFunction(() => document.body.dataset.over === "true" || Number(document.body.dataset.legal) > 0, null, POLL);
  out.handKept = await page.evaluate(() => [...document.querySelectorAll("#hand .card")].map((c) => Boolean(c.__kept)));
  // On to a turn after a trick has been won.
  for (let i = 0; i < 40; i += 1) {
    if (await page.evaluate(() => !document.querySelector("#show-last").disabled && Number(document.body.dataset.legal) > 0)) break;
    try { await page.click("#my-hand button.legal >> nth=0", { timeout: 2000, position: CORNER }); } catch (error) { /* again */ }
    await page.waitForFunction(() => document.body.dataset.over === "true" || Number(document.body.dataset.legal) > 0, null, POLL);
  }
  await page.evaluate(() => { for (const el of document.querySelectorAll("#hand .card, .felt .played, .felt .seat")) el.__kept = true; });
  await page.click("#show-last");
  await page.waitForSelector("#last-trick", WAIT);
  out.last = await page.evaluate(() => ({
    cards: document.querySelectorAll("#last-trick .card").length,
    text: document.querySelector("#last-trick p").textContent,
    kept: [...document.querySelectorAll("#hand .card, .felt .played, .felt .seat")].every((el) => el.__kept),
  }));
  await page.screenshot({ path: path.join(shots, `layout-${size.name}-last-trick.png`) });
  await page.keyboard.press("l");
  out.closed = await page.evaluate(() => !document.querySelector("#last-trick"));
  return out;
}

// The log of a match still being played: a page that says so, and a link to watch it live.
async function runningLog(context, page) {
  const match = await page.evaluate(() => document.body.dataset.match);
  const other = await context.newPage();
  await other.goto(`${base}/?log=${match}`);
  await other.waitForSelector('body[data-ready="true"]', WAIT);
  const out = await other.evaluate(() => ({ kind: document.body.dataset.errorPage || "", title: (document.querySelector("#error-page h2") || {}).textContent || "" }));
  await other.screenshot({ path: path.join(shots, "layout-running-log.png") });
  await other.click("#watch-live");
  await other.waitForSelector('body[data-ready="true"]', WAIT);
  await other.waitForSelector(".felt .seat", WAIT);
  out.watching = await other.evaluate(() => ({ url: location.search, seats: document.querySelectorAll(".felt .seat").length }));
  await other.close();
  return out;
}

// A practice match goes on in a new tab on its link once the first is closed: the seat is
// the same (its token kept), and the bots play on from the new tab.
async function takeOver(context) {
  const first = await context.newPage();
  await newMatch(first, { game: "pentathlon", players: 4, fields: { rounds: "pass" } });
  const url = first.url();
  const turn = (page) => page.waitForFunction(() => Number(document.body.dataset.legal) > 0, null, POLL);
  await turn(first);
  await first.click("#my-hand button.legal >> nth=0", { position: CORNER });
  await turn(first);
  const second = await context.newPage();
  await second.goto(url);
  await second.waitForSelector('body[data-ready="true"]', WAIT);
  await first.close();
  const out = { seat: await second.evaluate(() => document.body.dataset.seat || "") };
  await turn(second);
  const before = await second.evaluate(() => Number(document.body.dataset.seq));
  // This seat plays whenever it is its turn (its card may end a trick it wins, and it leads
  // again with no bot having played) until the log has moved six entries on: a card, a
  // trick's end and a lead of this seat's at most, so at least three of the bots' (the old
  // tab's bots are gone: only the new tab's can have played them). Bounded.
  const deadline = Date.now() + POLL.timeout;
  let clicked = -1; // the entry last played on: the hand may show that turn a moment longer
  while (Date.now() < deadline) {
    const now = await second.evaluate(() => ({ seq: Number(document.body.dataset.seq), legal: Number(document.body.dataset.legal) }));
    if (now.seq >= before + 6) break;
    if (now.legal > 0 && now.seq !== clicked) {
      clicked = now.seq;
      try { await second.click("#my-hand button.legal >> nth=0", { timeout: 2000, position: CORNER }); } catch (error) { /* again */ }
    }
    await second.waitForTimeout(50);
  }
  out.moved = (await second.evaluate(() => Number(document.body.dataset.seq))) - before;
  await second.close();
  return out;
}

async function main() {
  const browser = await launch(chromium, executablePath);
  const errors = [];
  const out = { sizes: [], errors };
  try {
    for (const size of plan.sizes) {
      const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, reducedMotion: "reduce" });
      const page = await context.newPage();
      collectErrors(page, errors);
      const record = { name: size.name, stages: [] };
      for (const entry of plan.stages) {
        let ok = false, tries = 0;
        for (; !ok && tries < 4; tries += 1) {
          await newMatch(page, entry);
          ok = await playTo(page, entry);
        }
        // A click may have scrolled the page (the driver's, to reach a card): measure from the
        // top, where a person's table starts.
        await page.evaluate(() => window.scrollTo(0, 0));
        const seen = await page.evaluate(measure);
        const shot = path.join(shots, `layout-${size.name}-${entry.stage}.png`);
        await page.screenshot({ path: shot });
        record.stages.push({ stage: entry.stage, reached: ok, tries, shot, ...seen });
        if (size.extras && entry.stage === "trick") record.extras = await extras(page, size);
        if (size.extras && entry.stage === "fantan") record.runningLog = await runningLog(context, page);
        if (entry.stage === plan.stages[plan.stages.length - 1].stage) {
          // Play this one out: the ending.
          for (;;) {
            await page.waitForFunction(() => document.body.dataset.over === "true" || Number(document.body.dataset.legal) > 0, null, POLL);
            if (await page.evaluate(() => document.body.dataset.over === "true")) break;
            try { await page.click("#my-hand button.legal >> nth=0", { timeout: 2000, position: CORNER }); } catch (error) { /* again */ }
          }
          await page.waitForSelector("#ending", WAIT);
          record.ending = await page.evaluate(() => ({
            placings: [...document.querySelectorAll("#placings li")].map((li) => li.textContent),
            buttons: [...document.querySelectorAll("#ending .buttons > *")].map((b) => b.id || b.textContent),
            scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth,
          }));
          await page.screenshot({ path: path.join(shots, `layout-${size.name}-ending.png`) });
          // Its replay, a few plays in: every hand face up in its seat.
          await page.click("#replay-link");
          await page.waitForSelector('body[data-ready="true"]', WAIT);
          await page.click("#first");
          for (let i = 0; i < 6; i += 1) await page.click("#next-trick");
          await page.evaluate(() => window.scrollTo(0, 0));
          record.replay = await page.evaluate(measure);
          record.replay.faces = await page.evaluate(() => document.querySelectorAll(".felt .seat .fan.mini .card").length);
          record.replay.url = page.url();
          await page.screenshot({ path: path.join(shots, `layout-${size.name}-replay.png`) });
        }
      }
      await page.goto(base + "/");
      await page.waitForSelector('body[data-ready="true"]', WAIT);
      record.lobby = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth,
        rows: [...document.querySelectorAll("#matches tr.match")].map((r) => Number(r.dataset.created)),
      }));
      await page.screenshot({ path: path.join(shots, `layout-${size.name}-lobby.png`) });
      await page.goto(base + "/?match=nosuchmatch");
      await page.waitForSelector('body[data-ready="true"]', WAIT);
      record.unknown = await page.evaluate(() => ({
        kind: document.body.dataset.errorPage || "", text: (document.querySelector("#error-page") || {}).textContent || "",
        links: [...document.querySelectorAll("#error-page a")].map((a) => a.getAttribute("href")),
      }));
      if (size.extras) record.takeOver = await takeOver(context);
      await page.goto(base + "/?tournament=nosuchtournament");
      await page.waitForSelector('body[data-ready="true"]', WAIT);
      record.unknownTournament = await page.evaluate(() => document.body.dataset.errorPage || "");
      out.sizes.push(record);
      await context.close();
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((error) => { console.error(error); process.exit(1); });
