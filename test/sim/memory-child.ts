/**
 * Child of `memory.test.ts`, run as `node --expose-gc --import tsx`: runs `argv[2]` series (seeds
 * from `argv[3]`), holding each series' clock only weakly, then collects garbage and prints how
 * many series are still reachable, as one JSON line.
 */
import { runSeries } from '../../src/sim/series.js';

const count = Number(process.argv[2] ?? 20);
const first = Number(process.argv[3] ?? 1);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');
const refs: WeakRef<object>[] = [];
let collected = 0;
const registry = new FinalizationRegistry(() => void collected++);
for (let seed = first; seed < first + count; seed++) {
  await runSeries({
    seed,
    hooks: {
      held: (clock) => {
        refs.push(new WeakRef(clock));
        registry.register(clock, seed);
      },
    },
  });
}
// Let the series' last callbacks and finalizers run between collections.
for (let i = 0; i < 6; i++) {
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  await new Promise((resolve) => setTimeout(resolve, 20));
}
const alive = refs.filter((r) => r.deref() !== undefined).length;
process.stdout.write(`${JSON.stringify({ series: refs.length, alive, collected })}\n`);
