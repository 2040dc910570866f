import { addExtension, Packr } from 'msgpackr';
import { getBackend } from './backend.js';
import { CairnError } from './errors.js';
import { OUT, isOut } from './out.js';
import { computeIdentities } from './identity.js';
import { DepSlot } from './template.js';
import { StepSpec, type StepKind } from './spec.js';
import type { FnRef, Provenance, Resources } from './types.js';

/** Format version of encoded spec graphs; bumped on any incompatible change. */
export const SPEC_FORMAT_VERSION = 1;
const MAGIC = [0x43, 0x41, 0x49, 0x52, 0x4e]; // "CAIRN"
const HEADER = MAGIC.length + 1;

class MapBox {
  constructor(readonly entries: [unknown, unknown][]) {}
}
class OutBox {}
/** A plain object with an own `__proto__` key (msgpackr renames that key on decode): its entries, rebuilt as own data. */
class ProtoKeyBox {
  constructor(readonly entries: [string, unknown][]) {}
}

function fromEntries(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

// Extensions for Cairn's own classes only: other msgpackr users in the process are unaffected.
addExtension({ Class: DepSlot, type: 0x63, write: (s: DepSlot) => s.index, read: (i: number) => new DepSlot(i) });
addExtension({ Class: OutBox, type: 0x64, write: () => 0, read: () => OUT });
addExtension({ Class: ProtoKeyBox, type: 0x66, write: (b: ProtoKeyBox) => b.entries, read: (e: [string, unknown][]) => fromEntries(e) });
addExtension({ Class: MapBox, type: 0x65, write: (m: MapBox) => m.entries, read: (e: [unknown, unknown][]) => new Map(e) });

const packr = new Packr({ useRecords: false, moreTypes: true });

function box(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (isOut(v)) return new OutBox();
  if (v instanceof DepSlot) return v;
  if (v instanceof Map) return new MapBox([...v.entries()].map(([k, e]) => [box(k), box(e)]));
  if (Array.isArray(v)) return v.map(box);
  if (v instanceof Set) return new Set([...v].map(box));
  const proto = Object.getPrototypeOf(v) as object | null;
  if (proto === Object.prototype || proto === null) {
    if (Object.prototype.hasOwnProperty.call(v, '__proto__')) return new ProtoKeyBox(Object.entries(v).map(([k, e]) => [k, box(e)]));
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) out[k] = box(e);
    return out;
  }
  return v;
}

type NodeRecord = [
  name: string,
  hashAttrs: Record<string, unknown>,
  deps: number[],
  kind: StepKind,
  ref: [string, string] | null,
  inputs: unknown,
  resources: Resources | null,
  executor: string | null,
  overrideOutputPath: string | null,
  fingerprintPayload: string | null,
  version: string | null,
  fingerprint: string | null,
  expectedFingerprint: string | null,
  retries: number,
  timeoutMs: number | null,
  provenance: number,
  writesRecord: boolean,
  hash: string,
];

/** Encodes any Cairn value (inputs templates, results) as msgpack, keeping Map, Set, Date, bigint, bytes, `OUT` and dependency slots. */
export function packValue(value: unknown): Uint8Array {
  return packr.pack(box(value)) as Uint8Array;
}

/** Decodes {@link packValue}'s bytes. Throws on invalid msgpack. */
export function unpackValue(bytes: Uint8Array): unknown {
  return packr.unpack(bytes);
}

/**
 * All specs reachable from `roots`, dependencies first (iterative). With `byIdentity`, specs
 * with the same `nameWithHash` (e.g. one step lowered twice) count as one.
 */
export function collectSpecs(roots: readonly StepSpec[], byIdentity = false): StepSpec[] {
  return collect(roots, byIdentity).order;
}

