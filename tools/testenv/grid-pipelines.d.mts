import type { StepSpec } from '@cairn/core';
export function napSteps(executor: string, count: number, tag: string): StepSpec[];
export function gridExecutor(scheduler: 'slurm' | 'sge', options: Record<string, unknown>): Promise<unknown>;
