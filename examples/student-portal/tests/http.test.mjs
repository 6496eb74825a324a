// The running portal over plain HTTP: headers, /healthz, escaping, the 401
// and 503 pages (fast, with the circuit breaker, whether the service refuses
// connections or hangs), no token in any log line, and a graceful SIGTERM.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { refusedToken, requirePrograms, startHungServer, startMock, startPortal, tokens } from './harness.mjs';

requirePrograms('STUDENT_PORTAL_BIN', 'STUDENTSVC_TOOL');

const get = (url, token, init = {}) =>
  fetch(url, { ...init, headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...init.headers } });

// The bound on a page that must be fast: generous for a loaded 2-core machine.
const fastPageMs = 2000;

/// Runs `request` and resolves with its response and how long it took in ms.
async function timed(request) {
  const start = performance.now();
  const res = await request();
  return { res, ms: Math.round(performance.now() - start) };
}

/// The portal's log lines written after offset `from`, once there are `count`
/// of them (the line is written as the response goes out, so it may trail it).
async function logLines(portal, from, count) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const lines = portal.log.slice(from).split('\n').filter((l) => l.startsWith('student-portal: '));
    if (lines.length >= count || Date.now() > deadline) return lines;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function assertSecurityHeaders(res) {
  assert.equal(res.headers.get('cache-control'), 'no-store');
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /^default-src 'none'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|script-src/);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
}

