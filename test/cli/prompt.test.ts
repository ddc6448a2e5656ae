/**
 * The input prompt's logic with injected streams: a confirmation form (one yes/no field, as
 * `migrate` asks) is asked once; `[c]ancel` asks for the task's cancel and answers nothing (`[n]o`
 * declines); end of input dismisses (`cancel`); Ctrl-C (`interrupt`) abandons the question with no
 * answer and prints nothing more on its line. The terminal itself: test/cli/prompt-terminal.test.ts.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { describeElicitation, LineReader, promptElicitation, type PromptResult } from '../../src/cli/prompt.js';

const confirm = describeElicitation({
  method: 'elicitation/create',
  params: {
    message: 'Migrate 5 rows of users to JSON Lines?',
    requestedSchema: {
      type: 'object',
      properties: { confirm: { type: 'boolean', description: 'Run the migration' } },
      required: ['confirm'],
    },
  },
});

const form = describeElicitation({
  message: 'Who?',
  requestedSchema: {
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer' } },
    required: ['name'],
  },
});

/** Asks `view` with `lines` typed (then, unless `open`, end of input); what it answered and printed. */
async function asked(
  view: ReturnType<typeof describeElicitation>,
  lines: readonly string[],
  options: { open?: boolean; interruptAfter?: number } = {},
): Promise<{ result: PromptResult; printed: string }> {
  const input = new PassThrough();
  const out = new PassThrough();
  let printed = '';
  out.on('data', (d: Buffer) => (printed += d.toString()));
  const reader = new LineReader(input);
  const asking = promptElicitation(view, 'migrate asks for input', { reader, out });
  for (const line of lines) input.write(`${line}\n`);
  if (options.interruptAfter !== undefined) {
    // Wait until the question is on screen and waiting, as a person would be.
    while (!reader.waitingForLine) await new Promise((r) => setTimeout(r, 5));
    reader.interrupt();
  } else if (options.open !== true) input.end();
  const result = await asking;
  reader.close();
  return { result, printed };
}

describe('promptElicitation', () => {
  it('a one-field yes/no form is asked once: y accepts it with true, n declines', async () => {
    const yes = await asked(confirm, ['y']);
    expect(yes.result).toEqual({ kind: 'reply', reply: { action: 'accept', content: { confirm: true } } });
    expect(yes.printed.match(/\[y\]es \/ \[n\]o \(decline\) \/ \[c\]ancel the task: /g)).toHaveLength(1);
    expect(yes.printed).toContain('  Run the migration? [y]es / [n]o (decline) / [c]ancel the task: ');
    expect(yes.printed).not.toMatch(/confirm \[y\/n\]/);
    const no = await asked(confirm, ['n']);
    expect(no.result).toEqual({ kind: 'reply', reply: { action: 'decline' } });
  });

  it('[c]ancel asks for the task to be cancelled and answers nothing; end of input dismisses (cancel)', async () => {
    expect((await asked(confirm, ['c'])).result).toEqual({ kind: 'cancel_task' });
    expect((await asked(form, ['c'])).result).toEqual({ kind: 'cancel_task' });
    const ended = await asked(confirm, []);
    expect(ended.result).toEqual({ kind: 'reply', reply: { action: 'cancel' } });
    expect(ended.printed).toContain('(end of input)');
  });

  it('Ctrl-C abandons the question: no answer, and nothing more printed on its line', async () => {
    const first = await asked(confirm, [], { interruptAfter: 0 });
    expect(first.result).toEqual({ kind: 'interrupted' });
    expect(first.printed.endsWith('[c]ancel the task: ')).toBe(true);
    // Half-way through a form: the fields already typed are not sent either.
    const half = await asked(form, ['y', 'ada'], { interruptAfter: 2 });
    expect(half.result).toEqual({ kind: 'interrupted' });
    expect(half.printed).not.toContain('(end of input)');
  });

  it('a form of several fields asks to accept, then each field', async () => {
    const answered = await asked(form, ['y', 'ada', '36']);
    expect(answered.result).toEqual({ kind: 'reply', reply: { action: 'accept', content: { name: 'ada', age: 36 } } });
    expect(answered.printed).toContain('  Accept? [y]es / [n]o (decline) / [c]ancel the task: ');
  });
});
