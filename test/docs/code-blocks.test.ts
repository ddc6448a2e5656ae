import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * A reader copies a page's TypeScript into a file of their project and runs `tsc`. Every fenced
 * "```ts" block of docs/*.md that starts with an `import` is such a file: it must type-check as
 * printed (strict, module nodenext, as a plain project would), with `mcp-terminus` and its entries
 * resolved to this checkout's sources. A block that uses a name it never defines or imports
 * (`askTheUser`, `token`, `report`) fails here. Blocks without an import are fragments of the text
 * around them and are not compiled; an import of the reader's own files (`./report.js`) stays
 * unresolved, which only types what it brings as `any`.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const DOCS = join(ROOT, 'docs');

interface Block {
  readonly name: string;
  readonly file: string;
  readonly code: string;
}

function blocks(): Block[] {
  const found: Block[] = [];
  for (const page of readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .sort()) {
    const lines = readFileSync(join(DOCS, page), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i] !== '```ts') continue;
      const start = i + 1;
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
      if (!/^import /.test(body[0] ?? '')) continue;
      // Virtual files beside the sources, so that zod and @types/node resolve from this checkout.
      const file = join(ROOT, 'docs-blocks', `${page.replace(/\.md$/, '')}-${start}.ts`);
      found.push({ name: `docs/${page}:${start}`, file, code: body.join('\n') + '\n' });
    }
  }
  return found;
}

function typeCheck(all: readonly Block[]): Map<string, string[]> {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    // The package's entries, as its `exports` map them, from the sources.
    paths: {
      'mcp-terminus': [join(ROOT, 'src/index.ts')],
      'mcp-terminus/*': [join(ROOT, 'src/*.ts')],
    },
  };
  const host = ts.createCompilerHost(options);
  const virtual = new Map(all.map((b) => [b.file, b.code]));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const code = virtual.get(fileName);
    return code !== undefined
      ? ts.createSourceFile(fileName, code, languageVersion, true)
      : getSourceFile(fileName, languageVersion, onError, shouldCreate);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => virtual.has(fileName) || fileExists(fileName);
  const readFile = host.readFile.bind(host);
  host.readFile = (fileName) => virtual.get(fileName) ?? readFile(fileName);
  const program = ts.createProgram(
    all.map((b) => b.file),
    options,
    host,
  );
  const errors = new Map<string, string[]>();
  for (const block of all) {
    const source = program.getSourceFile(block.file)!;
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].filter(
      // The reader's own modules (`./report.js`) are not on the page.
      (d) =>
        !(d.code === 2307 && /Cannot find module '\.\.?\//.test(ts.flattenDiagnosticMessageText(d.messageText, ' '))),
    );
    errors.set(
      block.name,
      diagnostics.map((d) => {
        const line = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line + 1;
        return `line ${line}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
      }),
    );
  }
  return errors;
}

describe('the TypeScript of docs/ type-checks as printed', () => {
  const all = blocks();
  let checked: Map<string, string[]> | undefined;
  const result = (): Map<string, string[]> => (checked ??= typeCheck(all));

  it('finds the whole-file blocks of the pages a reader copies from', () => {
    const pages = new Set(all.map((b) => b.name.replace(/:\d+$/, '')));
    expect([...pages].sort()).toEqual(
      expect.arrayContaining(['docs/calling-tools.md', 'docs/hosts.md', 'docs/writing-task-tools.md']),
    );
  });

  it.each(all.map((b) => [b.name]))(
    '%s',
    (name) => {
      expect(result().get(name)).toEqual([]);
    },
    120_000,
  );
});
