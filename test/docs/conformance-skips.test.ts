import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * Every scenario and check the conformance run skips (scripts/conformance-skips.json) is named in
 * docs/wires.md, where the reasons are given to readers.
 */
interface Skips {
  scenarios: Record<string, string>;
  checks: Record<string, Record<string, string>>;
}
const file = JSON.parse(readFileSync('scripts/conformance-skips.json', 'utf8')) as Skips & { install: Skips };
const wires = readFileSync('docs/wires.md', 'utf8');

describe('the conformance skips are documented', () => {
  for (const skips of [file, file.install]) {
    const names = [...Object.keys(skips.scenarios), ...Object.values(skips.checks).flatMap((c) => Object.keys(c))];
    for (const name of names) {
      it(`docs/wires.md names ${name}`, () => {
        expect(wires).toContain(`\`${name}\``);
      });
    }
  }
});
