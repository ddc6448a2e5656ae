import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The root entry is the server author's door (README, "Package entries"): a name that serves callers,
 * operators or wire authors goes to its own entry. The count is of every exported name, values and
 * types, as the compiler sees the module.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const MAX_ROOT_NAMES = 70;

function exportedNames(entry: string): string[] {
  const program = ts.createProgram([entry], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  if (module === undefined) throw new Error(`${entry} is not a module`);
  return checker.getExportsOfModule(module).map((symbol) => symbol.getName());
}

describe('layout: the root entry', () => {
  it(`exports at most ${MAX_ROOT_NAMES} names, none of them renamed to avoid a clash`, () => {
    const names = exportedNames(resolve(ROOT, 'src/index.ts'));
    expect(names).toContain('defineTaskTool');
    expect(names.length, names.join(', ')).toBeLessThanOrEqual(MAX_ROOT_NAMES);
    const lists = [...readFileSync(resolve(ROOT, 'src/index.ts'), 'utf8').matchAll(/export (?:type )?\{([^}]*)\}/g)];
    expect(lists.length).toBeGreaterThan(5);
    expect(lists.flatMap((list) => list[1]!.split(',')).filter((name) => /\sas\s/.test(name))).toEqual([]);
  });
});
