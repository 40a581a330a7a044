// Play a full match of each game in the plan through the web app's table by clicking (a few
// moves by keyboard), reload one match mid-way and carry on, watch one live as a spectator,
// then step the last match's replay by trick and jump to a round from its score sheet.
// Screenshots go to SHOTS_DIR. Prints what it saw as JSON.
//
// Usage: node drive_table.cjs PLAYWRIGHT_CORE_DIR CHROMIUM BASE_URL SHOTS_DIR PLAN_JSON
"use strict";

const path = require("path");
const [playwrightDir, executablePath, base, shots, planJson] = process.argv.slice(2);
const { chromium } = require(playwrightDir);
const { launch, collectErrors, CORNER } = require("./chromium.cjs");
const plan = JSON.parse(planJson);

const WAIT = { timeout: 30000 };
const POLL = { timeout: 30000, polling: 50 }; // not rAF: background pages get none

function observe() {
  const all = (s) => [...document.querySelectorAll(s)];
  const trick = document.querySelector("#trick");
  return {
    over: document.body.dataset.over === "true",
    seats: all(".felt .seat").map((s) => ({
      seat: Number(s.dataset.seat), hidden: s.dataset.hidden === "true", size: Number(s.dataset.size),
      backs: s.querySelectorAll(".card.back").length, faces: s.querySelectorAll(".mini .card.face").length,
    })),
    hand: all("#hand .card").map((c) => c.dataset.card),
    played: all(".played .card").map((c) => c.dataset.card),
    trick: trick ? { number: trick.dataset.number, leader: trick.dataset.leader, winner: trick.dataset.winner, text: trick.textContent } : null,
    rows: all("#table .row").map((r) => ({ suit: r.dataset.suit, cards: [...r.querySelectorAll(".card")].map((c) => c.dataset.card) })),
    roundRows: all("#scores tbody tr").length,
    totals: all("#totals td").map((c) => c.textContent),
    winners: (document.querySelector("#winners") || {}).textContent || "",
    round: (document.querySelector("#round-title") || {}).textContent || "",
    trump: (document.querySelector("#trump") || {}).textContent || "",
    excluded: (document.querySelector("#excluded") || {}).textContent || "",
    spanishPips: document.querySelectorAll(".card.face.spanish svg.pip").length,
    error: document.querySelector("#error").textContent,
    refused: (document.querySelector("#refused") || {}).textContent || "",
  };
}

// A spectator's page notes, on every redraw, the round, the seat marked to act, its clock and
// the cards on the table, whenever any of them but the clock changes (window.__turns).
function noteTurns() {
  window.__turns = [];
  const note = () => {
    const seat = document.querySelector(".felt .seat.to-act");
    const clock = document.querySelector("[data-clock]");
    const entry = {
      round: (document.querySelector("#round-title") || {}).textContent || "",
      toAct: seat ? Number(seat.dataset.seat) : null,
      clock: clock ? clock.textContent : "",
      onTable: document.querySelectorAll("#table .row .card").length,
      seq: document.body.dataset.seq || "",
    };
    const last = window.__turns[window.__turns.length - 1];
    const same = last && last.round === entry.round && last.toAct === entry.toAct && last.onTable === entry.onTable;
    if (!same && window.__turns.length < 5000) window.__turns.push(entry);
  };
  new MutationObserver(note).observe(document.body, { childList: true, subtree: true });
  note();
}

async function newMatch(page, entry) {
  await page.goto(base + "/");
  await page.waitForSelector('body[data-ready="true"]', WAIT);
  await page.selectOption("#game", entry.game);
  if (entry.players) await page.selectOption("#players", String(entry.players));
  for (const [name, value] of Object.entries(entry.fields || {})) {
    const selector = `[id="opt-${name}"]`; // a round type's option is "type.option"
    if (name.includes(".")) await page.$eval("#round-options", (el) => { el.open = true; });
    const tag = await page.$eval(selector, (el) => el.type === "checkbox" ? "CHECKBOX" : el.tagName);
    if (tag === "SELECT") await page.selectOption(selector, String(value));
    else if (tag === "CHECKBOX") await page.setChecked(selector, Boolean(value));
    else await page.fill(selector, String(value));
  }
  await page.click("#new-match");
  await page.waitForURL(/seat=0/, WAIT);
  await page.waitForSelector('body[data-ready="true"]', WAIT);
  return page.evaluate(() => document.body.dataset.match);
}

