import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The pages a reader follows hold no dead ends: every relative link of README.md, CHANGELOG.md and
 * docs/ (not the generated docs/api) names a file of the repository, every `#anchor` names a heading
 * or an `<a id>` of that page, and every repository path written in code spans (`src/...`,
 * `test/...`) exists. Files move; a page that still names the old place sends its reader nowhere.
 */
const ROOT = resolve(import.meta.dirname, '../..');
/** Written by a command (`npm run docs`), not kept in git: named on the pages, absent from a clone. */
const GENERATED = ['docs/api'];

function pages(): string[] {
  const out = ['README.md', 'CHANGELOG.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (path !== 'docs/api') walk(path);
      } else if (entry.name.endsWith('.md')) out.push(path);
    }
  };
  walk('docs');
  return out;
}

/** Markdown without its fenced blocks: links and paths inside a command are not the page's links. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(text)) {
    for (const m of line.matchAll(/<a id="([^"]+)"><\/a>/g)) anchors.add(m[1] as string);
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading === null) continue;
    const slug = (heading[1] as string)
      .trim()
      .toLowerCase()
      .replace(/<[^>]+>/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

interface Dead {
  readonly at: string;
  readonly target: string;
}

function deadEnds(): Dead[] {
  const dead: Dead[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string): Set<string> => {
    let found = anchorCache.get(file);
    if (found === undefined) {
      found = anchorsOf(readFileSync(join(ROOT, file), 'utf8'));
      anchorCache.set(file, found);
    }
    return found;
  };
  for (const page of pages()) {
    const lines = prose(readFileSync(join(ROOT, page), 'utf8'));
    lines.forEach((line, i) => {
      const at = `${page}:${i + 1}`;
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path === '' ? page : relative(ROOT, resolve(ROOT, dirname(page), path));
        if (!existsSync(join(ROOT, file))) {
          dead.push({ at, target });
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !anchors(file).has(anchor)) dead.push({ at, target });
      }
      for (const m of line.matchAll(/`((?:src|test|bench|scripts|examples|docs)\/[\w./-]+)`/g)) {
        const path = (m[1] as string).replace(/[.,]$/, '');
        if (GENERATED.some((g) => path.startsWith(g))) continue;
        if (!existsSync(join(ROOT, path))) dead.push({ at, target: path });
      }
    });
  }
  return dead;
}

describe('docs: links and paths', () => {
  it('every relative link, anchor and repository path on the pages exists', () => {
    expect(deadEnds().map((d) => `${d.at}: ${d.target}`)).toEqual([]);
  });

  it("names a heading's anchor as GitHub does", () => {
    const text =
      '# The `terminus` CLI\n\n## Limits (per caller)\n\n## Limits (per caller)\n<a id="s1"></a>\n```sh\n# not a heading\n```\n';
    expect([...anchorsOf(text)].sort()).toEqual(['limits-per-caller', 'limits-per-caller-1', 's1', 'the-terminus-cli']);
  });
});
