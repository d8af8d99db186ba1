// What the browser tests share (tests/viewer/view_page_test.mjs, tests/web/page_test.mjs):
// their `--name value` command line, Debian's Chromium with playwright-core from this
// folder's node_modules (installed by scripts/setup.sh with npm ci), and the check list
// each test prints and exits on. Exit 77 (skipped) where no Chromium is installed.
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';

/** `--name value` pairs of the command line as an object. */
export function commandLine(argv = process.argv.slice(2)) {
  return Object.fromEntries(argv.reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
}

/** playwright-core's chromium and the browser binary to launch; exits 77 without Chromium. */
export async function findChromium(args) {
  const chromiumPath = args.chromium || process.env.KEEL_CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(chromiumPath)) {
    console.log(`SKIPPED: no Chromium at ${chromiumPath} (scripts/setup.sh installs Debian's chromium; set KEEL_CHROMIUM to use another)`);
    process.exit(77);
  }
  try {
    const { chromium } = await import('playwright-core');
    return { chromium, chromiumPath };
  } catch (e) {
    console.error(`FAILED: playwright-core is not installed in tests/viewer/node_modules: run scripts/setup.sh (it runs npm ci there)`);
    process.exit(1);
  }
}

/** A list of failed checks and `check(ok, what)`, which prints each with its time. */
export function checkList() {
  const failures = [];
  const started = Date.now();
  const check = (ok, what) => {
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${what} [${((Date.now() - started) / 1000).toFixed(1)} s]`);
    if (!ok) failures.push(what);
  };
  return { failures, check };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A TCP port free on 127.0.0.1 now (the kernel's choice, released at once).
export const freePort = () => new Promise((res, rej) => {
  const s = createServer();
  s.on('error', rej);
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => res(port)); });
});

// One sample's value from /metrics text (labels included in `name`), or -1 when absent.
export const metric = (text, name) => {
  const m = new RegExp(`^${name.replace(/[{}"=]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : -1;
};
