/** The step graph as plain data, for the dot, Mermaid and HTML renderers. */
import { indexSpecs, type StepSpec } from '@cairn/core';
import { PLAN_STATES, type StepState } from '../states.js';

export type { StepState } from '../states.js';

/** Every {@link StepState}, in legend order. */
export const STEP_STATES: readonly StepState[] = Object.keys(PLAN_STATES) as StepState[];

/** Human label of each state. */
export const STATE_LABELS: Readonly<Record<StepState, string>> = Object.fromEntries(STEP_STATES.map((s) => [s, PLAN_STATES[s].label])) as Record<StepState, string>;

/** Fill colour of each state (shared by dot, Mermaid and HTML so the pictures agree). */
export const STATE_COLORS: Readonly<Record<StepState, string>> = Object.fromEntries(STEP_STATES.map((s) => [s, PLAN_STATES[s].color])) as Record<StepState, string>;

/** One node. */
export interface GraphNode {
  /** `nameWithHash`. */
  readonly id: string;
  /** Step name. */
  readonly name: string;
  /** 16-hex hash. */
  readonly hash: string;
  /** Plan state. */
  readonly state: StepState;
  /** Why (from the plan), if known. */
  readonly reason?: string | undefined;
  /** Output location, when a prefix is known. */
  readonly output?: string | undefined;
  /** Executor the step asks for. */
  readonly executor?: string | undefined;
}

/** The graph: nodes dependencies-first, edges from dependency to dependent (node indices). */
export interface GraphModel {
  /** Nodes, dependencies first. */
  readonly nodes: readonly GraphNode[];
  /** `[dep, dependent]` index pairs. */
  readonly edges: readonly (readonly [number, number])[];
}

/** What a plan knows about one step, keyed by `nameWithHash`. */
export interface NodeFacts {
  readonly state: StepState;
  readonly reason?: string | undefined;
  readonly output?: string | undefined;
}

/** Builds the graph of everything reachable from `roots`, with facts from a plan where given. */
export function buildGraphModel(roots: readonly StepSpec[], facts: ReadonlyMap<string, NodeFacts> = new Map()): GraphModel {
  const { nodes: specs, index } = indexSpecs(roots);
  const nodes: GraphNode[] = specs.map((s) => {
    const f = facts.get(s.nameWithHash);
    return { id: s.nameWithHash, name: s.name, hash: s.hash, state: f?.state ?? 'unknown', reason: f?.reason, output: f?.output, executor: s.executor };
  });
  const edges: (readonly [number, number])[] = [];
  specs.forEach((s, i) => {
    for (const d of s.deps) edges.push([index.get(d) as number, i]);
  });
  return { nodes, edges };
}
