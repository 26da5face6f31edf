/**
 * The audit worker: one Lighthouse audit in its own process, started by the daemon's audit
 * runner (`node audit-worker.js`, request on stdin, messages on stdout). Lighthouse wants one
 * run per process and may use gigabytes; a crash or hang here cannot touch the daemon.
 */
import { constants, accessSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { LaunchedChrome } from 'chrome-launcher';
import lighthouse, { desktopConfig, generateReport, type Result as LighthouseResult } from 'lighthouse';
import { computeMedianRun, filterToValidRuns } from 'lighthouse/core/lib/median-run.js';
import type { AuditMetrics, AuditRequest, AuditScores, WorkerMessage } from './audit-protocol.js';
import { chromeFlags } from './chrome-flags.js';
import { launchChromium } from './launch-chromium.js';
import type { AuditFailureReason } from './performance.table.js';

class AuditFailure extends Error {
  constructor(
    readonly reason: AuditFailureReason,
    message: string,
  ) {
    super(message);
  }
}

const send = (message: WorkerMessage) => process.stdout.write(`${JSON.stringify(message)}\n`);

let runningChrome: LaunchedChrome | undefined;
const daemonPid = process.ppid;
// The daemon kills this process group at the time limit; should the daemon itself die, the
// worker is re-parented, and takes its Chrome down with it rather than finish for nobody.
setInterval(() => {
  if (process.ppid === daemonPid) return;
  runningChrome?.kill();
  process.exit(1);
}, 1000).unref();

/** Lighthouse's runtime error codes, folded into our vocabulary. */
function failureOf(code: string, message: string): AuditFailure {
  const unreachable = [
    'FAILED_DOCUMENT_REQUEST',
    'DNS_FAILURE',
    'CHROME_INTERSTITIAL_ERROR',
    'INSECURE_DOCUMENT_REQUEST',
  ];
  const pageErrors = [
    'ERRORED_DOCUMENT_REQUEST',
    'NO_FCP',
    'PAGE_HUNG',
    'NOT_HTML',
    'NO_LCP',
    'TARGET_CRASHED',
    'NO_NAVSTART',
    'NO_SPEEDLINE_FRAMES',
    'SPEEDINDEX_OF_ZERO',
  ];
  if (unreachable.includes(code)) return new AuditFailure('page_unreachable', `${code}: ${message}`);
  if (pageErrors.includes(code)) return new AuditFailure('page_error', `${code}: ${message}`);
  return new AuditFailure('lighthouse_error', `${code}: ${message}`);
}

function checkChrome(path: string): void {
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new AuditFailure(
      'chrome_unavailable',
      `no Chromium at ${path}: install Debian's chromium package or set CHROME_PATH to the browser`,
    );
  }
}

