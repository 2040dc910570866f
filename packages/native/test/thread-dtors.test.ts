import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import loader from '../index.js';

// src/glibc_floor.rs defines `__cxa_thread_atexit_impl` for glibc 2.17, which lacks it (napi-rs's
// thread-locals register their destructors through it). Newer glibc's own definition wins when
// Node loads the module, so this calls the module's definition directly: a small C program
// dlopens the built module (with do-nothing napi_* stubs, never called) and registers
// destructors from two threads, one of them from inside a destructor, as std does.
const built = loader.platformTriple().endsWith('-gnu') && loader.loadedFrom !== null && existsSync(loader.loadedFrom) ? loader.loadedFrom : null;

const harness = String.raw`
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
typedef void (*dtor_t)(void *);
typedef int (*atexit_t)(dtor_t, void *, void *);
static atexit_t reg;
static char log_[64];
static void note(void *p) { strncat(log_, (const char *)p, 1); }
static void again(void *p) { note(p); reg(note, "c", 0); }
static void *worker(void *arg) { (void)arg; reg(again, "a", 0); reg(note, "b", 0); return 0; }
int main(int argc, char **argv) {
  (void)argc;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { printf("dlopen: %s\n", dlerror()); return 2; }
  reg = (atexit_t)dlsym(h, "__cxa_thread_atexit_impl");
  if (!reg || (void *)reg == dlsym(RTLD_DEFAULT, "__cxa_thread_atexit_impl")) { printf("not the module's definition\n"); return 2; }
  for (int i = 0; i < 2; i++) {
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    pthread_join(t, 0);
    strcat(log_, "|");
  }
  printf("%s\n", log_);
  return 0;
}
`;

describe.runIf(process.platform === 'linux' && (built || process.env.CI))('the glibc 2.17 fallback for thread-exit destructors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-native-dtors-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs each thread’s destructors when it exits, newest first, and those registered while they run', () => {
    expect(built, 'run `npm run build -w @cairn/native` first').not.toBeNull();
    const nm = spawnSync('nm', ['-D', '--undefined-only', built!], { encoding: 'utf8' });
    expect(nm.status, nm.stderr).toBe(0);
    const napi = [...nm.stdout.matchAll(/\b(napi_\w+)/g)].map((m) => m[1]);
    expect(napi.length).toBeGreaterThan(10);
    const stubs = [...new Set(napi)].map((f) => `void *${f}(void) { return 0; }`).join('\n');
    writeFileSync(join(dir, 'harness.c'), `${harness}\n${stubs}\n`);
    const cc = spawnSync('cc', ['-rdynamic', '-o', join(dir, 'harness'), join(dir, 'harness.c'), '-ldl', '-lpthread'], { encoding: 'utf8' });
    expect(cc.status, cc.stderr).toBe(0);
    const run = spawnSync(join(dir, 'harness'), [built!], { encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('bac|bac|');
  });
});
