import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { apply, ATTEMPT, CHECKPOINT_DIR, COMMAND_REF, command, describeDrift, input, isCommandStep, lower, makeTask, OUT, type CairnError } from '../src/index.js';

const project = mkdtempSync(join(tmpdir(), 'cairn-command-core-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));
writeFileSync(join(project, 'tokenize.py'), 'print("v1")\n');
writeFileSync(join(project, 'helper.py'), 'X = 1\n');
mkdirSync(join(project, 'configs'));
writeFileSync(join(project, 'configs', 'model.json'), '{"layers": 2}\n');

const raw = apply({ name: 'raw', fn: (_: { out: string }) => undefined, version: 'v1', inputs: { out: OUT } });

function tokenize(extra: { sources?: string[]; version?: string } = {}) {
  return command({
    name: 'tokenize',
    version: extra.version ?? 'v1',
    program: 'python3',
    args: ['tokenize.py', '--in', input('corpus'), '--vocab', input('vocab'), '--out', OUT, '--attempt', ATTEMPT],
    inputs: { corpus: raw, vocab: 32000 },
    sources: extra.sources ?? ['tokenize.py', 'configs/model.json'],
    dir: project,
  });
}

function train(tok: ReturnType<typeof tokenize>) {
  return command({ name: 'train', version: 'v1', program: 'python3', args: ['-c', 'pass', input('tokens')], inputs: { tokens: tok }, dir: project });
}

function caught(f: () => unknown): CairnError {
  try {
    f();
  } catch (e) {
    return e as CairnError;
  }
  throw new Error('expected an error');
}

describe('command(): identity', () => {
  it('is an apply step with the reserved function reference, dependencies from its placeholders', () => {
    const tok = tokenize();
    expect(isCommandStep(tok)).toBe(true);
    expect(isCommandStep(raw)).toBe(false);
    expect(tok.deps).toEqual([raw]);
    const spec = lower(tok);
    expect(spec.ref).toEqual(COMMAND_REF);
    expect(spec.kind).toBe('apply');
    const payload = JSON.parse(spec.fingerprintPayload as string) as Record<string, unknown>;
    expect(payload.program).toBe('python3');
    expect(payload.args).toEqual(['tokenize.py', '--in', '<dep:raw@v1>', '--vocab', '32000', '--out', '<OUT>', '--attempt', { $context: 'attempt' }]);
    expect(Object.keys(payload.sources as object)).toEqual(['configs/model.json', 'tokenize.py']);
    // The project directory and runtime values are not in the payload.
    expect(spec.fingerprintPayload).not.toContain(project);
    const task = makeTask(spec, { outputPath: '/o', depPaths: {}, attempt: 1 });
    expect(task.ref).toEqual({ module: 'cairn:command', export: 'run' });
    expect((task.inputs as Record<string, unknown>).cwd).toBe(project);
  });

  it('changes when a declared source changes (and so do its dependents), not when an undeclared file does', () => {
    const before = lower(train(tokenize()));
    const tokBefore = before.deps[0]!.nameWithHash;
    writeFileSync(join(project, 'helper.py'), 'X = 2\n'); // not declared
    const same = lower(train(tokenize()));
    expect(same.nameWithHash).toBe(before.nameWithHash);
    writeFileSync(join(project, 'tokenize.py'), 'print("v2")\n');
    const after = lower(train(tokenize()));
    expect(after.deps[0]!.nameWithHash).not.toBe(tokBefore);
    expect(after.nameWithHash).not.toBe(before.nameWithHash);
    // What plan/explain print for it: the file, not its hashes.
    expect(describeDrift(before.deps[0]!.fingerprintPayload!, after.deps[0]!.fingerprintPayload!)).toEqual(['tokenize.py changed']);
    const fewer = lower(tokenize({ sources: ['tokenize.py'] }));
    expect(describeDrift(after.deps[0]!.fingerprintPayload!, fewer.fingerprintPayload!)).toEqual(['configs/model.json: no longer a declared source']);
  });

  it('hashes program, args and env; not runtime, dir or killGraceMs', () => {
    const base = { name: 's', version: 'v1', program: 'true', args: ['a'], dir: project };
    const h = (o: Record<string, unknown>) => lower(command({ ...base, ...o } as Parameters<typeof command>[0])).nameWithHash;
    const ref = h({});
    expect(h({ args: ['b'] })).not.toBe(ref);
    expect(h({ program: 'false' })).not.toBe(ref);
    expect(h({ env: { SEED: '1' } })).not.toBe(ref);
    expect(h({ runtime: { threads: 8 } })).toBe(ref);
    expect(h({ killGraceMs: 5 })).toBe(ref);
    mkdirSync(join(project, 'elsewhere'), { recursive: true });
    expect(h({ dir: join(project, 'elsewhere') })).toBe(ref);
  });

  it('takes a file URL (import.meta.url) as its project directory', () => {
    const tok = command({ name: 't', version: 'v1', program: 'python3', sources: ['tokenize.py'], dir: pathToFileURL(join(project, 'tokenize.py')).href });
    expect(((lower(tok).inputs as Record<string, unknown>).cwd)).toBe(project);
  });
});

describe('command(): bad input is a typed error before anything runs', () => {
  it('a placeholder naming no input', () => {
    const e = caught(() => command({ name: 'bad', version: 'v1', program: 'python3', args: [input('corpsu' as 'corpus')], inputs: { corpus: raw }, dir: project }));
    expect(e.code).toBe('CAIRN_INVALID_SPEC');
    expect(e.step).toBe('bad');
    expect(e.message).toContain('did you mean "corpus"');
  });

  it('a non-string argument, a handle given directly, an object input used as an argument', () => {
    const num = caught(() => command({ name: 'bad', version: 'v1', program: 'python3', args: ['--n', 5 as unknown as string], dir: project }));
    expect(num.code).toBe('CAIRN_INVALID_SPEC');
    expect(num.message).toContain('args[1]');
    expect(num.message).toContain('write "5"');
    const handle = caught(() => command({ name: 'bad', version: 'v1', program: 'python3', args: [raw as unknown as string], dir: project }));
    expect(handle.message).toContain("input('<name>')");
    const obj = caught(() => command({ name: 'bad', version: 'v1', program: 'python3', args: [input('cfg')], inputs: { cfg: { a: 1 } }, dir: project }));
    expect(obj.message).toContain('$CAIRN_CONTEXT');
  });

  it('a missing program, or one that is not executable', () => {
    const e = caught(() => command({ name: 'bad', version: 'v1', program: 'pythn3-no-such', dir: project }));
    expect(e.code).toBe('CAIRN_COMMAND_NOT_FOUND');
    expect(e.message).toContain('not an executable on PATH');
    writeFileSync(join(project, 'run.sh'), '#!/bin/sh\n');
    chmodSync(join(project, 'run.sh'), 0o644);
    expect(caught(() => command({ name: 'bad', version: 'v1', program: './run.sh', dir: project })).code).toBe('CAIRN_COMMAND_NOT_FOUND');
    chmodSync(join(project, 'run.sh'), 0o755);
    expect(isCommandStep(command({ name: 'ok', version: 'v1', program: './run.sh', dir: project }))).toBe(true);
    // A step bound for another host finds its program there.
    expect(isCommandStep(command({ name: 'ok', version: 'v1', program: 'torchrun-elsewhere', executor: 'slurm', dir: project }))).toBe(true);
  });

  it('a missing, unreadable or directory source, and one escaping the project', () => {
    const missing = caught(() => tokenize({ sources: ['tokenise.py'] }));
    expect(missing.code).toBe('CAIRN_COMMAND_SOURCE');
    expect(missing.message).toContain('does not exist');
    expect(missing.step).toBe('tokenize');
    expect(caught(() => tokenize({ sources: ['configs'] })).message).toContain('is a directory');
    const escape = caught(() => tokenize({ sources: ['../etc/passwd'] }));
    expect(escape.code).toBe('CAIRN_COMMAND_SOURCE');
    expect(escape.message).toContain('outside the project directory');
    expect(caught(() => tokenize({ sources: ['/etc/hostname'] })).message).toContain('outside the project directory');
    if (process.getuid?.() !== 0) {
      writeFileSync(join(project, 'secret.py'), 'x');
      chmodSync(join(project, 'secret.py'), 0o000);
      expect(caught(() => tokenize({ sources: ['secret.py'] })).message).toContain('cannot be read');
    }
  });

  it('reserved or malformed env names, unknown options', () => {
    expect(caught(() => command({ name: 'bad', version: 'v1', program: 'true', env: { CAIRN_CONTEXT: 'x' }, dir: project })).message).toContain('reserved');
    expect(caught(() => command({ name: 'bad', version: 'v1', program: 'true', env: { 'A-B': 'x' }, dir: project })).code).toBe('CAIRN_INVALID_SPEC');
    expect(caught(() => command({ name: 'bad', version: 'v1', program: 'true', argv: [] } as never)).code).toBe('CAIRN_UNKNOWN_OPTION');
  });
});

describe('command(): checkpoints and preemption options', () => {
  const base = { name: 'train', version: 'v1', program: 'python3', dir: project } as const;
  it('CHECKPOINT_DIR lowers to a context marker; the preemption and checkpoint options are not identity', () => {
    const a = lower(command({ ...base, args: ['--ckpt', CHECKPOINT_DIR] }));
    const b = lower(command({ ...base, args: ['--ckpt', CHECKPOINT_DIR], preemptionExitCodes: [75], preemptionRetries: 5, keepCheckpoints: true }));
    expect(a.nameWithHash).toBe(b.nameWithHash);
    expect((a.inputs as { args: unknown[] }).args).toEqual(['--ckpt', { $context: 'checkpointDir' }]);
    expect(b.runtime).toMatchObject({ preemptionExitCodes: [75], preemptionRetries: 5, keepCheckpoints: true });
    expect(String(CHECKPOINT_DIR)).toBe('CHECKPOINT_DIR');
  });

  it.each([
    ['preemptionExitCodes', [0]],
    ['preemptionExitCodes', 75],
    ['preemptionRetries', -1],
    ['keepCheckpoints', 'yes'],
  ])('rejects %s: %j with CAIRN_INVALID_SPEC naming the step', (key, value) => {
    expect(() => command({ ...base, [key]: value } as never)).toThrow(expect.objectContaining({ code: 'CAIRN_INVALID_SPEC', step: 'train' }));
  });
});
