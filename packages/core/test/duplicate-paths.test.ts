import { describe, expect, it } from 'vitest';
import { apply, lower, OUT, type ArtifactStep } from '../src/index.js';
import { thrown } from './helpers/thrown.js';

const step = (name: string, pin?: string, inputs: Record<string, unknown> = {}, version = 'v1'): ArtifactStep<unknown> =>
  apply({ name, version, fn: () => name, inputs: { ...inputs, out: OUT }, ...(pin === undefined ? {} : { pin }) });
const versioned = { layout: 'versioned' } as const;

describe('two steps lowered together that resolve to one output path', () => {
  it('two different steps with the same pin: CAIRN_DUPLICATE_STEP naming both', () => {
    // Issue 18: "b"'s function never ran and "b" got "a"'s output.
    const err = thrown(() => lower([step('a', 'shared/out'), step('b', 'shared/out')]));
    expect(err.code).toBe('CAIRN_DUPLICATE_STEP');
    expect(err.step).toBe('b');
    expect(err.message).toBe('Steps "b@v1" and "a@v1" resolve to one output path: both are pinned to "shared/out" under the prefix. Only one of them would run and both would get its output. Give "b" another pin (or none).');
  });

  it('pins equal after normalisation collide too', () => {
    expect(thrown(() => lower([step('a', 'x/./y/'), step('b', 'x//y')])).code).toBe('CAIRN_DUPLICATE_STEP');
    expect(thrown(() => lower([step('a', '/data/o'), step('b', '/data/x/../o')])).message).toMatch(/both are pinned to "\/data\/o"\./);
  });

  it("a pin equal to a versioned step's location (name/version)", () => {
    const err = thrown(() => lower([step('a'), step('b', 'a/v1')], versioned));
    expect(err.code).toBe('CAIRN_DUPLICATE_STEP');
    expect(err.message).toMatch(/^Steps "b@v1" and "a@v1" resolve to one output path: "b" is pinned to "a\/v1" under the prefix, which is where "a@v1" lives \(layout 'versioned': name\/version\)\./);
    // Content-addressed, a@v1 lives at a/v1-<hash>: the pin is another location.
    const [a, b] = lower([step('a'), step('b', 'a/v1')]);
    expect([a?.overrideOutputPath, b?.overrideOutputPath]).toEqual([`a/v1-${a?.hash}`, 'a/v1']);
  });

  it("a pin equal to its own dependency's path names the right step and the right cause", () => {
    // Issue 18: the error named the wrong step ("c" as its own dependency) and a pruned-output cause.
    const a = step('a');
    const err = thrown(() => lower(step('c', 'a/v1', { x: a }), versioned));
    expect(err.code).toBe('CAIRN_DUPLICATE_STEP');
    expect(err.step).toBe('c');
    expect(err.message).toMatch(/"c" is pinned to "a\/v1" under the prefix, which is where "a@v1" lives \(layout 'versioned': name\/version\)\. "c" depends on "a", so it would overwrite its own input\./);
    // Upstream, not only direct: d -> m -> a, with d pinned on a.
    const m = step('m', undefined, { a });
    expect(thrown(() => lower(step('d', 'a/v1', { m }), versioned)).message).toMatch(/"d" depends on "a"/);
  });

  it('nothing is refused when the locations differ, or for one step pinned at its own default', () => {
    expect(lower([step('a', 'p/1'), step('b', 'p/2'), step('c'), step('a', undefined, {}, 'v2')])).toHaveLength(4);
    expect(lower([step('self', 'self/v1')])[0]?.overrideOutputPath).toBe('self/v1');
    // The same step reached twice (one handle) is one node, not a collision.
    const shared = step('s', 'pinned/here');
    expect(lower([step('u', undefined, { shared }), step('v', undefined, { shared })])).toHaveLength(2);
  });
});
