import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every id the repository cites resolves in the repository: an invariant (S1-S9, C1-C13) needs an
 * `<a id="s1"></a>` anchor in docs/guarantees.md, a checklist id (X-xx, T-xx, L-xx, G-xx) an
 * `<a id="t-12"></a>` anchor in docs/requirements.md. A citation of an id with no anchor there (a
 * typo such as `C14`, or a checklist id nobody defined yet) fails with its file and line.
 */
const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Folders scanned, whole, and the top-level pages. Not scanned: `docs/api` (generated TypeDoc),
 * `docs/gate-runs` (run diaries, a record of their day) and this file, whose fixtures cite ids that
 * are undefined on purpose.
 */
const SCANNED = ['src', 'test', 'docs', 'examples', 'bench', 'scripts'];
const PAGES = ['README.md', 'CHANGELOG.md'];
const SKIPPED = new Set(['docs/api', 'docs/gate-runs', 'node_modules', 'test/docs/ids.test.ts']);
/** Text a person or the compiler reads; images and lock files hold no citations. */
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|md|sql|sh|json|html|css)$/;

/**
 * An invariant: `S` or `C` and a number, as a word of its own. Any number is matched (not only
 * 1-9 / 1-13), so that `S10` or `C14` is reported rather than skipped. Not matched:
 * - inside a longer word or number (`\b`): hex such as `0xC6`, `#C6C6C6`, `A1C2`, identifiers
 *   like `SC1` or `toC6`; lower case (`c6`, as hex digits and UUIDs are written here);
 * - after `#` (`#C60` is a CSS colour of three hex digits, which `\b` alone would let through).
 * Checked by hand over src/, test/ and docs/ when this test was written: every match was a citation.
 */
const INVARIANT = /(?<![#\w])([SC])(\d+)\b/g;
/**
 * A checklist id: one of the four wires' letters, a hyphen and a number, as a word of its own (not
 * after a letter, digit or hyphen, so `UTF-8`, `SHA-256` or an `X-Request-Id` header never match).
 * A range `X-15..X-20` cites every id in it: each one must resolve.
 */
const CHECKLIST = /(?<![\w-])([XTLG])-(\d+)(?:\.\.\1-(\d+))?\b/g;

interface Citation {
  readonly id: string;
  readonly at: string;
}

/** The ids a text cites, with `file:line`, ranges expanded. */
function citations(file: string, text: string): Citation[] {
  const out: Citation[] = [];
  text.split('\n').forEach((line, i) => {
    const at = `${file}:${i + 1}`;
    for (const m of line.matchAll(INVARIANT)) out.push({ id: `${m[1]}${m[2]}`, at });
    for (const m of line.matchAll(CHECKLIST)) {
      const letter = m[1] as string;
      const from = Number(m[2]);
      const to = m[3] === undefined ? from : Number(m[3]);
      const width = (m[2] as string).length;
      for (let n = from; n <= Math.max(from, to); n++)
        out.push({ id: `${letter}-${String(n).padStart(width, '0')}`, at });
    }
  });
  return out;
}

/** The anchor an id needs, and the page that must hold it. */
function anchorOf(id: string): { page: 'guarantees' | 'requirements'; anchor: string } {
  return { page: /^[SC]\d+$/.test(id) ? 'guarantees' : 'requirements', anchor: id.toLowerCase() };
}

/** The explicit `<a id="...">` anchors of a markdown page. */
function anchors(markdown: string): string[] {
  return [...markdown.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1] as string);
}

/** Every citation whose anchor is missing, as `file:line: ID (no #anchor in docs/page.md)`. */
function unresolved(cited: readonly Citation[], pages: Record<'guarantees' | 'requirements', string>): string[] {
  const defined = {
    guarantees: new Set(anchors(pages.guarantees)),
    requirements: new Set(anchors(pages.requirements)),
  };
  return cited.flatMap(({ id, at }) => {
    const { page, anchor } = anchorOf(id);
    return defined[page].has(anchor) ? [] : [`${at}: ${id} (no #${anchor} in docs/${page}.md)`];
  });
}

function files(dir: string): string[] {
  if (SKIPPED.has(relative(ROOT, dir))) return [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return TEXT.test(name) && !SKIPPED.has(relative(ROOT, path)) ? [path] : [];
  });
}

