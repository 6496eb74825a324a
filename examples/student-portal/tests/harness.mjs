// Starts `studentsvc mock` and the portal on 127.0.0.1 for the tests, as a
// deployment runs them: the portal's settings come from the STUDENTSVC_*
// lines the mock prints, the tokens from the fixture file.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const fixtures = join(here, 'fixtures', 'students.json');
export const tokens = { avery: 'tok-avery-7f3a9c', bo: 'tok-bo-51d2e8', casey: 'tok-casey-9b04aa' };
export const refusedToken = 'tok-revoked-0c7d11';  // not in the fixture: the service answers 401

export const skip = 77;  // ctest's SKIP_RETURN_CODE for these tests
/// Exits as skipped when a program the tests need was not found at configure time.
export function requirePrograms(...names) {
  for (const name of names) {
    if (!process.env[name]) {
      console.log(`skipped: ${name} is not set (the program was not found when the build was configured)`);
      process.exit(skip);
    }
  }
}

export function artifactsDir() {
  const dir = process.env.STUDENT_PORTAL_ARTIFACTS ?? join(process.cwd(), 'artifacts');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/// Resolves with the first line of `stream` that matches `pattern` (its match), or rejects after `ms`.
function waitForLine(child, stream, pattern, ms, what) {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${what}: no line matching ${pattern} within ${ms} ms`)), ms);
    const onData = (chunk) => {
      buffered += chunk;
      const match = buffered.match(pattern);
      if (match) {
        clearTimeout(timer);
        stream.off('data', onData);
        resolve(match);
      }
    };
    stream.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before printing ${pattern}`));
    });
  });
}

function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/// `export NAME='value'` lines (POSIX single quotes, `'\''` inside) to an object.
export function parseExports(text) {
  const env = {};
  for (const line of text.split('\n')) {
    const m = line.match(/^export ([A-Z_]+)=(.*)$/);
    if (m) env[m[1]] = m[2].replace(/^'|'$/g, '').replaceAll("'\\''", "'");
  }
  return env;
}

/// The mock with the fixture students and tokens; `latency` in ms delays every answer.
export async function startMock({ latency = 0 } = {}) {
  const args = ['mock', '--students', fixtures];
  if (latency > 0) args.push('--latency', String(latency));
  const child = spawn(process.env.STUDENTSVC_TOOL, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  let out = '';
  child.stdout.on('data', (c) => { out += c; });
  await waitForLine(child, child.stdout, /STUDENTSVC_ALLOW_INSECURE_LOOPBACK=.*\n/, 15000, 'studentsvc mock');
  return {
    env: parseExports(out),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited(child);
    },
  };
}

/// The portal on 127.0.0.1:0 (a free port it reports), in front of `mock`.
/// `log` holds everything it wrote to stdout and stderr.
export async function startPortal(mockEnv, extraEnv = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('STUDENTSVC_')) env[k] = v;
  Object.assign(env, mockEnv, extraEnv);
  const child = spawn(process.env.STUDENT_PORTAL_BIN, ['--listen', '127.0.0.1:0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const portal = { log: '', url: '', child };
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (c) => { portal.log += c; });
  }
  const [, url] = await waitForLine(child, child.stdout, /listening on (http:\/\/127\.0\.0\.1:\d+)/, 15000, 'student-portal');
  portal.url = url;
  portal.stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited(child);
  };
  portal.exited = () => exited(child);
  return portal;
}

/// A service that hangs: on 127.0.0.1, it accepts every connection and reads
/// what is sent, and never answers. `connections()` counts those accepted.
export async function startHungServer() {
  const sockets = new Set();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    connections: () => accepted,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
