/**
 * Import circles in a package's sources: the files of `src` that import each other round in a
 * loop, found with the TypeScript parser (no bundler, no new dependency). A circle makes load
 * order decide what is defined when a module runs, and makes a file unreadable without the
 * others; a package's tests assert there is none.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import type * as TS from 'typescript';

const ts = createRequire(import.meta.url)('typescript') as typeof TS;

/** Which imports count. */
export interface ImportGraphOptions {
  /**
   * Count `import type` (and imports whose names are all `type`) too: a circle of types alone
   * costs nothing at run time, but still ties the files together for a reader.
   * @default false
   */
  readonly types?: boolean;
}

/** The `.ts` files under `dir` (recursively), declaration files left out. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** True when an import or export declaration is erased at run time. */
function typeOnly(node: TS.ImportDeclaration | TS.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return true;
    const names = node.exportClause;
    return names !== undefined && ts.isNamedExports(names) && names.elements.length > 0 && names.elements.every((e) => e.isTypeOnly);
  }
  const clause = node.importClause;
  if (clause === undefined) return false; // `import './x.js'` runs the module
  if (clause.isTypeOnly) return true;
  if (clause.name !== undefined) return false;
  const names = clause.namedBindings;
  return names !== undefined && ts.isNamedImports(names) && names.elements.length > 0 && names.elements.every((e) => e.isTypeOnly);
}

/** Each file's relative imports of other files under the same root (absolute paths). */
export function importGraph(srcDir: string, options: ImportGraphOptions = {}): Map<string, string[]> {
  const root = resolve(srcDir);
  const files = sourceFiles(root);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
    const to: string[] = [];
    for (const st of source.statements) {
      if (!ts.isImportDeclaration(st) && !ts.isExportDeclaration(st)) continue;
      const spec = st.moduleSpecifier;
      if (spec === undefined || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) continue;
      if (options.types !== true && typeOnly(st)) continue;
      const target = resolve(dirname(file), spec.text).replace(/\.js$/, '.ts');
      if (known.has(target)) to.push(target);
    }
    graph.set(file, to);
  }
  return graph;
}

/**
 * The circles among `srcDir`'s files: each a set of files (paths relative to `srcDir`, sorted)
 * every one of which reaches every other through imports. Empty when the imports form no loop.
 */
export function importCircles(srcDir: string, options: ImportGraphOptions = {}): string[][] {
  const graph = importGraph(srcDir, options);
  // Tarjan's strongly connected components, iterative (no recursion limit on large packages).
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: [string, number][] = [[start, 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1] as [string, number];
      const [v, i] = top;
      const edges = graph.get(v) as string[];
      if (i < edges.length) {
        top[1] = i + 1;
        const w = edges[i] as string;
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent[0], Math.min(low.get(parent[0]) as number, low.get(v) as number));
      if (low.get(v) !== index.get(v)) continue;
      const members: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        members.push(relative(srcDir, w));
      } while (w !== v);
      if (members.length > 1 || (graph.get(v) as string[]).includes(v)) circles.push(members.sort());
    }
  }
  return circles;
}
