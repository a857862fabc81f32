// HTML reports opened in a real browser: Debian's headless Chromium, driven over the
// DevTools protocol by playwright-core (a fresh temporary profile per launch; no
// browser download: executablePath is /usr/bin/chromium).
//   node report_browser.mjs HTMLDIR OUTDIR
// HTMLDIR holds the pages test_report.sh wrote (PAGES below); OUTDIR gets screenshots
// of some (desktop and phone size) and a PDF of one. For every page: no console error
// or warning, no page error, no request but the page itself, no dialog; every chart
// the page should have is there with non-empty SVG paths, ticks, axis labels and a
// legend, and no NaN / Infinity / undefined anywhere in the SVG; the marks and shaded
// spans the page must show (MARKS), no two mark labels written over each other; no
// chart drawn larger than its viewBox (its text would be larger than the other
// charts'); no table cut off or scrolling at desktop width, nor on an A4 page in
// print; nothing wider than a phone. The XSS pages (a run's, and one of calibrate,
// gate and history JSON) must show every payload as text and run none of it, with
// their Content-Security-Policy and again without it (so escaping alone is what holds).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import { check } from "./harness.mjs";

const [htmlDir, outDir] = process.argv.slice(2);
fs.mkdirSync(outDir, { recursive: true });

const CDF = ["cdf-ttft", "cdf-tpot", "cdf-itl", "cdf-e2e"];
const HIST = ["hist-ttft", "hist-tpot", "hist-itl", "hist-e2e"];
const TIME = ["inflight", "tokens", "ttft-scatter"];
// name: charts that must be drawn with data; empty: charts allowed to be empty
// (degenerate runs; they must then say why); marks: the labelled lines and shaded
// spans charts must have (MARKS); samples: the sample requests shown; shot: a
// full-page screenshot; phone: one at phone size too; pdf: print it.
const PAGES = {
  run: { charts: [...CDF, ...HIST, ...TIME, "kv"], marks: "run", samples: ["First sent", "Median E2E", "Slowest E2E"],
         shot: true, pdf: true },
  sweep: { charts: ["sweep-ttft", "sweep-tpot", "sweep-tokens", "sweep-requests", ...CDF], marks: "sweep",
           shot: true, phone: true },
  scenario: { charts: [...CDF, ...HIST, ...TIME, "class-ttft"] },
  compare: { charts: [...CDF, ...HIST, ...TIME] },
  interrupted: { charts: [...CDF, ...HIST, ...TIME] },
  single: { charts: [...CDF, ...HIST, ...TIME] },
  failed: { charts: ["inflight", "ttft-scatter"], empty: true, shot: true },
  xss: { charts: [...CDF, ...TIME], xss: "run" },
  // the JSON results of calibrate, gate and history (tests/data/report/json/)
  calib: { charts: ["drift", "cost", "sla"], shot: true },
  "gate-history": { charts: [...CDF, ...HIST, ...TIME, "history"], shot: true },
  "json-xss": { charts: ["drift", "history"], xss: "json" },
};

// Per chart kind, the start of each mark label (SLO bounds, percentiles, capacity) and
// each shaded span (legend names) it must draw: the run fixture has SLOs and warm-up,
// the sweep's capacity is concurrency=4.
const HIST_MARKS = { marks: ["p50 ", "p90 ", "p99 "] };
const WINDOW = ["warm-up", "measured window"];
const MARKS = {
  run: {
    "cdf-ttft": { marks: ["p99", "p50", "SLO p99 TTFT"] },
    "cdf-tpot": { marks: ["p99", "p50", "SLO p99 TPOT"] },
    "hist-ttft": HIST_MARKS, "hist-tpot": HIST_MARKS, "hist-itl": HIST_MARKS, "hist-e2e": HIST_MARKS,
    inflight: { bands: WINDOW }, tokens: { bands: WINDOW },
    "ttft-scatter": { marks: ["SLO p99 TTFT"], bands: WINDOW },
  },
  sweep: {
    "sweep-ttft": { marks: ["SLO p99 TTFT", "capacity at SLO"] },
    "sweep-tpot": { marks: ["SLO p99 TPOT", "capacity at SLO"] },
    "sweep-tokens": { marks: ["capacity at SLO"] },
    "sweep-requests": { marks: ["capacity at SLO"] },
  },
};

