/**
 * Building the page's markup from data. Every value goes in as text (`textContent`) or an
 * attribute set one by one; nothing the store holds is ever parsed as HTML.
 */

import { formatBytes } from '../../src/bytes.js';

type Child = Node | string | number | null | undefined | false;

/** An element with attributes and children (strings become text nodes). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) e.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(typeof c === 'object' ? c : String(c));
  return e;
}

/** Replaces an element's children. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  for (const c of children) if (c !== null && c !== undefined && c !== false) parent.append(typeof c === 'object' ? c : String(c));
}

/** `1.2 s`, `3 min 4 s`, `2 h 5 min`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** `512 KiB`, `3.2 MiB`; `–` when not measured. */
export function bytes(n: number | null | undefined): string {
  return n === null || n === undefined || !Number.isFinite(n) || n < 0 ? '–' : formatBytes(n);
}

/** Local date and time of an epoch ms. */
export function when(ms: number | null | undefined): string {
  return ms === null || ms === undefined || ms <= 0 ? '–' : new Date(ms).toLocaleString();
}

/** Fill colour of each step state (the same greens and reds as `cairn graph` and `cairn report`). */
export const STATE_COLORS: Readonly<Record<string, string>> = {
  succeeded: '#3fa34d',
  cached: '#7cc488',
  skipped: '#9bd3a5',
  running: '#3b82f6',
  retrying: '#f59e0b',
  'waiting-lease': '#eab308',
  pending: '#c5cad3',
  failed: '#d93f3f',
  'dep-failed': '#e89a9a',
  cancelled: '#8a8f98',
};

/** Colour of a state (grey for one this page does not know). */
export function stateColor(state: string): string {
  return STATE_COLORS[state] ?? '#c5cad3';
}

/** A small coloured badge naming a state. */
export function badge(state: string): HTMLElement {
  const b = el('span', { class: 'badge', 'data-state': state }, state);
  b.style.background = stateColor(state);
  return b;
}
