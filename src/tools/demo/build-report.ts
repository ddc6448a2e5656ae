import { createHash } from 'node:crypto';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTaskTool } from '../../runner/tool.js';

interface ReportCheckpoint {
  readonly sections: SectionSummary[];
}

interface SectionSummary {
  readonly index: number;
  readonly rounds: number;
  readonly digest: string;
}

const args = z.object({
  title: z.string().default('Quarterly report'),
  sections: z.number().int().min(1).max(1000).default(12),
  sectionSeconds: z.number().min(0).max(3600).default(10).describe('wall time of each section'),
});

/**
 * One section's work: hash chains over a 64 KiB buffer for `ms` of wall time, yielding to the event
 * loop every ~20 ms so the abort signal (and the server) is served promptly.
 */
async function computeSection(index: number, ms: number, signal: AbortSignal): Promise<SectionSummary> {
  const block = Buffer.alloc(64 * 1024, index);
  let digest = createHash('sha256').update(block).digest();
  let rounds = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    signal.throwIfAborted();
    const sliceEnd = Math.min(end, Date.now() + 20);
    while (Date.now() < sliceEnd) {
      digest = createHash('sha256').update(digest).update(block).digest();
      rounds++;
    }
    // Idle part of the slice: keeps one report from taking a whole core on a shared machine.
    await sleep(5, undefined, { signal });
    await yieldToLoop();
  }
  return { index, rounds, digest: digest.toString('hex').slice(0, 16) };
}

/**
 * `build_report`: N sections of real CPU work (about two minutes by default), a checkpoint and a
 * progress update after each, so a re-run after a crash starts at the first unfinished section.
 * Honours cancellation within ~25 ms.
 */
export const buildReportTool = defineTaskTool({
  name: 'build_report',
  title: 'Build a report',
  description: 'Builds a report section by section (minutes by default); resumable and cancellable.',
  inputSchema: args,
  taskSupport: 'optional',
  pollIntervalMs: 1000,
  handler: async ({ title, sections, sectionSeconds }, ctx) => {
    const done = [...((ctx.lastCheckpoint as ReportCheckpoint | undefined)?.sections ?? [])];
    for (let i = done.length; i < sections; i++) {
      await ctx.progress(i, sections, `section ${i + 1} of ${sections}`);
      done.push(await computeSection(i, sectionSeconds * 1000, ctx.signal));
      await ctx.checkpoint({ sections: done } satisfies ReportCheckpoint);
    }
    await ctx.progress(sections, sections, 'done');
    const lines = done.map((s) => `section ${s.index + 1}: ${s.rounds} rounds, ${s.digest}`);
    return {
      content: [{ type: 'text', text: `# ${title}\n${lines.join('\n')}` }],
      structuredContent: { title, sections: done, attempt: ctx.attempt },
    };
  },
});