function collect(roots: readonly StepSpec[], byIdentity: boolean): { order: StepSpec[]; alias: Map<StepSpec, StepSpec> } {
  const order: StepSpec[] = [];
  const done = new Set<StepSpec>();
  const firstByKey = new Map<string, StepSpec>();
  const alias = new Map<StepSpec, StepSpec>();
  const stack: StepSpec[] = [];
  const next: number[] = [];
  for (const root of roots) {
    if (done.has(root)) continue;
    stack.push(root);
    next.push(0);
    while (stack.length > 0) {
      const top = stack.length - 1;
      const node = stack[top] as StepSpec;
      const i = next[top] as number;
      if (i < node.deps.length) {
        next[top] = i + 1;
        const d = node.deps[i] as StepSpec;
        if (!done.has(d)) {
          stack.push(d);
          next.push(0);
        }
      } else {
        stack.pop();
        next.pop();
        if (!done.has(node)) {
          done.add(node);
          if (byIdentity) {
            const key = node.nameWithHash;
            const prior = firstByKey.get(key);
            if (prior !== undefined) {
              alias.set(node, prior);
              continue;
            }
            firstByKey.set(key, node);
          }
          order.push(node);
        }
      }
    }
  }
  return { order, alias };
}

/**
 * Encodes a spec graph as msgpack with a format header and a checksum. A shared
 * dependency is encoded once. Functions are not encoded: a decoded spec runs through its
 * `ref` (module + export).
 */
export function encodeSpecs(roots: readonly StepSpec[]): Uint8Array {
  computeIdentities(roots);
  const { order, alias } = collect(roots, true);
  const index = new Map<StepSpec, number>();
  order.forEach((s, i) => index.set(s, i));
  for (const [dup, kept] of alias) index.set(dup, index.get(kept) as number);
  const provs: Provenance[] = [];
  const provIndex = new Map<Provenance, number>();
  const nodes: NodeRecord[] = order.map((s) => {
    let p = -1;
    if (s.provenance) {
      p = provIndex.get(s.provenance) ?? -1;
      if (p < 0) {
        p = provs.push(s.provenance) - 1;
        provIndex.set(s.provenance, p);
      }
    }
    return [
      s.name,
      box(s.hashAttrs) as Record<string, unknown>,
      s.deps.map((d) => index.get(d) as number),
      s.kind,
      s.ref ? [s.ref.module, s.ref.export] : null,
      box(s.inputs),
      (s.resources as Resources | undefined) ?? null,
      s.executor ?? null,
      s.overrideOutputPath ?? null,
      s.fingerprintPayload ?? null,
      s.version ?? null,
      s.fingerprint ?? null,
      s.expectedFingerprint ?? null,
      s.retries,
      s.timeoutMs ?? null,
      p,
      s.writesRecord,
      s.hash,
    ];
  });
  const body = packr.pack({ v: SPEC_FORMAT_VERSION, roots: roots.map((r) => index.get(r) as number), nodes, provenance: provs }) as Uint8Array;
  const out = new Uint8Array(HEADER + body.length + 8);
  out.set(MAGIC, 0);
  out[MAGIC.length] = SPEC_FORMAT_VERSION;
  out.set(body, HEADER);
  new DataView(out.buffer, out.byteOffset).setBigUint64(HEADER + body.length, getBackend().xxh64(body), true);
  return out;
}

function corrupt(why: string, cause?: unknown): never {
  throw new CairnError('CAIRN_CODEC_CORRUPT', `Cannot decode spec bytes: ${why}. Re-create them with encodeSpecs() from the same Cairn version.`, { cause });
}

const str = (v: unknown): v is string => typeof v === 'string';
const optStr = (v: unknown): boolean => v === null || typeof v === 'string';

/**
 * Decodes bytes from {@link encodeSpecs}. Truncated, corrupt or foreign bytes throw
 * `CAIRN_CODEC_CORRUPT`; a graph is returned whole or not at all.
 */
