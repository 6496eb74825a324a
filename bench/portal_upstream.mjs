// A stand-in for the student service for scripts/bench-portal.sh's second
// pass: answers the portal's two calls from the portal's test fixture
// (`current` by the svc-user-jwt header, then the student by perm) at once,
// on one event loop, keeping every connection open. Unlike `studentsvc mock`
// (cpp-httplib: 32 worker threads, each held by one keep-alive connection
// while it stays busy), it never leaves a connection waiting for a thread, so
// the pass shows the portal's own latency under 200 concurrent page views.
// No credential is checked: a benchmark server, never a test double.
//
//   node portal_upstream.mjs FIXTURE.json    prints http://127.0.0.1:PORT
import http from 'node:http';
import { readFileSync } from 'node:fs';

const fixture = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byPerm = new Map(fixture.students.map((s) => [s.perm, JSON.stringify(s)]));
const tokens = new Map(Object.entries(fixture.tokens));

const server = http.createServer((req, res) => {
  const m = req.url.match(/^\/students\/v2\/students\/([^/?]+)/);
  const perm = m && (m[1] === 'current' ? tokens.get(req.headers['svc-user-jwt']) : m[1]);
  const body = perm && byPerm.get(perm);
  req.resume();
  if (!body) {
    res.writeHead(m && m[1] === 'current' ? 401 : 404, { 'content-type': 'application/json' });
    res.end('{"message":"no"}');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));
