/**
 * Hidden-class anchors for the runner's hot path.
 *
 * V8 compiles hot functions against the hidden classes ("maps") of the objects they saw, holds
 * those maps weakly from the compiled code, and throws the code away when one of them dies. A
 * map dies with the last object that has it. In a process that runs one pipeline after another,
 * the first run's objects (its `Run`, nodes, jobs, executor, store) all become garbage together,
 * and the next major collection takes the scheduler's optimised code with them: the next run
 * starts over in unoptimised code. Measured on a 100k-step in-memory run after a collection,
 * that warm-up was about a sixth of the run.
 *
 * Each class of the synchronous path keeps one idle instance here, made when its module loads
 * and never used. An anchor has the same map as the instances a run makes only if it went
 * through the same field initialisers with values of the same representation (a field that
 * starts as a small integer and later holds a double moves its object to a new map), so those
 * fields start as what they will hold.
 */
const anchors: object[] = [];

/** Keeps `instance` (and so its hidden class) alive for the life of the process; returns it. */
export function anchor<T extends object>(instance: T): T {
  anchors.push(instance);
  return instance;
}