function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

describe('every cited id resolves in docs/', () => {
  const pages = { guarantees: read('docs/guarantees.md'), requirements: read('docs/requirements.md') };

  it('every S-, C-, X-, T-, L- and G-id cited in the repository has its anchor', () => {
    const scanned = [...SCANNED.flatMap((dir) => files(join(ROOT, dir))), ...PAGES.map((page) => join(ROOT, page))];
    const cited = scanned.flatMap((path) => citations(relative(ROOT, path), readFileSync(path, 'utf8')));
    // The scan sees the code: if it found nothing, the pattern or the folders are wrong.
    expect(cited.length).toBeGreaterThan(500);
    expect(unresolved(cited, pages)).toEqual([]);
  });

  it('each page defines every anchor once, and only in its own form', () => {
    for (const [page, form] of [
      ['guarantees', /^(s[1-9]|c(1[0-3]|[1-9])|divergence|liveness|cancel-cadence)$/],
      ['requirements', /^[xtlg]-\d{2}$/],
    ] as const) {
      const list = anchors(pages[page]);
      expect(
        list.filter((a) => !form.test(a)),
        `docs/${page}.md`,
      ).toEqual([]);
      expect(
        list.filter((a, i) => list.indexOf(a) !== i),
        `docs/${page}.md duplicates`,
      ).toEqual([]);
    }
    for (const id of ['s1', 's9', 'c1', 'c13']) expect(anchors(pages.guarantees)).toContain(id);
  });

  it('links to guarantees.md#... and requirements.md#... in docs/ and README.md land on an anchor', () => {
    const sources = [join(ROOT, 'README.md'), ...files(join(ROOT, 'docs'))].filter((p) => p.endsWith('.md'));
    const broken = sources.flatMap((path) => {
      const text = readFileSync(path, 'utf8');
      return [...text.matchAll(/(guarantees|requirements)\.md#([\w-]+)/g)].flatMap((m) =>
        anchors(pages[m[1] as 'guarantees' | 'requirements']).includes(m[2] as string)
          ? []
          : [`${relative(ROOT, path)}: ${m[0]}`],
      );
    });
    expect(broken).toEqual([]);
  });

  it('the scan reports a missing anchor with its file and line, and skips what is not a citation', () => {
    const text = [
      '// S3 and C13 hold (S1-S9, C1-C13)',
      'const color = "#C60"; const hex = 0xC6; const w = toC6; // c6 is lower case',
      '/** X-15..X-17, T-08 and G-20; UTF-8, SHA-256, X-Request-Id are not ids */',
      'see C14 and L-26',
    ].join('\n');
    expect(citations('f.ts', text).map((c) => `${c.at} ${c.id}`)).toEqual([
      'f.ts:1 S3',
      'f.ts:1 C13',
      'f.ts:1 S1',
      'f.ts:1 S9',
      'f.ts:1 C1',
      'f.ts:1 C13',
      'f.ts:3 X-15',
      'f.ts:3 X-16',
      'f.ts:3 X-17',
      'f.ts:3 T-08',
      'f.ts:3 G-20',
      'f.ts:4 C14',
      'f.ts:4 L-26',
    ]);
    const missing = unresolved(citations('f.ts', text), {
      guarantees: '<a id="s1"></a><a id="s3"></a><a id="s9"></a><a id="c1"></a><a id="c13"></a>',
      requirements: '<a id="x-15"></a><a id="x-17"></a><a id="t-08"></a><a id="g-20"></a>',
    });
    expect(missing).toEqual([
      'f.ts:3: X-16 (no #x-16 in docs/requirements.md)',
      'f.ts:4: C14 (no #c14 in docs/guarantees.md)',
      'f.ts:4: L-26 (no #l-26 in docs/requirements.md)',
    ]);
  });
});
