// A banked match's table (issue 30's clocks): at each size of the plan, open the match as a
// spectator and, last, as the seat to act (its token put where the app keeps it), read each
// seat's bank and round budget, wait, and read them again: the seat to act counts down, the
// others stand still. Measures the seats and the felt, takes a screenshot. Prints JSON.
//
// Usage: node drive_clocks.cjs PLAYWRIGHT_CORE_DIR CHROMIUM BASE_URL SHOTS_DIR PLAN_JSON
"use strict";

const path = require("path");
const [playwrightDir, executablePath, base, shots, planJson] = process.argv.slice(2);
const { chromium } = require(playwrightDir);
const { launch, collectErrors } = require("./chromium.cjs");
const plan = JSON.parse(planJson);
const WAIT = { timeout: 30000 };

function read() {
  const box = (el) => { const r = el.getBoundingClientRect(); return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }; };
  const fact = (seat, what) => {
    const el = seat.querySelector(`.fact.${what}`);
    return el ? { text: el.textContent, ms: Number(el.dataset.ms), running: el.classList.contains("running") } : null;
  };
  return {
    felt: box(document.querySelector(".felt")),
    viewport: { width: window.innerWidth, height: window.innerHeight },
    scrollWidth: document.documentElement.scrollWidth,
    trick: [...document.querySelectorAll(".felt .played .card")].map(box),
    toAct: document.body.dataset.toAct,
    legal: Number(document.body.dataset.legal || 0),
    seats: [...document.querySelectorAll(".felt .seat")].map((s) => ({
      seat: Number(s.dataset.seat), box: box(s), bank: fact(s, "bank"), round: fact(s, "round"),
    })),
  };
}

async function look(browser, size, url, shot, errors, seat = null) {
  const page = await browser.newPage({ viewport: { width: size.width, height: size.height }, reducedMotion: "reduce" });
  collectErrors(page, errors);
  if (seat !== null) { // the seat's token, where the app keeps it (src/session.js)
    await page.goto(`${base}/`);
    await page.evaluate(([id, at, token]) => {
      localStorage.setItem(`cardarena.match.${id}`, JSON.stringify({ seats: { [at]: token }, at: Date.now() }));
    }, [plan.match, seat, plan.token]);
  }
  await page.goto(url);
  await page.waitForSelector(`.felt .seat[data-seat="${plan.toAct}"] .fact.bank.running`, WAIT);
  const first = await page.evaluate(read);
  await page.waitForTimeout(1500);
  const later = await page.evaluate(read);
  await page.screenshot({ path: path.join(shots, shot) });
  await page.close();
  return { first, later };
}

async function main() {
  const browser = await launch(chromium, executablePath, { unthrottled: true });
  const errors = [];
  const out = { errors, sizes: [] };
  try {
    const match = `${base}/?match=${encodeURIComponent(plan.match)}`;
    for (const size of plan.sizes) {
      out.sizes.push({ name: size.name, ...(await look(browser, size, match, `clocks-${size.name}.png`, errors)) });
    }
    // The seat to act, on its own page.
    out.seat = await look(browser, plan.sizes[0], `${match}&seat=${plan.toAct}`, "clocks-seat.png", errors, plan.toAct);
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((error) => { console.error(error); process.exit(1); });
