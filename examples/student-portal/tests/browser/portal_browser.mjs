// One browser case against the portal in front of `studentsvc mock`:
//   node portal_browser.mjs two_students|no_token|refused_token|nfr|service_stopped
// Debian's chromium (CHROMIUM) driven by playwright-core; the Authorization
// header is added to every request of the page as the auth proxy would.
// Each case saves portal-<case>[-<who>].png in STUDENT_PORTAL_ARTIFACTS.
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

import { artifactsDir, refusedToken, requirePrograms, startMock, startPortal, tokens } from '../harness.mjs';

requirePrograms('STUDENT_PORTAL_BIN', 'STUDENTSVC_TOOL', 'CHROMIUM');
const name = process.argv[2];
const shots = artifactsDir();

/// Opens `/` in a fresh context (with the token as Authorization: Bearer when
/// given), checks that the CSP blocked nothing and the stylesheet applied,
/// saves the screenshot, and hands the page and its response to `check`.
async function visit(browser, portal, token, shot, check) {
  const context = await browser.newContext({
    extraHTTPHeaders: token ? { Authorization: `Bearer ${token}` } : {},
    viewport: { width: 900, height: 760 },
  });
  const page = await context.newPage();
  const problems = [];
  // The document's own 401/503 is logged as a failed load; anything else
  // (a CSP refusal, a stylesheet that did not load) is a problem.
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('requestfailed', (r) => problems.push(`${r.url()}: ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.request().resourceType() !== 'document' && !r.ok()) problems.push(`${r.url()}: ${r.status()}`);
  });
  try {
    const response = await page.goto(`${portal.url}/`);
    await page.screenshot({ path: join(shots, `portal-${shot}.png`), fullPage: true });
    assert.deepEqual(problems, [], 'the page logged errors (a CSP violation?)');
    // The portal's own stylesheet is allowed by the CSP: main is a white card.
    assert.equal(await page.locator('main').evaluate((e) => getComputedStyle(e).backgroundColor), 'rgb(255, 255, 255)');
    const html = await page.content();
    for (const t of [...Object.values(tokens), refusedToken]) assert.ok(!html.includes(t), 'the page shows a token');
    assert.ok(!page.url().includes('tok-'), 'a token in the URL');
    await check(page, response);
  } finally {
    await context.close();
  }
}

const field = (page, f) => page.locator(`dd[data-field="${f}"]`).innerText();

const cases = {
  async two_students({ browser, portal }) {
    await visit(browser, portal, tokens.avery, 'two_students-avery', async (page, res) => {
      assert.equal(res.status(), 200);
      assert.equal(await field(page, 'name'), 'Avery Lee-Ortiz');
      assert.equal(await field(page, 'perm'), '1111111');
      assert.equal(await field(page, 'email'), 'avery.lee@example.edu');
      assert.equal(await field(page, 'middleName'), 'Jo');
      const text = await page.locator('body').innerText();
      assert.ok(!text.includes('2222222') && !text.includes('Marsh'), 'Avery sees Bo');
    });
    await visit(browser, portal, tokens.bo, 'two_students-bo', async (page, res) => {
      assert.equal(res.status(), 200);
      // The name holds markup: shown as text, never as elements.
      assert.equal(await field(page, 'name'), 'Bo <b> Marsh</b> & "Sons" JR');
      assert.equal(await page.locator('main b').count(), 0);
      assert.equal(await field(page, 'perm'), '2222222');
      assert.equal(await field(page, 'middleName'), 'withheld');
      assert.equal(await field(page, 'lastRegisteredQuarter'), '20241');
      const text = await page.locator('body').innerText();
      assert.ok(!text.includes('1111111') && !text.includes('Avery'), 'Bo sees Avery');
      assert.equal(await page.locator('#nfr-notice').count(), 0);
    });
  },

  async no_token({ browser, portal }) {
    await visit(browser, portal, null, 'no_token', async (page, res) => {
      assert.equal(res.status(), 401);
      assert.equal(await page.locator('h1').innerText(), 'Please sign in again');
      assert.equal(await page.locator('dd').count(), 0);
    });
  },

  async refused_token({ browser, portal }) {
    await visit(browser, portal, refusedToken, 'refused_token', async (page, res) => {
      assert.equal(res.status(), 401);
      assert.equal(await page.locator('h1').innerText(), 'Please sign in again');
      const text = await page.locator('body').innerText();
      assert.ok(!/not valid|denied/i.test(text), 'the service\'s own 401 text is shown');
    });
  },

  async nfr({ browser, portal }) {
    await visit(browser, portal, tokens.casey, 'nfr', async (page, res) => {
      assert.equal(res.status(), 200);
      assert.ok(await page.locator('#nfr-notice').isVisible());
      assert.equal(await page.locator('#nfr-notice h2').innerText(), 'Not for release');
      assert.equal(await field(page, 'name'), 'Casey Nakamura');
    });
    await visit(browser, portal, tokens.avery, 'nfr-not_flagged', async (page) => {
      assert.equal(await page.locator('#nfr-notice').count(), 0);
    });
  },

  async service_stopped({ browser, portal, mock }) {
    await visit(browser, portal, tokens.avery, 'service_stopped-before', async (page, res) => {
      assert.equal(res.status(), 200);
    });
    await mock.stop();
    await visit(browser, portal, tokens.avery, 'service_stopped', async (page, res) => {
      assert.equal(res.status(), 503);
      assert.equal(await page.locator('h1').innerText(), 'Student records are unavailable');
      assert.equal(await page.locator('dd').count(), 0);
    });
  },
};

if (!(name in cases)) {
  console.error(`usage: node portal_browser.mjs ${Object.keys(cases).join('|')}`);
  process.exit(2);
}
const mock = await startMock();
const portal = await startPortal(mock.env);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],  // root in CI: no user namespace sandbox
});
let failed = false;
try {
  await cases[name]({ browser, portal, mock });
  console.log(`ok - ${name} (screenshots in ${shots})`);
} catch (e) {
  failed = true;
  console.error(`not ok - ${name}: ${e.stack ?? e}\n--- portal log ---\n${portal.log}`);
} finally {
  await browser.close();
  await portal.stop();
  await mock.stop();
}
console.log(failed ? '0 passed, 1 failed' : '1 passed, 0 failed');
process.exit(failed ? 1 : 0);
