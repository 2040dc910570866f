/**
 * Notifications reach a real program (JSON on stdin) and a real HTTP server on 127.0.0.1 with
 * the right counts; a webhook is retried after a 503; a hanging command and a webhook that never
 * answers are cut off at their timeouts and the run still ends; a non-http(s) webhook is refused.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { apply, hasCode } from '@cairn/core';
import { StepRunError, StepRunner, type NotifyEvent, type NotifySink } from '../src/index.js';
import { memoryLogger, tempDirs } from './helpers/graph.js';

const tmp = tempDirs();
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A webhook receiver on 127.0.0.1: `answer` decides each response (a status, or 'hang'). */
async function receiver(answer: (n: number) => number | 'hang' = () => 200): Promise<{ url: string; bodies: { path: string; body: unknown }[] }> {
  const bodies: { path: string; body: unknown }[] = [];
  let n = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const a = answer(n++);
      if (a === 'hang') return;
      res.writeHead(a, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

/** The events a command sink wrote, one file each. */
function commandEvents(dir: string): NotifyEvent[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith('ev-'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as NotifyEvent);
}

const byType = <T extends NotifyEvent['type']>(events: NotifyEvent[], type: T) => events.filter((e): e is Extract<NotifyEvent, { type: T }> => e.type === type);

describe('notifications', () => {
  it('a command and a webhook receive step-failed and run-end with the right counts', async () => {
    const prefix = tmp();
    const out = tmp();
    const hook = await receiver();
    const cached = apply({ name: 'cached', version: 'v1', fn: () => 1, inputs: {} });
    await new StepRunner({ prefix }).run([cached]);

    const ok = apply({ name: 'ok', version: 'v1', fn: () => 2, inputs: { c: cached } });
    const bad = apply({
      name: 'bad',
      version: 'v1',
      retries: 1,
      fn: () => {
        throw new Error('the vocabulary is empty');
      },
      inputs: {},
    });
    const after = apply({ name: 'after', version: 'v1', fn: () => 3, inputs: { bad } });
    const sinks: NotifySink[] = [
      { type: 'command', command: `cat > ${out}/ev-$$.json` },
      { type: 'webhook', url: `${hook.url}/json` },
      { type: 'webhook', url: `${hook.url}/chat`, format: 'slack', on: ['run-end'] },
    ];
    const logger = memoryLogger();
    const runner = new StepRunner({ prefix, logger, notify: { sinks } });
    const err = await runner.run([ok, after]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepRunError);

    // Every delivery is done when run() settles.
    const fromCommand = commandEvents(out);
    const fromHook = hook.bodies.filter((b) => b.path === '/json').map((b) => b.body as NotifyEvent);
    for (const events of [fromCommand, fromHook]) {
      const [end, ...moreEnds] = byType(events, 'run-end');
      expect(moreEnds).toEqual([]);
      expect(end?.outcome).toBe('failed');
      expect(end?.counts).toEqual({ succeeded: 1, cached: 1, skipped: 0, failed: 1, depFailed: 1, cancelled: 0 });
      expect(end?.targets).toEqual(['ok', 'after']);
      expect(end?.error?.code).toBe('CAIRN_STEP_FAILED');
      expect(end?.durationMs).toBeGreaterThanOrEqual(0);
      const failed = byType(events, 'step-failed');
      expect(failed.map((f) => f.step)).toEqual(['bad']);
      expect(failed[0]?.attempt).toBe(2);
      expect(failed[0]?.error.message).toContain('the vocabulary is empty');
      expect(failed[0]?.logs?.stderr).toMatch(/stderr/);
      expect(failed[0]?.path.startsWith(prefix)).toBe(true);
    }
    const chat = hook.bodies.filter((b) => b.path === '/chat').map((b) => b.body as { text: string });
    expect(chat).toHaveLength(1);
    expect(chat[0]?.text).toMatch(/run .* failed .* 1 built, 1 cached, 1 failed, 1 not run/);
    expect(logger.lines.filter((l) => l.includes('Notification'))).toEqual([]);
  }, 60_000);

  it('a successful run notifies run-end succeeded; a webhook answering 503 is retried', async () => {
    const prefix = tmp();
    const hook = await receiver((n) => (n === 0 ? 503 : 200));
    const logger = memoryLogger();
    const step = apply({ name: 'one', version: 'v1', fn: () => 1, inputs: {} });
    await new StepRunner({ prefix, logger, notify: { sinks: [{ type: 'webhook', url: hook.url, backoffMs: 50 }] } }).run([step]);
    expect(hook.bodies).toHaveLength(2);
    const end = hook.bodies[1]?.body as NotifyEvent;
    expect(end).toMatchObject({ type: 'run-end', outcome: 'succeeded', targets: ['one'], counts: { succeeded: 1, failed: 0 } });
    expect(logger.lines.filter((l) => l.includes('Notification'))).toEqual([]);
  }, 60_000);

  it('a hanging command and a webhook that never answers are cut off at their timeouts; the run ends', async () => {
    const prefix = tmp();
    const out = tmp();
    const hook = await receiver(() => 'hang');
    const pidFile = join(out, 'pid');
    const logger = memoryLogger();
    const step = apply({ name: 'one', version: 'v1', fn: () => 1, inputs: {} });
    const runner = new StepRunner({
      prefix,
      logger,
      notify: {
        sinks: [
          { type: 'command', command: `echo $$ > ${pidFile}; sleep 300; echo late`, timeoutMs: 1000 },
          { type: 'webhook', url: hook.url, timeoutMs: 1000, retries: 5 },
          // A program that does not exist: logged, the run goes on.
          { type: 'command', command: ['/nonexistent/notifier'] },
        ],
      },
    });
    const summary = await runner.run([step]);
    expect(summary.counts).toEqual({ succeeded: 1 });
    const warnings = logger.lines.filter((l) => l.startsWith('WARN Notification'));
    expect(warnings.some((w) => /command .* did not finish within 1000 ms and was killed/.test(w))).toBe(true);
    expect(warnings.some((w) => /webhook 127\.0\.0\.1:\d+ did not answer within 1000 ms/.test(w))).toBe(true);
    expect(warnings.some((w) => /\/nonexistent\/notifier.* could not be started/.test(w))).toBe(true);
    // The shell and its sleep were killed as a group.
    const pid = Number(readFileSync(pidFile, 'utf8'));
    for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
    expect(alive(pid)).toBe(false);
  }, 60_000);

  it('a step running past slowStepMs is notified once', async () => {
    const prefix = tmp();
    const hook = await receiver();
    const step = apply({ name: 'slow', version: 'v1', fn: async () => (await sleep(1500), 1), inputs: {} });
    await new StepRunner({ prefix, notify: { slowStepMs: 200, sinks: [{ type: 'webhook', url: hook.url, on: ['step-slow'] }] } }).run([step]);
    expect(hook.bodies.map((b) => b.body)).toEqual([expect.objectContaining({ type: 'step-slow', step: 'slow', attempt: 1, thresholdMs: 200 })]);
  }, 60_000);

  it('a webhook URL that is not http(s) is refused when the options are checked', () => {
    for (const url of ['ftp://example.com/hook', 'file:///tmp/hook', 'hooks.slack.com/services/x', '']) {
      let err: unknown;
      try {
        new StepRunner({ notify: { sinks: [{ type: 'webhook', url }] } });
      } catch (e) {
        err = e;
      }
      expect(hasCode(err, 'CAIRN_NOTIFY_URL')).toBe(true);
      expect((err as Error).message).toMatch(/http:\/\/ or https:\/\//);
    }
    expect(() => new StepRunner({ notify: { sinks: [{ type: 'command', command: [] }] } })).toThrow(/command/);
    expect(existsSync('/nonexistent/notifier')).toBe(false);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
