import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Issue 15 item 3: the docs' code is the examples' code (a snippet marked
 * `<!-- snippet: <path> -->` in docs/writing-task-tools.md is that file, byte for byte), and the five-line claim is counted, not
 * asserted in prose: the lines an author adds are marked `+ terminus`.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('docs/writing-task-tools.md snippets', () => {
  const page = read('docs/writing-task-tools.md');
  const snippets = [...page.matchAll(/<!-- snippet: (\S+) -->\n\n```\w*\n([\s\S]*?)```/g)];

  it('has snippets', () => {
    expect(snippets.map((m) => m[1])).toEqual(['examples/existing-server/server.js', 'examples/minimal/server.js']);
  });

  it.each(snippets.map((m) => [m[1] ?? '', m[2] ?? '']))('%s is the file as it is', (path, code) => {
    expect(code).toBe(read(path));
  });
});

describe('an existing server gains durable task tools in five lines', () => {
  it.each(['examples/existing-server/server.js', 'test/fixtures/installed-server.ts'])('%s', (path) => {
    const added = read(path)
      .split('\n')
      .filter((line) => line.includes('// + terminus'));
    expect(added).toHaveLength(5);
  });
});
