// The spec codec: `encodeSpecs`/`decodeSpecs` (msgpack, with header, checksum, validation and
// an identity re-check on decode) vs `JSON.stringify`/`JSON.parse` of an equivalent plain
// structure (the same fields per node, dependencies as indices) encoded to UTF-8 bytes.
// JSON.parse only parses: it builds no StepSpec and checks nothing, so it is a lower bound.
import * as core from '@cairn/core';
import { generate, sinks, toHandles } from '../generators.mjs';
import { check, timeSync } from '../lib/timing.mjs';

function lowered(shape, n) {
  const graph = generate(shape, n);
  const handles = toHandles(core, graph);
  return core.lower([...sinks(graph)].map((i) => handles[i]));
}

function plainInputs(v) {
  if (typeof v !== 'object' || v === null) return v;
  if (v instanceof core.DepSlot) return { $dep: v.index };
  if (core.isOut(v)) return '<OUT>';
  if (Array.isArray(v)) return v.map(plainInputs);
  const out = {};
  for (const [k, e] of Object.entries(v)) out[k] = plainInputs(e);
  return out;
}

/** The plain-object equivalent of what `encodeSpecs` writes. */
function plainGraph(roots) {
  const order = core.collectSpecs(roots);
  const index = new Map(order.map((s, i) => [s, i]));
  const nodes = order.map((s) => ({
    name: s.name,
    hashAttrs: s.hashAttrs,
    deps: s.deps.map((d) => index.get(d)),
    kind: s.kind,
    ref: s.ref ? [s.ref.module, s.ref.export] : null,
    inputs: plainInputs(s.inputs),
    resources: s.resources ?? null,
    executor: s.executor ?? null,
    overrideOutputPath: s.overrideOutputPath ?? null,
    fingerprintPayload: s.fingerprintPayload ?? null,
    version: s.version ?? null,
    fingerprint: s.fingerprint ?? null,
    expectedFingerprint: s.expectedFingerprint ?? null,
    retries: s.retries,
    timeoutMs: s.timeoutMs ?? null,
    provenance: s.provenance ? 0 : -1,
    writesRecord: s.writesRecord,
    hash: s.hash,
  }));
  return { v: 1, roots: roots.map((r) => index.get(r)), nodes, provenance: [order[0]?.provenance ?? null] };
}

export const variants = {
  async 'msgpack encodeSpecs'({ shape, n }) {
    const roots = lowered(shape, n);
    return () => {
      const { ms, value } = timeSync(() => core.encodeSpecs(roots));
      return { ms, bytes: value.length };
    };
  },
  async 'JSON.stringify'({ shape, n }) {
    const plain = plainGraph(lowered(shape, n));
    return () => {
      const { ms, value } = timeSync(() => Buffer.from(JSON.stringify(plain)));
      return { ms, bytes: value.length };
    };
  },
  async 'msgpack decodeSpecs'({ shape, n }) {
    const roots = lowered(shape, n);
    const bytes = core.encodeSpecs(roots);
    return () => {
      const { ms, value } = timeSync(() => core.decodeSpecs(bytes));
      check(value.length === roots.length && value[0].hash === roots[0].hash, 'decoded the same identities');
      return { ms, bytes: bytes.length };
    };
  },
  async 'JSON.parse'({ shape, n }) {
    const bytes = Buffer.from(JSON.stringify(plainGraph(lowered(shape, n))));
    return () => {
      const { ms, value } = timeSync(() => JSON.parse(bytes.toString('utf8')));
      check(value.nodes.length === n, 'parsed every node');
      return { ms, bytes: bytes.length };
    };
  },
};
