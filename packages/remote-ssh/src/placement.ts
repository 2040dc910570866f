import type { Resources } from '@cairn/core';

/** What a host offers. */
export interface HostCapacity {
  /** CPU cores. @default 1 */
  readonly cpus: number;
  /** Memory in GiB. @default Infinity (not tracked) */
  readonly memoryGb: number;
  /** GPU indices (as CUDA numbers them). @default [] */
  readonly gpus: readonly number[];
}

/** What one step takes while it runs. */
export interface Demand {
  readonly cpus: number;
  readonly memoryGb: number;
  readonly gpus: number;
}

/** A step's demand from its declared resources (cpu defaults to 1, memory and GPUs to 0). */
export function demandOf(r: Resources | undefined): Demand {
  const gpus = typeof r?.gpus === 'object' && r.gpus !== null ? r.gpus.count : (r?.gpus ?? 0);
  return { cpus: r?.cpu ?? 1, memoryGb: r?.memoryGb ?? 0, gpus };
}

/** Free/used accounting of one host; never oversubscribes. */
export class HostSlots {
  readonly capacity: HostCapacity;
  #cpus = 0;
  #memoryGb = 0;
  readonly #freeGpus: Set<number>;

  constructor(capacity: HostCapacity) {
    this.capacity = capacity;
    this.#freeGpus = new Set(capacity.gpus);
  }

  /** Whether the host could ever run `d` (when idle). */
  canEverFit(d: Demand): boolean {
    return d.cpus <= this.capacity.cpus && d.memoryGb <= this.capacity.memoryGb && d.gpus <= this.capacity.gpus.length;
  }

  /** Whether `d` fits now. */
  fits(d: Demand): boolean {
    return this.#cpus + d.cpus <= this.capacity.cpus && this.#memoryGb + d.memoryGb <= this.capacity.memoryGb && d.gpus <= this.#freeGpus.size;
  }

  /** Free CPU share in [0, 1] (placement spreads load to the emptiest host). */
  get freeShare(): number {
    return this.capacity.cpus === 0 ? 0 : 1 - this.#cpus / this.capacity.cpus;
  }

  /** Takes `d`; returns the GPU indices assigned (lowest free first). Call only when {@link fits}. */
  take(d: Demand): number[] {
    const gpus = [...this.#freeGpus].sort((a, b) => a - b).slice(0, d.gpus);
    this.reserve(d, gpus);
    return gpus;
  }

  /** Re-takes a known assignment (an adopted job). May exceed capacity transiently; adopted jobs already run. */
  reserve(d: Demand, gpus: readonly number[]): void {
    this.#cpus += d.cpus;
    this.#memoryGb += d.memoryGb;
    for (const g of gpus) this.#freeGpus.delete(g);
  }

  /** Gives back what {@link take} or {@link reserve} took. */
  release(d: Demand, gpus: readonly number[]): void {
    this.#cpus -= d.cpus;
    this.#memoryGb -= d.memoryGb;
    for (const g of gpus) if (this.capacity.gpus.includes(g)) this.#freeGpus.add(g);
  }
}