async function runOnce(request: AuditRequest, run: number): Promise<LighthouseResult> {
  const userDataDir = join(request.workDir, `profile-${run}`);
  await mkdir(userDataDir, { recursive: true });
  let chrome: LaunchedChrome;
  try {
    chrome = await launchChromium({
      chromePath: request.chromePath,
      userDataDir,
      chromeFlags: chromeFlags({
        auditedHost: new URL(request.url).hostname,
        auditedAddress: request.address,
        runningAsRoot: process.getuid?.() === 0,
        blockThirdParty: request.blockThirdParty,
      }),
      // HOME too: a dynamic systemd user has none, and Chrome writes below it.
      envVars: {
        HOME: userDataDir,
        XDG_CONFIG_HOME: userDataDir,
        XDG_CACHE_HOME: userDataDir,
        PATH: process.env.PATH ?? '/usr/bin:/bin',
      },
      handleSIGINT: false,
      logLevel: 'silent',
    });
  } catch (error) {
    throw new AuditFailure(
      'chrome_unavailable',
      `Chromium at ${request.chromePath} did not start: ${(error as Error).message}`,
    );
  }
  runningChrome = chrome;
  send({ type: 'chrome', pid: chrome.pid });
  try {
    chromeVersion ??= await browserVersion(chrome.port);
    const flags = {
      port: chrome.port,
      output: 'html' as const,
      logLevel: 'error' as const,
      maxWaitForLoad: request.maxWaitForLoadMs,
      disableFullPageScreenshot: true,
      onlyCategories: ['performance', 'accessibility', 'best-practices', 'seo'],
    };
    const result = await lighthouse(
      request.url,
      flags,
      request.formFactor === 'desktop' ? desktopConfig : undefined,
    ).catch((error: unknown) => {
      // Lighthouse throws its fatal errors (PROTOCOL_TIMEOUT, …) with the same codes it reports.
      const code = (error as { code?: unknown }).code;
      throw typeof code === 'string' ? failureOf(code, (error as Error).message) : error;
    });
    if (!result) throw new AuditFailure('lighthouse_error', 'Lighthouse returned no result');
    const { runtimeError } = result.lhr;
    if (runtimeError) throw failureOf(runtimeError.code, runtimeError.message);
    return result.lhr;
  } finally {
    runningChrome = undefined;
    chrome.kill();
    await rm(userDataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

let chromeVersion: string | null = null;

/** The user agent is reduced (`Chrome/156.0.0.0`); DevTools tells the full version. */
async function browserVersion(port: number): Promise<string | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/json/version`);
    const { Browser: browser } = (await response.json()) as { Browser?: string };
    return /\/([\d.]+)$/.exec(browser ?? '')?.[1] ?? null;
  } catch {
    return null;
  }
}

const numeric = (lhr: LighthouseResult, audit: string): number | null => lhr.audits[audit]?.numericValue ?? null;
const score = (lhr: LighthouseResult, category: string): number | null => lhr.categories[category]?.score ?? null;

function summarise(lhr: LighthouseResult): { scores: AuditScores; metrics: AuditMetrics } {
  return {
    scores: {
      performance: score(lhr, 'performance'),
      accessibility: score(lhr, 'accessibility'),
      bestPractices: score(lhr, 'best-practices'),
      seo: score(lhr, 'seo'),
    },
    metrics: {
      firstContentfulPaintMs: numeric(lhr, 'first-contentful-paint'),
      largestContentfulPaintMs: numeric(lhr, 'largest-contentful-paint'),
      totalBlockingTimeMs: numeric(lhr, 'total-blocking-time'),
      cumulativeLayoutShift: numeric(lhr, 'cumulative-layout-shift'),
      speedIndexMs: numeric(lhr, 'speed-index'),
      timeToFirstByteMs: numeric(lhr, 'server-response-time'),
    },
  };
}

async function audit(request: AuditRequest): Promise<void> {
  checkChrome(request.chromePath);
  const runs: LighthouseResult[] = [];
  for (let run = 0; run < request.runs; run++) runs.push(await runOnce(request, run));
  // Lighthouse's own choice among several runs: the one closest to the median FCP and TTI.
  const valid = filterToValidRuns(runs);
  const chosen = valid.length > 0 ? computeMedianRun(valid) : runs[0]!;
  const report = await promisify(gzip)(generateReport(chosen, 'html'));
  await mkdir(dirname(request.reportPath), { recursive: true });
  const partial = `${request.reportPath}.partial`;
  await writeFile(partial, report);
  await rename(partial, request.reportPath);
  send({
    type: 'completed',
    summary: {
      lighthouseVersion: chosen.lighthouseVersion,
      chromeVersion,
      ...summarise(chosen),
      reportBytes: report.length,
    },
  });
}

async function readRequest(): Promise<AuditRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as AuditRequest;
}

try {
  await audit(await readRequest());
  process.exitCode = 0;
} catch (error) {
  if (error instanceof AuditFailure) send({ type: 'failed', reason: error.reason, message: error.message });
  else
    send({
      type: 'failed',
      reason: 'lighthouse_error',
      message: error instanceof Error ? error.message : String(error),
    });
  process.exitCode = 0;
}