export function decodeSpecs(bytes: Uint8Array): StepSpec[] {
  if (!(bytes instanceof Uint8Array)) corrupt('expected a Uint8Array');
  if (bytes.length < HEADER + 8) corrupt(`only ${bytes.length} bytes (truncated)`);
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC[i]) corrupt('missing the CAIRN header (not a spec graph)');
  const version = bytes[MAGIC.length];
  if (version !== SPEC_FORMAT_VERSION) corrupt(`format version ${String(version)}, this Cairn reads version ${SPEC_FORMAT_VERSION}`);
  const body = bytes.subarray(HEADER, bytes.length - 8);
  const sum = new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(bytes.length - 8, true);
  if (getBackend().xxh64(body) !== sum) corrupt('checksum mismatch (truncated or corrupted)');
  let data: { v?: unknown; roots?: unknown; nodes?: unknown; provenance?: unknown };
  try {
    data = packr.unpack(body) as typeof data;
  } catch (cause) {
    corrupt('invalid msgpack', cause);
  }
  if (typeof data !== 'object' || data === null || !Array.isArray(data.nodes) || !Array.isArray(data.roots)) corrupt('missing nodes or roots');
  const provs = Array.isArray(data.provenance) ? (data.provenance as Provenance[]) : [];
  const nodes = data.nodes as unknown[];
  // Validate every record before building anything.
  for (let i = 0; i < nodes.length; i++) {
    const r = nodes[i] as unknown[];
    if (!Array.isArray(r) || r.length !== 18) corrupt(`node ${i} is malformed`);
    if (!str(r[0]) || typeof r[1] !== 'object' || r[1] === null || !Array.isArray(r[2])) corrupt(`node ${i} is malformed`);
    for (const d of r[2] as unknown[]) if (typeof d !== 'number' || !Number.isInteger(d) || d < 0 || d >= i) corrupt(`node ${i} has a bad dependency index`);
    if (r[3] !== 'path' && r[3] !== 'apply') corrupt(`node ${i} has an unknown kind`);
    if (r[4] !== null && (!Array.isArray(r[4]) || !str(r[4][0]) || !str(r[4][1]))) corrupt(`node ${i} has a bad function reference`);
    for (const k of [7, 8, 9, 10, 11, 12]) if (!optStr(r[k])) corrupt(`node ${i} field ${k} is not a string`);
    if (typeof r[13] !== 'number' || typeof r[15] !== 'number' || typeof r[16] !== 'boolean' || !str(r[17])) corrupt(`node ${i} is malformed`);
  }
  for (const root of data.roots as unknown[]) if (typeof root !== 'number' || !Number.isInteger(root) || root < 0 || root >= nodes.length) corrupt('bad root index');
  const specs: StepSpec[] = [];
  try {
    for (const raw of nodes) {
      const r = raw as NodeRecord;
      const ref: FnRef | undefined = r[4] ? Object.freeze({ module: r[4][0], export: r[4][1] }) : undefined;
      specs.push(
        new StepSpec({
          name: r[0],
          hashAttrs: r[1],
          deps: r[2].map((d) => specs[d] as StepSpec),
          kind: r[3],
          ref,
          inputs: r[5],
          resources: r[6] ?? undefined,
          executor: r[7] ?? undefined,
          overrideOutputPath: r[8] ?? undefined,
          fingerprintPayload: r[9] ?? undefined,
          version: r[10] ?? undefined,
          fingerprint: r[11] ?? undefined,
          expectedFingerprint: r[12] ?? undefined,
          retries: r[13],
          timeoutMs: r[14] ?? undefined,
          provenance: r[15] >= 0 ? provs[r[15]] : undefined,
          writesRecord: r[16],
        }),
      );
    }
  } catch (cause) {
    corrupt('a node failed validation', cause);
  }
  const result = (data.roots as number[]).map((i) => specs[i] as StepSpec);
  // Identity must survive the trip: recompute (one batch) and compare.
  computeIdentities(specs);
  for (let i = 0; i < specs.length; i++) {
    const s = specs[i] as StepSpec;
    if (s.hash !== (nodes[i] as NodeRecord)[17]) corrupt(`node ${i} ("${s.name}") decodes to a different identity`);
  }
  return result;
}
