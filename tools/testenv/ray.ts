/**
 * A one-host Ray cluster for the @cairn/remote-ray tests: a head node (GCS + dashboard with the
 * Jobs API on a free loopback port) and worker node processes, each `ray start --block` in its own
 * process group, stopped by pid (SIGTERM: Ray drains and stops the node's processes; SIGKILL to the
 * group after a grace). Never `ray stop`, which would stop every Ray on the machine.
 *
 * Ray comes from the virtual environment tools/testenv/install-ray.sh makes (`.venv-ray` at the
 * repository root, or $CAIRN_RAY_VENV). Kept small for a shared 2-core machine: `--num-cpus`,
 * a 100 MB object store, no usage stats.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, closeSync, rmSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './ports.js';

/** The virtual environment holding Ray. */
export function rayVenv(): string {
  return process.env.CAIRN_RAY_VENV ?? fileURLToPath(new URL('../../.venv-ray', import.meta.url));
}

/** Why Ray cannot run here (the fix included), or `undefined` when it can. */
export function missingRay(): string | undefined {
  const bin = `${rayVenv()}/bin/ray`;
  return existsSync(bin) ? undefined : `no Ray at ${bin}: run tools/testenv/install-ray.sh`;
}

/** Options of {@link startRay}. */
export interface StartRayOptions {
  /** CPUs of each node. @default 2 */
  readonly numCpus?: number;
  /** GPUs the worker node advertises (Ray sets CUDA_VISIBLE_DEVICES for jobs that ask). @default 0 */
  readonly workerGpus?: number;
  /** Worker nodes besides the head. @default 1 */
  readonly workers?: number;
  /**
   * Directories no node of the cluster (nor any job on it) can see: each node runs in its own
   * mount namespace (`unshare --mount`, with `--map-root-user` when not root) with an empty tmpfs
   * over each. A cluster that provably does not share the runner's filesystem. @default []
   */
  readonly hide?: readonly string[];
}

/** A running one-host Ray cluster. */
export interface RayCluster {
  /** The dashboard (Jobs API) address, `http://127.0.0.1:<port>`. */
  readonly address: string;
  /** The GCS address (`ray start --address`). */
  readonly gcs: string;
  /** Ray's session directory root (logs). */
  readonly tempDir: string;
  /** The `ray` binary. */
  readonly ray: string;
  /** Kills worker node `index` (0-based) and everything it runs, at once (SIGKILL to its process group): a node lost. */
  killWorker(index: number): Promise<void>;
  /** Stops every node by pid and removes the temp directory. */
  stop(): Promise<void>;
}

interface Node {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  readonly log: string;
}

/** Mounts an empty tmpfs over each of `$2…$(1+$1)`, then runs the rest. */
const HIDE_SCRIPT = 'n=$1; shift; while [ "$n" -gt 0 ]; do mount -t tmpfs -o size=1m,mode=000 cairn-hidden "$1" || exit 111; shift; n=$((n-1)); done; exec "$@"';

function startNode(ray: string, args: string[], log: string, hide: readonly string[] = []): Node {
  const fd = openSync(log, 'a');
  const argv = [ray, 'start', '--block', '--disable-usage-stats', ...args];
  const [file, ...rest] = hide.length === 0 ? argv : ['unshare', '--mount', ...(process.getuid?.() === 0 ? [] : ['--map-root-user']), '--', 'sh', '-c', HIDE_SCRIPT, 'sh', String(hide.length), ...hide, ...argv];
  const child = spawn(file as string, rest, {
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, RAY_USAGE_STATS_ENABLED: '0', RAY_DISABLE_DOCKER_CPU_WARNING: '1' },
  });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited, log };
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

async function stopNode(node: Node): Promise<void> {
  if (node.child.exitCode !== null || node.child.signalCode !== null) {
    killGroup(node.child.pid, 'SIGKILL');
    return;
  }
  node.child.kill('SIGTERM');
  const done = await Promise.race([node.exited.then(() => true), sleep(40_000).then(() => false)]);
  // Whatever the node left in its group (jobs' drivers, workers) goes with it.
  killGroup(node.child.pid, done ? 'SIGTERM' : 'SIGKILL');
  await sleep(200);
  killGroup(node.child.pid, 'SIGKILL');
}

async function fetchJson(url: string): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.json();
}

async function aliveNodes(address: string): Promise<number> {
  const body = (await fetchJson(`${address}/api/v0/nodes?limit=100`)) as { data?: { result?: { result?: { state: string }[] } } };
  return (body.data?.result?.result ?? []).filter((n) => n.state === 'ALIVE').length;
}

/** The last `n` lines of a log (the end of a Python traceback names the cause; the start is noise). */
function tailLines(file: string, n: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch (err) {
    return `(no log at ${file}: ${String(err)})`;
  }
}

