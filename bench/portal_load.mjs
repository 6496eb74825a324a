// Issue 38's load figure for examples/student-portal (scripts/bench-portal.sh
// starts the mock and the portal, then runs this): page views of `/`, each
// with a student's token as the auth proxy forwards it, `concurrency` at once
// (each of `concurrency` clients sends its next page view as soon as the last
// one is answered, on a keep-alive connection of its own), for `pages` page
// views in all after a warm-up. Prints p50 and p99 of the page views'
// latency, their rate, the portal process's thread count (the Threads: line
// of /proc/PID/status, sampled every 10 ms during the run: its maximum) and
// its CPU time a page (utime + stime of /proc/PID/stat over the run).
//
//   node portal_load.mjs --url http://127.0.0.1:PORT --pid PID --tokens T1,T2,... \
//     [--concurrency 200] [--pages 10000] [--upstream TEXT] [--name portal] [--clk-tck 100]
// --upstream names what the portal is in front of (printed); --name prefixes
// the BENCH lines. An answer other than a 200 page holding a record counts as
// an error (its latency is counted too); a connection error ends the run.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    url: { type: 'string' },
    pid: { type: 'string' },
    tokens: { type: 'string' },
    concurrency: { type: 'string', default: '200' },
    pages: { type: 'string', default: '10000' },
    upstream: { type: 'string', default: 'studentsvc mock' },
    name: { type: 'string', default: 'portal' },
    'clk-tck': { type: 'string', default: '100' },
  },
});
if (!opt.url || !opt.pid || !opt.tokens) {
  console.error('usage: node portal_load.mjs --url URL --pid PID --tokens T1,T2,... [--concurrency N] [--pages N]');
  process.exit(2);
}
const concurrency = Number(opt.concurrency);
const pages = Number(opt.pages);
const tokens = opt.tokens.split(',');
const target = new URL('/', opt.url);

function threads() {
  const status = readFileSync(`/proc/${opt.pid}/status`, 'utf8');
  return Number(status.match(/^Threads:\s+(\d+)/m)[1]);
}

/// The portal's CPU seconds so far: utime + stime, fields 14 and 15 of /proc/PID/stat.
function cpuSeconds() {
  const stat = readFileSync(`/proc/${opt.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');  // from field 3 on
  return (Number(fields[11]) + Number(fields[12])) / Number(opt['clk-tck']);
}

// One keep-alive connection per client, as 200 browsers (through the proxy) would.
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });

let errors = 0;
const statuses = new Map();
function view(token) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const req = http.get(target, { agent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => {
        const ms = Number(process.hrtime.bigint() - start) / 1e6;
        if (res.statusCode !== 200 || !body.includes('data-field="perm"')) {
          errors += 1;
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        }
        resolve(ms);
      });
    });
    req.on('error', reject);
  });
}

/// `total` page views, `concurrency` at once; their latencies in ms.
async function run(total) {
  const latencies = [];
  let next = 0;
  const client = async (c) => {
    while (next < total) {
      const i = next++;
      latencies.push(await view(tokens[(c + i) % tokens.length]));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, c) => client(c)));
  return latencies;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

const idleThreads = threads();
await run(Math.min(pages, concurrency * 5));  // warm-up: connections open on both hops
let maxThreads = threads();
const sampler = setInterval(() => { maxThreads = Math.max(maxThreads, threads()); }, 10);
errors = 0;
statuses.clear();
const start = process.hrtime.bigint();
const cpuBefore = cpuSeconds();
const latencies = await run(pages);
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
const cpuMsPerPage = ((cpuSeconds() - cpuBefore) * 1000) / pages;
clearInterval(sampler);
maxThreads = Math.max(maxThreads, threads());
agent.destroy();

latencies.sort((a, b) => a - b);
const p50 = quantile(latencies, 0.5);
const p99 = quantile(latencies, 0.99);
const n = opt.name;
console.log(`student-portal, ${pages} page views of /, ${concurrency} at once, one process in front of ${opt.upstream}`);
console.log(`  p50 ${p50.toFixed(1)} ms  p99 ${p99.toFixed(1)} ms  max ${latencies.at(-1).toFixed(1)} ms  ` +
            `${(pages / seconds).toFixed(0)} pages/s  portal CPU ${cpuMsPerPage.toFixed(3)} ms a page`);
console.log(`  portal threads: ${maxThreads} under load (${idleThreads} before the first page view)`);
if (errors > 0) {
  console.log(`  ${errors} page views were not the record: ` +
              [...statuses].map(([status, count]) => `${count} x ${status}`).join(', '));
}
console.log(`BENCH ${n}_p50_ms=${p50.toFixed(2)}`);
console.log(`BENCH ${n}_p99_ms=${p99.toFixed(2)}`);
console.log(`BENCH ${n}_pages_per_s=${(pages / seconds).toFixed(0)}`);
console.log(`BENCH ${n}_cpu_ms_per_page=${cpuMsPerPage.toFixed(3)}`);
console.log(`BENCH ${n}_threads=${maxThreads}`);
console.log(`BENCH ${n}_errors=${errors}`);