// The payloads each XSS page must show as text: in a run's outputs, class names and
// file names ("run"), and in a gate's rule and stage owner, commit tags of a history
// and the labels of a drift ("json").
const PAYLOADS = {};
PAYLOADS.run = [
  "<script>alert(1)</script>",
  '"><img src=x onerror=alert(1)>',
  "</pre></div><script>alert(3)</script>",
  "[link](javascript:alert(4))",
  "<svg onload=alert(6)><style>body{display:none}</style>",
  "&lt;already escaped&gt; &amp;",
  "<script>alert('class')</script>",
  '"><img src=x onerror=alert(8)>',
  '"><img src=x onerror=alert(7)>.jsonl',
];
PAYLOADS.json = [
  "<script>alert('rule')</script>",
  '"><img src=x onerror=alert(9)>',
  "<script>alert(11)</script>",
  '"><img src=x onerror=alert(12)>',
  "<script>alert(13)</script>",
  '"><img src=x onerror=alert(14)>',
];

const browser = await chromium.launch({
  executablePath: process.env.CB_CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
});

// Open a page and record what it did.
async function open(file, viewport = { width: 1200, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const seen = { console: [], errors: [], requests: [], dialogs: [] };
  const url = "file://" + path.resolve(file);
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") seen.console.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => seen.errors.push(String(e)));
  page.on("request", (r) => { if (r.url() !== url) seen.requests.push(r.url()); });
  page.on("dialog", async (d) => { seen.dialogs.push(d.message()); await d.dismiss(); });
  await page.goto(url, { waitUntil: "load" });
  await page.waitForTimeout(100); // let anything late (an onerror, a lazy fetch) happen
  return { context, page, seen };
}

function quiet(name, seen) {
  assert.deepEqual(seen.console, [], `${name}: console messages`);
  assert.deepEqual(seen.errors, [], `${name}: page errors`);
  assert.deepEqual(seen.requests, [], `${name}: network requests`);
  assert.deepEqual(seen.dialogs, [], `${name}: dialogs (a payload ran)`);
}

// Every chart on the page, as the checks need it.
const charts = (page) => page.$$eval("figure.chart", (figs) => figs.map((f) => ({
  id: f.dataset.chart,
  points: Number(f.dataset.points),
  series: [...f.querySelectorAll("svg.plot path.series")].map((p) => p.getAttribute("d") || ""),
  ticks: f.querySelectorAll("svg.plot text.tick").length,
  labels: [...f.querySelectorAll("svg.plot text.axl")].map((t) => t.textContent),
  legend: f.querySelectorAll(".legend .key").length,
  empty: f.querySelector("svg.plot text.empty")?.textContent || "",
  marks: [...f.querySelectorAll("svg.plot text.mkl")].map((t) => t.textContent),
  markBoxes: [...f.querySelectorAll("svg.plot text.mkl")].map((t) => {
    const r = t.getBoundingClientRect();
    return { text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom };
  }),
  bands: [...f.querySelectorAll("svg.plot rect.band title")].map((t) => t.textContent),
  svg: f.querySelector("svg.plot").outerHTML,
  width: f.querySelector("svg.plot").getBoundingClientRect().width,
  viewWidth: f.querySelector("svg.plot").viewBox.baseVal.width,
})));

// Table boxes whose table does not fit them (cut off, or scrolling).
const overflowingTables = (page) => page.$$eval(".tw", (boxes) => boxes
  .filter((b) => b.scrollWidth > b.clientWidth + 1)
  .map((b) => `table "${b.querySelector("th")?.textContent}" is ${b.scrollWidth} px in ${b.clientWidth} px`));

const baseId = (id) => id.replace(/-\d+(?=-|$)/, ""); // "cdf-3-ttft" -> "cdf-ttft"

async function checkPage(name, spec) {
  const file = path.join(htmlDir, `${name}.html`);
  const { context, page, seen } = await open(file);
  await check(`${name}: no console error, page error, request or dialog`, () => quiet(name, seen));
  const list = await charts(page);
  await check(`${name}: every expected chart is drawn (${spec.charts.length} kinds)`, () => {
    const drawn = new Set(list.filter((c) => c.points > 0).map((c) => baseId(c.id)));
    for (const want of spec.charts) assert.ok(drawn.has(want), `no drawn chart ${want}; have ${[...drawn].join(" ")}`);
  });
  await check(`${name}: ${list.length} charts with paths, ticks, axis labels and legends`, () => {
    for (const c of list) {
      if (c.points === 0) {
        assert.ok(spec.empty, `${c.id} is empty: "${c.empty}"`);
        assert.ok(c.empty.length > 0, `${c.id} is empty and does not say why`);
        continue;
      }
      assert.ok(c.series.length > 0, `${c.id}: no series path`);
      for (const d of c.series) assert.ok(d.length > 8 && /^M[\d.-]/.test(d), `${c.id}: empty path d="${d}"`);
      assert.ok(c.ticks >= 4, `${c.id}: ${c.ticks} tick labels`);
      assert.equal(c.labels.length, 2, `${c.id}: axis labels ${c.labels}`);
      assert.ok(c.labels.every((l) => l.trim().length > 0), `${c.id}: blank axis label`);
      assert.ok(c.legend > 0, `${c.id}: no legend`);
    }
  });
  await check(`${name}: no NaN, Infinity or undefined in any chart`, () => {
    for (const c of list) assert.doesNotMatch(c.svg, /NaN|Infinity|undefined|\bnan\b|\binf\b/, c.id);
  });
  if (spec.marks) await check(`${name}: SLO lines, percentile and capacity marks, shaded windows`, () => {
    for (const [kind, want] of Object.entries(MARKS[spec.marks])) {
      const drawn = list.filter((c) => baseId(c.id) === kind);
      assert.ok(drawn.length > 0, `no chart ${kind}`);
      for (const c of drawn) {
        for (const m of want.marks || [])
          assert.ok(c.marks.some((l) => l.startsWith(m)), `${c.id}: no mark "${m}…"; marks: ${c.marks.join(" | ")}`);
        for (const b of want.bands || []) assert.ok(c.bands.includes(b), `${c.id}: no shaded ${b}; bands: ${c.bands}`);
      }
    }
  });
  if (spec.samples) await check(`${name}: sample requests with their output text`, async () => {
    const shown = await page.$$eval("#samples h4", (hs) => hs.map((h) => h.textContent));
    for (const s of spec.samples) assert.ok(shown.some((h) => h.startsWith(s)), `no sample "${s}"; have ${shown}`);
    const texts = await page.$$eval("#samples .sample pre", (ps) => ps.map((p) => p.textContent));
    assert.equal(texts.length, spec.samples.length, "one output text per sample");
    for (const t of texts) assert.ok(t.trim().length > 0, "an empty output text");
  });
  await check(`${name}: no two mark labels (SLO, percentiles, capacity) written over each other`, () => {
    const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
    for (const c of list)
      c.markBoxes.forEach((a, i) => c.markBoxes.slice(i + 1).forEach((b) =>
        assert.ok(!hit(a, b), `${c.id}: "${a.text}" and "${b.text}" overlap`)));
  });
  await check(`${name}: no chart drawn larger than its viewBox (its text larger than elsewhere)`, () => {
    for (const c of list) assert.ok(c.width <= c.viewWidth + 0.5, `${c.id} is ${c.width} px for ${c.viewWidth} units`);
  });
  await check(`${name}: every table fits the page at desktop width`, async () =>
    assert.deepEqual(await overflowingTables(page), []));
  await check(`${name}: the navigation's links reach their sections`, async () => {
    const missing = await page.$$eval("nav a", (as) =>
      as.map((a) => a.getAttribute("href").slice(1)).filter((id) => !document.getElementById(id)));
    assert.deepEqual(missing, []);
  });
  if (spec.xss) await checkXss(name, page, PAYLOADS[spec.xss]);
  if (spec.shot) {
    const shot = path.join(outDir, `${name}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    await check(`${name}: screenshot ${shot}`, () => assert.ok(fs.statSync(shot).size > 10000));
  }
  // Print: on an A4 page (794 CSS px, no margin) nothing is cut off at the right.
  await page.emulateMedia({ media: "print" });
  await page.setViewportSize({ width: 794, height: 1123 });
  await check(`${name}: prints within an A4 page's width`, async () => {
    assert.deepEqual(await overflowingTables(page), []);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 795, `the printed page is ${width} px wide`);
  });
  if (spec.pdf) {
    const pdf = await page.pdf({ path: path.join(outDir, `${name}.pdf`), format: "A4" });
    await check(`${name}: prints (${pdf.length} bytes of PDF)`, () => assert.ok(pdf.length > 20000));
  }
  await context.close();
  // A phone: nothing makes the page wider than the screen (tables scroll in their box).
  const phone = await open(file, { width: 390, height: 844 });
  await check(`${name}: fits a 390 px phone screen`, async () => {
    const width = await phone.page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 391, `page is ${width} px wide`);
    for (const c of await charts(phone.page)) assert.ok(c.width <= 390, `${c.id} is ${c.width} px wide`);
  });
  if (spec.phone) await phone.page.screenshot({ path: path.join(outDir, `${name}-phone.png`), fullPage: true });
  await phone.context.close();
}