// Wait until it is our turn or the match is over; then act by mouse or keyboard.
async function playOut(page, entry, record, hooks) {
  const actions = {};
  let clicks = 0, keys = 0, shot = false;
  for (;;) {
    await page.waitForFunction(() => document.body.dataset.over === "true" || Number(document.body.dataset.legal) > 0, null, POLL);
    if (await page.evaluate(() => document.body.dataset.over === "true")) break;
    const kind = await page.evaluate(() => {
      const b = document.querySelector("#my-hand button.legal");
      return b ? (b.dataset.action || "play") : null;
    });
    if (!kind) continue;
    actions[kind] = (actions[kind] || 0) + 1;
    if (kind !== "play" && !record.actionShot) {
      record.actionShot = true;
      await page.screenshot({ path: path.join(shots, `${entry.game}-${kind}.png`) });
      record.beforeAction = await page.evaluate(observe);
    }
    if (entry.refuseOnce && !record.refused && kind === "play") {
      // The server's refusal, as the gateway sends it (a trailer frame), for this one call:
      // the page must say why and leave the cards playable.
      const message = "not your turn: seat 2 is to act";
      const trailer = Buffer.from(`grpc-status:9\r\ngrpc-message:${encodeURIComponent(message)}\r\n`);
      const head = Buffer.alloc(5);
      head.writeUInt8(0x80, 0);
      head.writeUInt32BE(trailer.length, 1);
      const route = "**/cardarena.v1.MatchService/SubmitAction";
      await page.route(route, (r) => r.fulfill({ status: 200, contentType: "application/grpc-web+proto", body: Buffer.concat([head, trailer]) }), { times: 1 });
      await page.click("#my-hand button.legal >> nth=0", { position: CORNER });
      await page.waitForFunction(() => document.querySelector("#refused").textContent !== "", null, POLL);
      record.refused = await page.evaluate(() => ({ text: document.querySelector("#refused").textContent, legal: document.querySelectorAll("#my-hand button.legal").length }));
      await page.unroute(route);
      continue;
    }
    const useKeys = entry.keyboard && keys < 3 && kind === "play";
    try {
      if (useKeys) {
        await page.focus("#my-hand button.legal", { timeout: 2000 });
        await page.keyboard.press("ArrowRight");
        await page.keyboard.press("Enter");
        keys += 1;
      } else {
        await page.click("#my-hand button.legal >> nth=0", { timeout: 2000, position: CORNER });
        clicks += 1;
      }
    } catch (error) {
      continue; // the hand was redrawn under the pointer: look again
    }
    if (!shot && clicks + keys >= (entry.shotAfter || 3)) {
      shot = true;
      await page.waitForTimeout(150); // let the bots' cards land for the picture
      await page.screenshot({ path: path.join(shots, `${entry.game}-table.png`) });
      record.midway = await page.evaluate(observe);
    }
    if (process.env.DRIVE_TRACE) console.error(entry.game, clicks + keys, kind, Date.now() % 100000);
    if (hooks.afterMove) await hooks.afterMove(clicks + keys);
  }
  Object.assign(record, { clicks, keys, actions });
}

