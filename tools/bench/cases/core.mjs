// @cairn/core: lowering, identities, and the backend kernels (toposort, expand, fingerprintAll).
// The backend is whatever @cairn/core chose in this process: the orchestrator runs each variant
// once with CAIRN_NATIVE=1 and once with CAIRN_NATIVE=0 (the TypeScript fallback).
import * as core from '@cairn/core';
import { specInternals } from '@cairn/core/internal';
import { byteTables, generate, relabel, sinks, toHandles, toSpecs } from '../generators.mjs';
import { check, timeSync } from '../lib/timing.mjs';

const backend = core.getBackend();

export const variants = {
  /** `lower(targets)` end to end over `apply` handles (handles built once, untimed). */
  async lower({ shape, n }) {
    const graph = generate(shape, n);
    const built = timeSync(() => toHandles(core, graph));
    const handles = built.value;
    const roots = [...sinks(graph)].map((i) => handles[i]);
    const once = () => {
      const { ms, value } = timeSync(() => core.lower(roots));
      check(value.length === roots.length && /^n\d+-[0-9a-f]{16}$/.test(value[0].nameWithHash), 'lower() returned specs with identities');
      return { ms, handleBuildMs: built.ms };
    };
    return once;
  },

  /** `computeIdentities` over fresh, never-hashed `StepSpec`s (built untimed before each repetition). */
  async identities({ shape, n }) {
    const graph = generate(shape, n);
    const roots = sinks(graph);
    let tag = 0;
    return () => {
      const specs = toSpecs(core, graph, { tag: `t${tag++}` });
      const targets = [...roots].map((i) => specs[i]);
      const { ms } = timeSync(() => core.computeIdentities(targets));
      check(/^[0-9a-f]{16}$/.test(specInternals.peekHash(specs[n - 1]) ?? ''), 'every spec hashed');
      return ms;
    };
  },

  /** The backend's `fingerprintAll` on CSR arrays and packed byte tables (the kernel alone). */
  async fingerprintAll({ shape, n }) {
    const graph = generate(shape, n);
    const { names, attrs } = byteTables(graph);
    return () => {
      const { ms, value } = timeSync(() => backend.fingerprintAll(graph, names, attrs));
      check(value.ok && value.hex.length === 16 * n, 'fingerprintAll hashed every node');
      return ms;
    };
  },

  /** The backend's Kahn toposort on relabeled CSR arrays. */
  async toposort({ shape, n }) {
    const graph = relabel(generate(shape, n));
    return () => {
      const { ms, value } = timeSync(() => backend.toposort(graph));
      check(value.ok && value.order.length === n, 'toposort ordered every node');
      return ms;
    };
  },

  /** The backend's post-order expansion from every sink, nothing built (the runner's cold walk). */
  async expand({ shape, n }) {
    const graph = relabel(generate(shape, n));
    const roots = sinks(graph);
    const built = new Uint8Array(n);
    return () => {
      const seen = new Uint8Array(n);
      const { ms, value } = timeSync(() => backend.expand(graph, roots, built, seen));
      check(value.ok && value.order.length === n, 'expand reached every node');
      return ms;
    };
  },
};