async function checkXss(name, page, payloads) {
  await check(`${name}: every payload is shown as text`, async () => {
    const text = await page.evaluate(() => document.body.textContent);
    for (const p of payloads) assert.ok(text.includes(p), `payload not shown as text: ${p}`);
  });
  await check(`${name}: no payload became an element or a handler`, async () => {
    const found = await page.evaluate(() => ({
      elements: document.querySelectorAll("script, img, iframe, object, embed, link, base, meta[http-equiv=refresh], body style, svg[onload]").length,
      handlers: [...document.querySelectorAll("*")].flatMap((e) => [...e.attributes].map((a) => a.name)).filter((n) => n.startsWith("on")),
      links: [...document.querySelectorAll("a")].map((a) => a.getAttribute("href")).filter((h) => !h.startsWith("#")),
    }));
    assert.deepEqual(found, { elements: 0, handlers: [], links: [] });
  });
  // Without the Content-Security-Policy, escaping alone must keep the payloads inert.
  const raw = fs.readFileSync(path.join(htmlDir, `${name}.html`), "utf8");
  const bare = raw.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>\n?/, "");
  assert.notEqual(bare, raw, "the page has no Content-Security-Policy to remove");
  const file = path.join(outDir, `${name}-without-csp.html`);
  fs.writeFileSync(file, bare);
  const again = await open(file);
  await check(`${name} without its CSP: still no script ran, no request, no dialog`, () => quiet(`${name} without CSP`, again.seen));
  await check(`${name} without its CSP: payloads still text`, async () => {
    const text = await again.page.evaluate(() => document.body.textContent);
    for (const p of payloads) assert.ok(text.includes(p), `payload not shown as text: ${p}`);
    const n = await again.page.evaluate(() => document.querySelectorAll("script, img, svg[onload], body style").length);
    assert.equal(n, 0);
  });
  await again.context.close();
}

// CB_REPORT_PAGES=run,xss checks only those pages (for debugging).
const only = process.env.CB_REPORT_PAGES ? process.env.CB_REPORT_PAGES.split(",") : null;
try {
  for (const [name, spec] of Object.entries(PAGES))
    if (!only || only.includes(name)) await checkPage(name, spec);
} finally {
  await browser.close();
}