async function main() {
  const browser = await launch(chromium, executablePath, { unthrottled: true });
  const errors = [];
  const watch = (page) => collectErrors(page, errors);
  const out = { games: [], errors };
  try {
    // Reduced motion: the table shows each event at once (no pacing, no animation).
    const context = await browser.newContext({ viewport: { width: 1400, height: 950 }, reducedMotion: "reduce" });
    // A bad option is named next to its field, and no match is created.
    const form = await context.newPage();
    watch(form);
    await form.goto(base + "/");
    await form.waitForSelector('body[data-ready="true"]', WAIT);
    await form.selectOption("#game", "pentathlon");
    const defaults = await form.$eval("#opt-rounds", (el) => el.value);
    await form.fill("#opt-rounds", "pass, nonsense");
    await form.click("#new-match");
    await form.waitForFunction(() => document.querySelector("#opt-rounds-error").textContent !== "", null, POLL);
    out.form = { defaults, error: await form.$eval("#opt-rounds-error", (el) => el.textContent), url: form.url() };
    await form.fill("#opt-rounds", "pass, queens(points_per_queen=5, bogus=1)");
    await form.click("#new-match");
    await form.waitForFunction(() => document.querySelector("#opt-rounds-error").textContent.includes("bogus"), null, POLL);
    out.form.itemError = await form.$eval("#opt-rounds-error", (el) => el.textContent);
    await form.fill("#opt-rounds", defaults);
    await form.$eval("#round-options", (el) => { el.open = true; });
    out.form.roundTypes = await form.$$eval("#round-options fieldset", (sets) => sets.map((f) => f.dataset.roundType));
    out.form.trumpChoices = await form.$$eval('[id="opt-trumps.trump"] option', (os) => os.map((o) => o.textContent));
    await form.fill('[id="opt-queens.points_per_queen"]', "5000");
    await form.$eval("#round-options", (el) => { el.open = false; });
    await form.click("#new-match");
    await form.waitForFunction(() => document.querySelector('[id="opt-queens.points_per_queen-error"]').textContent !== "", null, POLL);
    out.form.roundTypeError = await form.$eval('[id="opt-queens.points_per_queen-error"]', (el) => el.textContent);
    out.form.reopened = await form.$eval("#round-options", (el) => el.open);
    out.form.urlAfter = form.url();
    await form.close();
    for (const entry of plan) {
      const page = await context.newPage();
      watch(page);
      const record = { game: entry.game, startedMs: Date.now() };
      record.match = await newMatch(page, entry);
      let spectator = null;
      if (entry.watch) {
        spectator = await context.newPage();
        watch(spectator);
        await spectator.goto(`${base}/?match=${record.match}`);
        await spectator.waitForSelector('body[data-ready="true"]', WAIT);
        await spectator.evaluate(noteTurns);
      }
      const hooks = {
        afterMove: async (moves) => {
          if (entry.reloadAfter && moves === entry.reloadAfter && !record.reloaded) {
            const before = await page.evaluate(observe);
            await page.reload();
            await page.waitForSelector('body[data-ready="true"]', WAIT);
            await page.waitForFunction(() => document.querySelectorAll("#hand .card").length > 0 || document.body.dataset.over === "true", null, POLL);
            const after = await page.evaluate(observe);
            record.reloaded = { before: before.hand.length, after: after.hand.length, url: page.url(), over: after.over };
          }
          if (spectator && moves === 4 && !record.watchedMid) {
            await spectator.waitForFunction(() => document.querySelectorAll(".played .card").length > 0, null, POLL);
            record.watchedMid = await spectator.evaluate(observe);
            await spectator.screenshot({ path: path.join(shots, `${entry.game}-spectator.png`) });
          }
        },
      };
      await playOut(page, entry, record, hooks);
      // A game may end before every kind of action came to this seat (Triathlon can end
      // after one deal): play another match, from another first dealer, until they all did.
      const seenAll = () => (entry.needActions || []).every((a) => record.allActions[a]);
      record.allActions = { ...record.actions };
      record.matchesPlayed = 1;
      for (const fields of entry.retryFields || []) {
        if (seenAll()) break;
        record.match = await newMatch(page, { ...entry, fields: { ...entry.fields, ...fields } });
        await playOut(page, entry, record, hooks);
        for (const [k, n] of Object.entries(record.actions)) record.allActions[k] = (record.allActions[k] || 0) + n;
        record.matchesPlayed += 1;
      }
      // A match may also end before this seat made `shotAfter` moves, so before the table's
      // picture (a Crazy Sixes hand to one point ends that soon in about one deal in 40, and
      // the deals are random): play another, up to three, until it is taken.
      for (let tries = 0; !record.midway && tries < 3; tries += 1) {
        record.match = await newMatch(page, entry);
        await playOut(page, entry, record, hooks);
        for (const [k, n] of Object.entries(record.actions)) record.allActions[k] = (record.allActions[k] || 0) + n;
        record.matchesPlayed += 1;
      }
      record.final = await page.evaluate(observe);
      await page.screenshot({ path: path.join(shots, `${entry.game}-end.png`) });
      if (spectator) {
        await spectator.waitForFunction(() => document.body.dataset.over === "true", null, POLL);
        record.watchedEnd = await spectator.evaluate(observe);
        record.watchedTurns = await spectator.evaluate(() => window.__turns);
        await spectator.close();
      }
      record.ms = Date.now() - record.startedMs;
      out.games.push(record);
      if (entry.replay) {
        await page.goto(`${base}/?log=${record.match}&step=1`);
        await page.waitForSelector('body[data-ready="true"]', WAIT);
        await page.waitForFunction(() => document.querySelector("#verdict").dataset.ok !== undefined, null, POLL);
        const steps = [];
        const at = () => page.evaluate(() => ({ step: Number(document.querySelector("#step").dataset.step), steps: Number(document.querySelector("#step").dataset.steps), trick: (document.querySelector("#trick") || {}).dataset || null, rows: document.querySelectorAll("#scores tbody tr").length }));
        steps.push(await at());
        for (let i = 0; i < 4; i += 1) {
          await page.click("#next-trick");
          const s = await at();
          steps.push({ step: s.step, steps: s.steps, number: s.trick ? s.trick.number : null, winner: s.trick ? s.trick.winner : null, rows: s.rows });
        }
        await page.screenshot({ path: path.join(shots, `${entry.game}-replay.png`) });
        await page.click("#last");
        await page.click("#scores tbody tr >> nth=0");
        const jumped = await at();
        await page.click("#next-round");
        const nextRound = await at();
        out.replay = { match: record.match, steps, jumped, nextRound, verdict: await page.$eval("#verdict", (v) => ({ ok: v.dataset.ok, text: v.textContent })) };
      }
      await page.close();
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((error) => { console.error(error); process.exit(1); });