/** Ports a node binds, all on free loopback ports so two clusters (or two test files) never meet. */
async function nodePorts(): Promise<string[]> {
  return [
    `--node-manager-port=${await freePort()}`,
    `--object-manager-port=${await freePort()}`,
    `--dashboard-agent-listen-port=${await freePort()}`,
    `--dashboard-agent-grpc-port=${await freePort()}`,
    `--runtime-env-agent-port=${await freePort()}`,
    `--metrics-export-port=${await freePort()}`,
  ];
}

/** Starts a head and `workers` worker nodes; resolves once the Jobs API answers and every node is alive (up to 2 minutes). */
export async function startRay(options: StartRayOptions = {}): Promise<RayCluster> {
  const missing = missingRay();
  if (missing) throw new Error(missing);
  const ray = `${rayVenv()}/bin/ray`;
  // Short: Ray's unix sockets live under it (a socket path is limited to 107 bytes).
  const tempDir = mkdtempSync('/tmp/cray-');
  const cpus = String(options.numCpus ?? 2);
  const common = ['--node-ip-address=127.0.0.1', `--num-cpus=${cpus}`, '--object-store-memory=100000000'];
  const nodes: Node[] = [];
  let address = '';
  let gcs = '';
  const stop = async () => {
    await Promise.all([...nodes].reverse().map(stopNode));
    rmSync(tempDir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 120_000;
    // A head that exits while starting (a port taken between freePort and its bind, on a busy
    // machine; seen once in CI) is started again with fresh ports, like a worker below.
    for (let attempt = 1; ; attempt++) {
      const gcsPort = await freePort();
      const dashPort = await freePort();
      address = `http://127.0.0.1:${dashPort}`;
      gcs = `127.0.0.1:${gcsPort}`;
      const log = `${tempDir}/head-${attempt}.log`;
      const head = startNode(
        ray,
        ['--head', `--port=${gcsPort}`, '--include-dashboard=true', '--dashboard-host=127.0.0.1', `--dashboard-port=${dashPort}`, `--ray-client-server-port=${await freePort()}`, `--temp-dir=${tempDir}`, ...common, ...(await nodePorts())],
        log,
        options.hide,
      );
      nodes[0] = head;
      let last: unknown;
      let up = false;
      while (head.child.exitCode === null) {
        try {
          await fetchJson(`${address}/api/version`);
          up = true;
          break;
        } catch (err) {
          last = err;
        }
        if (Date.now() > deadline) throw new Error(`the Ray dashboard at ${address} never answered: ${String(last)}`);
        await sleep(250);
      }
      if (up) break;
      killGroup(head.child.pid, 'SIGKILL');
      if (attempt >= 3) throw new Error(`the ray head exited 3 times while starting; the end of its last log:\n${tailLines(log, 40)}`);
      console.warn(`the ray head exited while starting; starting it again with fresh ports. The end of its log:\n${tailLines(log, 40)}`);
    }
    const workers = options.workers ?? 1;
    const startWorker = async (i: number, attempt: number) => {
      const gpus = options.workerGpus ? [`--num-gpus=${options.workerGpus}`] : [];
      return startNode(ray, [`--address=${gcs}`, ...common, ...gpus, ...(await nodePorts())], `${tempDir}/worker-${i}-${attempt}.log`, options.hide);
    };
    for (let i = 0; i < workers; i++) nodes.push(await startWorker(i, 1));
    const restarts = new Map<number, number>();
    for (;;) {
      const alive = await aliveNodes(address).catch(() => 0);
      if (alive >= 1 + workers) break;
      if (nodes[0]?.child.exitCode !== null) throw new Error(`the ray head exited: ${tailLines(nodes[0]!.log, 40)}`);
      for (let i = 0; i < workers; i++) {
        const node = nodes[i + 1] as Node;
        if (node.child.exitCode === null) continue;
        // A worker node that fails to join (a port taken between freePort and its bind, on a busy
        // machine) is started once more with fresh ports before the cluster counts as broken.
        const n = (restarts.get(i) ?? 0) + 1;
        if (n > 2) throw new Error(`ray worker node ${i} exited 3 times while joining: ${readFileSync(node.log, 'utf8').slice(-3000)}`);
        restarts.set(i, n);
        console.warn(`ray worker node ${i} exited while joining; starting it again. Its log:\n${readFileSync(node.log, 'utf8').slice(-3000)}`);
        killGroup(node.child.pid, 'SIGKILL');
        nodes[i + 1] = await startWorker(i, n + 1);
      }
      if (Date.now() > deadline) throw new Error(`only ${alive} of ${1 + workers} Ray nodes came up within 2 minutes`);
      await sleep(500);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const killWorker = async (index: number) => {
    const node = nodes[index + 1];
    if (!node) throw new Error(`no worker node ${index}`);
    killGroup(node.child.pid, 'SIGKILL');
    await node.exited;
  };
  return { address, gcs, tempDir, ray, killWorker, stop };
}