describe('student-portal over HTTP', () => {
  let mock;
  let portal;
  const pages = [];  // every body the portal sent, checked for tokens at the end
  const read = async (res) => { const body = await res.text(); pages.push(body); return body; };

  before(async () => {
    mock = await startMock();
    portal = await startPortal(mock.env, { STUDENTSVC_LOG: 'debug' });  // the SDK's own log lines too
  });
  after(async () => {
    await portal?.stop();
    await mock?.stop();
  });

  test('/healthz answers 200', async () => {
    const res = await get(`${portal.url}/healthz`);
    assert.equal(res.status, 200);
    assert.equal(await read(res), 'ok\n');
    assertSecurityHeaders(res);
  });

  test('/ shows the token\'s own student, with no-store and a restrictive CSP', async () => {
    const res = await get(`${portal.url}/`, tokens.avery);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/html; charset=utf-8/);
    assertSecurityHeaders(res);
    const body = await read(res);
    assert.match(body, /<dd data-field="name">Avery Lee-Ortiz<\/dd>/);
    assert.match(body, /<dd data-field="perm">1111111<\/dd>/);
    assert.match(body, /<dd data-field="email">avery.lee@example.edu<\/dd>/);
    assert.doesNotMatch(body, /2222222|3333333/);
  });

  test('a name holding markup is escaped, and missing facts say withheld', async () => {
    const body = await read(await get(`${portal.url}/`, tokens.bo));
    assert.match(body, /<dd data-field="name">Bo &lt;b&gt; Marsh&lt;\/b&gt; &amp; &quot;Sons&quot; JR<\/dd>/);
    assert.doesNotMatch(body, /<b>|<\/b>/);
    assert.match(body, /<dd data-field="middleName" class="withheld">withheld<\/dd>/);
    assert.match(body, /<dd data-field="lastRegisteredQuarter">20241<\/dd>/);
  });

  test('no token gives the 401 sign-in page', async () => {
    for (const authorization of [undefined, 'Basic dXNlcjpwYXNz', 'Bearer ']) {
      const res = await fetch(`${portal.url}/`, { headers: authorization ? { Authorization: authorization } : {} });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      assertSecurityHeaders(res);
      assert.match(await read(res), /Please sign in again/);
    }
  });

  test('a token the service refuses gives the 401 page, never the service\'s body', async () => {
    const res = await get(`${portal.url}/`, refusedToken);
    assert.equal(res.status, 401);
    const body = await read(res);
    assert.match(body, /Please sign in again/);
    assert.doesNotMatch(body, /user token is not valid|Authorization has been denied/);  // the mock's 401 texts
  });

  test('the stylesheet is served by the portal, other paths and methods are refused', async () => {
    const css = await get(`${portal.url}/portal.css`);
    assert.equal(css.status, 200);
    assert.match(css.headers.get('content-type'), /^text\/css/);
    assertSecurityHeaders(css);
    assert.equal((await get(`${portal.url}/admin`, tokens.avery)).status, 404);
    const post = await get(`${portal.url}/`, tokens.avery, { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    const head = await get(`${portal.url}/`, tokens.avery, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assertSecurityHeaders(head);
  });

  test('a query string never reaches the log', async () => {
    const before = portal.log.length;
    const withQuery = await get(`${portal.url}/?token=${tokens.casey}&next=%2Fadmin`, tokens.casey);
    assert.equal(withQuery.status, 200);  // the path is /, the query is ignored
    await read(withQuery);
    const inPath = await get(`${portal.url}/${tokens.casey}`, tokens.casey);
    assert.equal(inPath.status, 404);
    await read(inPath);
    const lines = await logLines(portal, before, 2);
    assert.match(lines[0], /^student-portal: GET \/ 200 \d+ms$/);  // the path alone, no '?'
    assert.match(lines[1], /^student-portal: GET \(other path\) 404 \d+ms$/);
    for (const line of lines) {
      assert.ok(!line.includes('?') && !line.includes('token=') && !line.includes('next='), `logged: ${line}`);
      assert.ok(!line.includes(tokens.casey), `the token reached the log: ${line}`);
    }
  });

  test('with the service stopped the page is 503, fast, and the circuit breaker opens', async () => {
    await mock.stop();
    for (let i = 0; i < 5; i++) {
      const { res, ms } = await timed(() => get(`${portal.url}/`, tokens.avery));
      assert.equal(res.status, 503);
      assertSecurityHeaders(res);
      assert.match(await read(res), /Student records are unavailable/);
      // A refused connection fails each attempt at once: even before the
      // breaker opens a page is one attempt, a backoff of at most 100 ms and
      // another attempt, far below the retry budget (max_total_time, 8 s).
      assert.ok(ms < fastPageMs, `a 503 took ${ms} ms with the service stopped`);
    }
    // After failure_threshold failures in a row the breaker refuses at once, without the network.
    assert.match(portal.log, /GET \/ 503 \d+ms upstream=transport/);
    assert.match(portal.log, /GET \/ 503 \d+ms upstream=circuit_open/);
  });

  test('no token appears in a log line or a page', async () => {
    const secrets = [...Object.values(tokens), refusedToken];
    for (const token of secrets) {
      assert.ok(!portal.log.includes(token), `the log holds ${token}`);
      for (const body of pages) assert.ok(!body.includes(token), `a page holds ${token}`);
    }
    assert.match(portal.log, /student-portal: GET \/ 200 \d+ms/);  // the log was written at all
    assert.match(portal.log, /GET \(other path\) 404/);
    assert.match(portal.log, /studentsvc debug:/);  // STUDENTSVC_LOG reached the SDK's logger
  });
});

describe('student-portal in front of a service that hangs', () => {
  // Accepts connections and reads the requests, never answers: each attempt
  // waits out the portal's 5 s timeout, until the circuit breaker opens.
  let hung;
  let portal;
  let mock;
  before(async () => {
    hung = await startHungServer();
    mock = await startMock();  // only for its credentials; the portal is pointed at `hung`
    portal = await startPortal(mock.env, { STUDENTSVC_BASE_URL: hung.url });
  });
  after(async () => {
    await portal?.stop();
    await hung?.stop();
    await mock?.stop();
  });

  test('the 503 page is fast once the circuit breaker is open', async () => {
    // Three page views at once: their first attempts time out together (5 s),
    // three failures in a row open the breaker and their retries are refused.
    const opening = await Promise.all([0, 1, 2].map(() => timed(() => get(`${portal.url}/`, tokens.avery))));
    for (const { res, ms } of opening) {
      assert.equal(res.status, 503);
      assert.match(await res.text(), /Student records are unavailable/);
      // They waited for the service: at least the connect succeeded and the timeout ran out.
      assert.ok(ms >= 4000, `a page view against the hung service took only ${ms} ms`);
    }
    assert.ok(hung.connections() >= 3, `the hung service saw ${hung.connections()} connections`);
    const seen = hung.connections();
    // Open (cool-down 10 s): refused at once, without the network.
    for (let i = 0; i < 5; i++) {
      const { res, ms } = await timed(() => get(`${portal.url}/`, tokens.avery));
      assert.equal(res.status, 503);
      assertSecurityHeaders(res);
      const body = await res.text();
      assert.match(body, /Student records are unavailable/);
      for (const token of Object.values(tokens)) assert.ok(!body.includes(token));
      // Generous for a loaded 2-core machine, and far below the 5 s timeout and
      // the 8 s retry budget a page would wait without the breaker.
      assert.ok(ms < fastPageMs, `a 503 with the breaker open took ${ms} ms`);
    }
    assert.equal(hung.connections(), seen, 'the open breaker still let requests reach the service');
    // Eight 503s logged; at least the five fast ones refused by the breaker (the
    // three that opened it end with a retry it refused, or a second timeout).
    const count = (pattern) => (portal.log.match(pattern) ?? []).length;
    assert.equal(count(/GET \/ 503 \d+ms upstream=(circuit_open|transport)\n/g), 8);
    assert.ok(count(/GET \/ 503 \d+ms upstream=circuit_open\n/g) >= 5);
    // /healthz is the portal's own: it answers whatever the service does.
    assert.equal((await get(`${portal.url}/healthz`)).status, 200);
  });
});

describe('student-portal on SIGTERM', () => {
  test('finishes the request in progress, then exits 0', async () => {
    const slow = await startMock({ latency: 700 });
    const portal = await startPortal(slow.env);
    try {
      const pending = get(`${portal.url}/`, tokens.avery);
      await new Promise((r) => setTimeout(r, 300));
      portal.child.kill('SIGTERM');
      const res = await pending;
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('connection'), 'close');
      assert.match(await res.text(), /Avery Lee-Ortiz/);
      assert.equal(await portal.exited(), 0);
      assert.match(portal.log, /SIGTERM, stopping/);
      await assert.rejects(fetch(`${portal.url}/healthz`));  // no longer listening
    } finally {
      await portal.stop();
      await slow.stop();
    }
  });
});
