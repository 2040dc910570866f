/** The steps a run option (`rebuild`, `acceptDrift`) names, and whether it names a node. */
import type { Node } from './node.js';

/** Steps a run option names: their output paths, names (`name`, `name@version`) or `nameWithHash`es; or all of them. */
export type Selection = 'all' | { readonly paths: ReadonlySet<string>; readonly names: ReadonlySet<string> };

/** True when `selection` names `node`. */
export function selects(selection: Selection, node: Node): boolean {
  if (selection === 'all') return true;
  const spec = node.spec;
  return selection.paths.has(node.path) || selection.names.has(node.name) || selection.names.has(spec.nameWithHash) || (spec.version !== undefined && selection.names.has(spec.ident));
}
