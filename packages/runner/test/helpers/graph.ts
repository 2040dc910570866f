import { afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StepSpec, type StepSpecInit } from '@cairn/core';

/** What a builder step does when it runs. */
export type Behaviour = (outputPath: string) => unknown;

/** A small fluent builder of StepSpec graphs whose functions record every call. */
export class Graph {
  readonly specs = new Map<string, StepSpec>();
  /** Names of steps in the order their functions were called. */
  readonly calls: string[] = [];
  readonly #behaviour = new Map<string, Behaviour>();

  /** Adds step `name` depending on `deps` (names added before). */
  step(name: string, deps: string[] = [], extra: Partial<StepSpecInit> & { run?: Behaviour } = {}): this {
    const { run, ...init } = extra;
    if (run) this.#behaviour.set(name, run);
    const spec = new StepSpec({
      name,
      hashAttrs: { name },
      deps: deps.map((d) => this.get(d)),
      fn: init.fn ?? ((out: string) => {
        this.calls.push(name);
        return this.#behaviour.get(name)?.(out);
      }),
      ...init,
    });
    this.specs.set(name, spec);
    return this;
  }

  /** Sets what `name` does when it runs next. */
  on(name: string, behaviour: Behaviour): this {
    this.#behaviour.set(name, behaviour);
    return this;
  }

  /** The spec named `name`. */
  get(name: string): StepSpec {
    const s = this.specs.get(name);
    if (!s) throw new Error(`no step ${name}`);
    return s;
  }

  /** Specs by name. */
  pick(...names: string[]): StepSpec[] {
    return names.map((n) => this.get(n));
  }

  /** How often `name` ran. */
  count(name: string): number {
    return this.calls.filter((c) => c === name).length;
  }
}

/** A chain s0 <- s1 <- … of `n` specs. */
export function chain(n: number, fn: StepSpecInit['fn'] = () => undefined): StepSpec[] {
  const out: StepSpec[] = [];
  for (let i = 0; i < n; i++) out.push(new StepSpec({ name: `s${i}`, hashAttrs: { i }, deps: i > 0 ? [out[i - 1] as StepSpec] : [], fn }));
  return out;
}

/** A fresh temp directory, removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-runner-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A logger that keeps lines. */
export function memoryLogger(): { lines: string[]; info(m: string): void; warn(m: string): void; error(m: string): void } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(`INFO ${m}`), warn: (m) => lines.push(`WARN ${m}`), error: (m) => lines.push(`ERROR ${m}`) };
}

/** Registers an `afterEach` that removes every temp directory made by the returned function. */
export function tempDirs(): () => string {
  const made: (() => void)[] = [];
  afterEach(() => {
    for (const c of made.splice(0)) c();
  });
  return () => {
    const t = tempDir();
    made.push(t.cleanup);
    return t.dir;
  };
}
