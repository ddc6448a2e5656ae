import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** No source file over 500 lines: past that, a file holds more than one owner's code (STYLE.md, "Shape"). */
const ROOT = resolve(import.meta.dirname, '../..');
const MAX_LINES = 500;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.isFile() && entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Lines as `wc -l` counts them: a last line without a newline counts too. */
function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('layout: file sizes', () => {
  it(`has no src/**/*.ts file over ${MAX_LINES} lines`, () => {
    const files = sources(resolve(ROOT, 'src'));
    expect(files.length).toBeGreaterThan(100);
    const over = files
      .map((file) => ({ file: relative(ROOT, file), lines: lineCount(readFileSync(file, 'utf8')) }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`)
      .sort();
    expect(over).toEqual([]);
  });
});
