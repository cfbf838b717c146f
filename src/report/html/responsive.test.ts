import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM_ARGS } from './chromium-args.js';

/**
 * Every page at a phone's width (390 px) and a laptop's (1280 px), in a real
 * Chromium: no sideways scroll, every control on screen, text contrast of
 * at least 4.5:1 measured from the computed styles, and the stepper and the
 * matrix worked with the keyboard alone. Screenshots of each page at both
 * widths go to node_modules/.cache/retrysim/screenshots/.
 */

const ROOT = join(import.meta.dirname, '..', '..', '..');
// Always the cache: these are for reviewing the layouts; the README's pictures come from browser.test.ts.
const SHOTS = join(ROOT, 'node_modules', '.cache', 'retrysim', 'screenshots');
const CANDIDATES = process.env.RETRYSIM_CHROMIUM ? [process.env.RETRYSIM_CHROMIUM] : ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
const chromiumPath = CANDIDATES.find((p) => existsSync(p));
const RACE = join('scenarios', 'found', 'key_split-exactly-one-b78c4ffb.json');
const WIDTHS = [390, 1280] as const;

function cli(...args: string[]): string {
  return execFileSync(process.execPath, [join(ROOT, 'bin', 'retrysim.js'), ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Browser-side (as text: this file is type-checked without the DOM library):
 * every visible HTML element with its own text, its colour against the first
 * opaque background behind it, as a WCAG 2 contrast ratio. SVG drawings are
 * left out (their labels are fills on shapes, read by the test of each page).
 */
const CONTRAST = `(() => {
  const rgb = (s) => { const m = s.match(/rgba?\\(([^)]+)\\)/); if (!m) return null; const p = m[1].split(',').map(Number); return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 }; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const bgOf = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c && c.a > 0.5) return c; } return { r: 255, g: 255, b: 255, a: 1 }; };
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('svg') || el.matches(':disabled') || el.closest('details:not([open]) > :not(summary)')) continue;
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (!own) continue;
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    if (r.width === 0 || r.height === 0 || cs.visibility === 'hidden' || Number(cs.opacity) < 0.99) continue;
    const fg = rgb(cs.color), bg = bgOf(el);
    const a = lum(fg), b = lum(bg);
    out.push({ text: el.textContent.trim().slice(0, 40), tag: el.tagName, ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05), color: cs.color, bg: getComputedStyle(el).backgroundColor });
  }
  return out;
})()`;

/** No sideways scroll, and every visible button, input and link inside the viewport's width. */
const LAYOUT = `(() => {
  const off = [];
  for (const el of document.querySelectorAll('button, input, select, a, summary')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || el.closest('.wide, .matrix-wrap, .st-diagram, .db-table, details:not([open]) > :not(summary)')) continue;
    if (r.left < 0 || r.right > innerWidth + 0.5) off.push((el.textContent || el.id || el.tagName).trim().slice(0, 30) + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
  }
  return { scrollWidth: document.documentElement.scrollWidth, innerWidth, off };
})()`;

describe.skipIf(chromiumPath === undefined)('every page on a phone and a laptop', () => {
  let browser: Browser;
  const dir = join(ROOT, 'node_modules', '.cache', 'retrysim', 'pages-layout');
  const pages = { stepper: join(dir, 'stepper.html'), herd: join(dir, 'herd.html'), matrix: join(dir, 'matrix.html'), index: join(dir, 'check', 'index.html'), client: join(dir, 'client', 'index.html') };

  beforeAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    mkdirSync(SHOTS, { recursive: true });
    cli('replay', RACE, '--html', pages.stepper);
    cli('herd', '--html', pages.herd);
    cli('matrix', '--html', pages.matrix);
    try {
      cli('check', '--claim', 'key_split-tool_call-race-fails', '--runs', '400', '--workers', '1', '--found', join(dir, 'found'), '--html', join(dir, 'check'));
    } catch {
      // exit code 1/4 still writes the pages; their presence is asserted below.
    }
    try {
      // A user's retry client against a user's service: the page draws the client's own run.
      cli('check', '--client', 'examples/fetch-retry-client/client.ts', '--service', 'examples/correct-with-progress/service.ts', '--runs', '50', '--found', join(dir, 'client-found'), '--html', join(dir, 'client'));
    } catch {
      // exit 1 (the buggy client fails) still writes the pages; their presence is asserted below.
    }
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath!, headless: true, args: CHROMIUM_ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  async function open(file: string, width: number, hash = '', scripted = true): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
    const context = await browser.newContext({ viewport: { width, height: width < 600 ? 844 : 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await context.route('**/*', (route) => (route.request().url().startsWith('file://') || route.request().url().startsWith('blob:') ? route.continue() : route.abort()));
    await page.goto(pathToFileURL(file).href + hash);
    if (scripted) await page.waitForSelector('html[data-ready]', { timeout: 10_000 });
    return { page, errors, close: () => context.close() };
  }

  async function assertFits(page: Page, what: string): Promise<void> {
    const l = await page.evaluate<{ scrollWidth: number; innerWidth: number; off: string[] }>(LAYOUT);
    expect(l.scrollWidth, `${what}: the page scrolls sideways`).toBeLessThanOrEqual(l.innerWidth);
    expect(l.off, `${what}: controls off screen`).toEqual([]);
  }

  async function assertContrast(page: Page, what: string): Promise<number> {
    const texts = await page.evaluate<Array<{ text: string; tag: string; ratio: number; color: string; bg: string }>>(CONTRAST);
    expect(texts.length).toBeGreaterThan(10);
    const low = texts.filter((t) => t.ratio < 4.5).map((t) => `${t.tag} "${t.text}" ${t.ratio.toFixed(2)}:1 (${t.color} on ${t.bg})`);
    expect(low, `${what}: text under 4.5:1`).toEqual([]);
    return texts.length;
  }

  it.each(WIDTHS)('stepper at %i px: fits, the controls are on screen, the summary is first, contrast ≥ 4.5:1, the key table is not clipped', async (width) => {
    const { page, errors, close } = await open(pages.stepper, width, '#step=23');
    await assertFits(page, `stepper ${width}`);
    for (const act of ['first', 'prev', 'play', 'next', 'last']) {
      const box = (await page.locator(`button[data-act=${act}]`).boundingBox())!;
      expect(box.x, act).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, act).toBeLessThanOrEqual(width);
    }
    // The diagram gets the screen's width on a phone (it was 2 px wide), the panel sits under it.
    const diagram = (await page.locator('.st-diagram').boundingBox())!;
    expect(diagram.width).toBeGreaterThan(width * 0.6);
    expect(await page.locator('.summary').textContent()).toMatch(/^#2 ran check .* had not yet run register when the scheduler preempted it\. #1 ran in its place: check .* added a second report/);
    // The key table fits its panel: nothing clipped on the right.
    await page.keyboard.press('End');
    const clipped = await page.evaluate<boolean>(`[...document.querySelectorAll('.db-table')].some((d) => d.scrollWidth > d.clientWidth + 1 || d.getBoundingClientRect().right > innerWidth)`);
    expect(clipped).toBe(false);
    expect(await page.locator('table.keys tbody tr').count()).toBe(1);
    const n = await assertContrast(page, `stepper ${width}`);
    await page.keyboard.press('Home');
    await page.goto(pathToFileURL(pages.stepper).href + '#step=16');
    await page.screenshot({ path: join(SHOTS, `stepper-${width}.png`) });
    console.log(`[responsive] stepper ${width} px: ${n} text elements measured`);
    await close();
    expect(errors).toEqual([]);
  });

  it.each(WIDTHS)('matrix at %i px: fits, each cell says what it is, contrast ≥ 4.5:1, opening a cell keeps it on screen and moves focus to the stepper', async (width) => {
    const { page, errors, close } = await open(pages.matrix, width);
    await assertFits(page, `matrix ${width}`);
    const name = await page.locator('button[data-row="key_atomic/tool_call"][data-col="kill_mid_request"]').getAttribute('aria-label');
    expect(name).toBe('key_atomic/tool_call, kill mid request: 0 reports held, no documented expectation; no invariant broken. Opens its run.');
    const dup = await page.locator('button[data-row="naive/none"][data-col="lost_response"]').getAttribute('aria-label');
    expect(dup).toMatch(/^naive\/none, lost response: 2 reports held, documented 2; broken: exactly-one/);
    await assertContrast(page, `matrix ${width}`);
    await page.screenshot({ path: join(SHOTS, `matrix-${width}.png`) });
    const cell = page.locator('button[data-row="key_atomic_nofence/tool_call"][data-col="slow_takeover"]');
    await cell.scrollIntoViewIfNeeded();
    await cell.click();
    await page.waitForSelector('#cell-view .stepper');
    const box = (await cell.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThanOrEqual(width < 600 ? 844 : 800);
    expect(await page.evaluate<boolean>(`document.getElementById('cell-view').contains(document.activeElement)`)).toBe(true);
    await assertFits(page, `matrix ${width} with a cell open`);
    await assertContrast(page, `matrix ${width} with a cell open`);
    await page.screenshot({ path: join(SHOTS, `matrix-cell-${width}.png`) });
    await close();
    expect(errors).toEqual([]);
  });

  it.each(WIDTHS)('herd explorer at %i px: fits while and after it runs, contrast ≥ 4.5:1', async (width) => {
    const { page, errors, close } = await open(pages.herd, width, '#mode=sweep&from=10&to=40&step=10&sweep-runs=5&seed=1');
    await page.waitForSelector('#out[data-state=done]', { timeout: 30_000 });
    await assertFits(page, `herd ${width}`);
    await assertContrast(page, `herd ${width}`);
    await page.screenshot({ path: join(SHOTS, `herd-${width}.png`), fullPage: true });
    await close();
    expect(errors).toEqual([]);
  });

  it.each(WIDTHS)('check --html index and its stepper at %i px: fit, and the stepper links back to the index', async (width) => {
    expect(existsSync(pages.index)).toBe(true);
    const { page, errors, close } = await open(pages.index, width, '', false); // plain HTML, no script
    await assertFits(page, `index ${width}`);
    await assertContrast(page, `index ${width}`);
    expect(await page.locator('meta[name=viewport]').count()).toBe(1);
    const stepper = readdirSync(join(dir, 'check')).find((f) => f !== 'index.html')!;
    await page.goto(pathToFileURL(join(dir, 'check', stepper)).href);
    await page.waitForSelector('html[data-ready]');
    await assertFits(page, `check stepper ${width}`);
    await page.click('nav.crumb a');
    expect(page.url()).toBe(pathToFileURL(pages.index).href);
    await close();
    expect(errors).toEqual([]);
  });

  it.each(WIDTHS)('check --client --html at %i px: the client\'s run fits, its controls are on screen, contrast ≥ 4.5:1, the summary names the client check, and End shows it broken', async (width) => {
    expect(existsSync(pages.client)).toBe(true);
    const stepper = readdirSync(join(dir, 'client')).find((f) => f !== 'index.html')!;
    const { page, errors, close } = await open(join(dir, 'client', stepper), width);
    await assertFits(page, `client stepper ${width}`);
    for (const act of ['first', 'prev', 'play', 'next', 'last']) {
      const box = (await page.locator(`button[data-act=${act}]`).boundingBox())!;
      expect(box.x, act).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, act).toBeLessThanOrEqual(width);
    }
    expect(await page.locator('.st-head .meta').textContent()).toContain("retry client 'fetch-retry-client'");
    expect(await page.locator('.summary').textContent()).toMatch(/stable-key breaks at step \d+: op1\.w0 retries here with Idempotency-Key/);
    expect(await page.locator('g.row[data-kind=worker][data-event=wait]').count()).toBeGreaterThan(0);
    await page.keyboard.press('End');
    expect(await page.locator('.st-violation').first().textContent()).toContain('stable-key');
    await assertContrast(page, `client stepper ${width}`);
    await page.screenshot({ path: join(SHOTS, `client-stepper-${width}.png`) });
    await page.click('nav.crumb a');
    expect(page.url()).toBe(pathToFileURL(pages.client).href);
    await assertFits(page, `client index ${width}`);
    await close();
    expect(errors).toEqual([]);
  });

  it('the stepper with the keyboard alone: Tab to the controls, step, hide the scheduler rows, play', async () => {
    const { page, errors, close } = await open(pages.stepper, 390);
    const focusedAct = () => page.evaluate<string>(`document.activeElement?.dataset?.act ?? document.activeElement?.tagName ?? ''`);
    const seen: string[] = [];
    for (let i = 0; i < 12 && !seen.includes('next'); i++) {
      await page.keyboard.press('Tab');
      seen.push(await focusedAct());
    }
    expect(seen).toContain('next');
    await page.keyboard.press('Enter');
    expect(await page.locator('.st-pos').textContent()).toContain('step 2 /');
    // On to the checkbox, Space ticks it: the 15 plain scheduler rows go, the preemption stays.
    const rowsBefore = await page.locator('g.row').count();
    for (let i = 0; i < 6 && (await focusedAct()) !== 'hide-decisions'; i++) await page.keyboard.press('Tab');
    expect(await focusedAct()).toBe('hide-decisions');
    await page.keyboard.press('Space');
    const rowsAfter = await page.locator('g.row').count();
    expect(rowsBefore - rowsAfter).toBe(15);
    expect(await page.locator('g.row.k-decision').count()).toBe(1);
    // Arrow keys skip the hidden rows: from step 2 the next shown step is a worker's or a request's.
    await page.locator('button[data-act=next]').focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate<string>(`document.querySelector('g.row.current').dataset.kind`)).not.toBe('decision');
    await page.keyboard.press('End');
    expect(await page.locator('.st-violation.past, .st-violation.active').count()).toBe(1);
    // Play from the start runs on by itself.
    await page.keyboard.press('Home');
    await page.locator('button[data-act=play]').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.st-pos').textContent(), { timeout: 5000 }).not.toContain('step 1 /');
    await page.keyboard.press('Enter');
    expect(await page.locator('button[data-act=play]').getAttribute('aria-pressed')).toBe('false');
    await close();
    expect(errors).toEqual([]);
  });

  it('the matrix with the keyboard alone: Tab to a cell, Enter opens it with focus in the stepper, arrows step, "back" returns to the cell', async () => {
    const { page, errors, close } = await open(pages.matrix, 1280);
    let on = '';
    for (let i = 0; i < 60 && on !== 'key_split/tool_call|crash_mid_request'; i++) {
      await page.keyboard.press('Tab');
      on = await page.evaluate<string>(`(document.activeElement?.dataset?.row ?? '') + '|' + (document.activeElement?.dataset?.col ?? '')`);
    }
    expect(on).toBe('key_split/tool_call|crash_mid_request');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#cell-view .stepper');
    expect(await page.evaluate<string>(`document.activeElement.dataset.act`)).toBe('next');
    await page.keyboard.press('ArrowRight');
    expect(await page.locator('#cell-view .st-pos').textContent()).toContain('step 2 /');
    await page.keyboard.press('End');
    expect(await page.locator('#cell-view .st-violation').first().textContent()).toContain('exactly-one');
    await page.locator('#cell-view button.back').focus();
    await page.keyboard.press('Enter');
    expect(await page.evaluate<string>(`document.activeElement.dataset.col`)).toBe('crash_mid_request');
    await close();
    expect(errors).toEqual([]);
  });

  it('a kill_mid_request cell offers its run as a file, and replaying that file gives the same run', async () => {
    const { page, errors, close } = await open(pages.matrix, 1280);
    await page.click('button[data-row="key_split/tool_call"][data-col="kill_mid_request"]');
    const replay = await page.locator('#cell-view .replay code').textContent();
    expect(replay).toMatch(/^retrysim replay kill_mid_request--key_split--tool_call\.json --trace/);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#cell-view .save a')]);
    const file = join(dir, download.suggestedFilename());
    await download.saveAs(file);
    const out = JSON.parse(cli('replay', file, '--json')) as { reports: Record<string, number>; traceHash?: string };
    const shown = await page.locator('#cell-view .st-head .meta').textContent();
    expect(shown).toContain(`reports held: op1=${out.reports.op1}`);
    await close();
    expect(errors).toEqual([]);
  });
});
