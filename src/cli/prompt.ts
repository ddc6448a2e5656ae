/**
 * The CLI's approval gate (C10): renders one elicitation of an input round on stderr and reads the
 * answers from stdin, line by line, so both a person at a terminal and a script piping answers in
 * can answer it. Never writes to stdout (that belongs to the result, and to `--json`).
 *
 * Three ways out besides an answer: `[c]ancel` asks for the task to be cancelled (the question is
 * left unanswered; declining is `[n]o`), end of input dismisses the question (`cancel`, as MCP
 * clients without a UI answer), and Ctrl-C (`LineReader.interrupt`) abandons it: no answer at all,
 * the question stays open on the server and is asked again by whoever follows the task next.
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

/** What `elicitation/create` answers: the MCP `ElicitResult`. */
export type ElicitReply =
  | { readonly action: 'accept'; readonly content: Record<string, unknown> }
  | { readonly action: 'decline' }
  | { readonly action: 'cancel' };

/** One field of a restricted-form requested schema (MCP elicitation: flat primitives and enums). */
export interface FieldSpec {
  readonly name: string;
  readonly type: 'string' | 'number' | 'integer' | 'boolean';
  readonly title?: string;
  readonly description?: string;
  readonly required: boolean;
  /** Allowed values (`enum`, or `oneOf` of `{ const, title }`), with their labels. */
  readonly choices?: readonly { readonly value: string; readonly label: string }[];
  readonly default?: unknown;
}

/** What an input request asks, whatever wire carried it. */
export interface ElicitationView {
  readonly message: string;
  readonly fields: readonly FieldSpec[];
  /** URL-mode elicitation: the user is sent to a page instead of filling fields. */
  readonly url?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads an input request: `{ method: 'elicitation/create', params }` (Tasks extension), or the bare
 * `params` (`{ message, requestedSchema }`). Unknown shapes still render their JSON as the message.
 */
export function describeElicitation(request: unknown): ElicitationView {
  const params = isRecord(request) && isRecord(request.params) ? request.params : request;
  if (!isRecord(params)) return { message: JSON.stringify(request), fields: [] };
  const message = typeof params.message === 'string' ? params.message : JSON.stringify(request);
  if (typeof params.url === 'string') return { message, fields: [], url: params.url };
  const schema = isRecord(params.requestedSchema) ? params.requestedSchema : {};
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((k) => typeof k === 'string') : [];
  const fields = Object.entries(properties).map(([name, raw]) => fieldOf(name, raw, required.includes(name)));
  return { message, fields };
}

function fieldOf(name: string, raw: unknown, required: boolean): FieldSpec {
  const prop = isRecord(raw) ? raw : {};
  const type =
    prop.type === 'number' || prop.type === 'integer' || prop.type === 'boolean' ? prop.type : ('string' as const);
  const spec: { -readonly [K in keyof FieldSpec]: FieldSpec[K] } = { name, type, required };
  if (typeof prop.title === 'string') spec.title = prop.title;
  if (typeof prop.description === 'string') spec.description = prop.description;
  if ('default' in prop) spec.default = prop.default;
  if (Array.isArray(prop.enum)) {
    const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
    spec.choices = prop.enum.map((v, i) => ({ value: String(v), label: String(names[i] ?? v) }));
  } else if (Array.isArray(prop.oneOf)) {
    spec.choices = prop.oneOf
      .filter(isRecord)
      .filter((o) => o.const !== undefined)
      .map((o) => ({ value: String(o.const), label: typeof o.title === 'string' ? o.title : String(o.const) }));
  }
  return spec;
}

/** What `LineReader.next` gives once `interrupt()` was called. */
export const INTERRUPTED = Symbol('interrupted');

/** Lines from an input stream, queued, so lines piped in before a question is asked are not lost. */
export class LineReader {
  private readonly rl: Interface;
  private readonly lines: string[] = [];
  private readonly waiting: ((line: string | null | typeof INTERRUPTED) => void)[] = [];
  private ended = false;
  private interrupted = false;

  constructor(input: Readable) {
    // terminal: false keeps the TTY in cooked mode, so Ctrl-C stays a process SIGINT (cancel/detach).
    this.rl = createInterface({ input, terminal: false });
    this.rl.on('line', (line) => {
      const waiter = this.waiting.shift();
      if (waiter === undefined) this.lines.push(line);
      else waiter(line);
    });
    this.rl.on('close', () => {
      this.ended = true;
      for (const waiter of this.waiting.splice(0)) waiter(null);
    });
  }

  /** The next line, null at end of input, `INTERRUPTED` once `interrupt()` was called. */
  next(): Promise<string | null | typeof INTERRUPTED> {
    if (this.interrupted) return Promise.resolve(INTERRUPTED);
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Whether a question waits for a line now. */
  get waitingForLine(): boolean {
    return this.waiting.length > 0;
  }

  /** Ctrl-C: every question waiting now, and every later one, gets `INTERRUPTED` (no answer). */
  interrupt(): void {
    this.interrupted = true;
    for (const waiter of this.waiting.splice(0)) waiter(INTERRUPTED);
  }

  close(): void {
    this.rl.close();
  }
}

export interface PromptIO {
  readonly reader: LineReader;
  readonly out: Writable;
  /** Repeat each answer read (piped input is not echoed by a terminal). */
  readonly echo?: boolean;
}

/** Invalid answers tolerated per question before the round is answered `cancel`. */
const MAX_TRIES = 3;

/** How a prompt ended. */
export type PromptResult =
  /** The reply to send (accept with content, decline, or `cancel`: dismissed at end of input). */
  | { readonly kind: 'reply'; readonly reply: ElicitReply }
  /** `[c]ancel`: cancel the task; the question is left unanswered. */
  | { readonly kind: 'cancel_task' }
  /** Ctrl-C while it was asked: no answer; the question stays open on the server. */
  | { readonly kind: 'interrupted' };

const reply = (value: ElicitReply): PromptResult => ({ kind: 'reply', reply: value });

/**
 * Asks one elicitation: yes (accept) / no (decline) / cancel the task, then each field. A form that
 * is one yes/no field (a confirmation, as `migrate` asks) is asked once: yes accepts it with `true`.
 * End of input, or too many invalid answers, answers `cancel` (the user dismissed the request),
 * never a made-up value.
 */
export async function promptElicitation(view: ElicitationView, header: string, io: PromptIO): Promise<PromptResult> {
  const say = (text: string): void => void io.out.write(text);
  say(`\n? ${header}\n  ${view.message.split('\n').join('\n  ')}\n`);
  if (view.url !== undefined) say(`  Open: ${view.url}\n`);
  for (const f of view.fields) say(`  - ${describeField(f)}\n`);
  const only = view.fields.length === 1 && view.fields[0]!.type === 'boolean' ? view.fields[0]! : undefined;
  const question =
    only === undefined ? 'Accept?' : `${(only.title ?? only.description ?? only.name).replace(/[?.:]$/, '')}?`;
  const action = await ask(io, `  ${question} [y]es / [n]o (decline) / [c]ancel the task: `, (line) => {
    const a = line.trim().toLowerCase();
    if (['y', 'yes', 'a', 'accept'].includes(a)) return { ok: 'accept' as const };
    if (['n', 'no', 'd', 'decline'].includes(a)) return { ok: 'decline' as const };
    if (['c', 'cancel'].includes(a)) return { ok: 'cancel_task' as const };
    return { error: 'answer y, n or c' };
  });
  if (action === INTERRUPTED) return { kind: 'interrupted' };
  if (action === null) return reply({ action: 'cancel' });
  if (action === 'cancel_task') return { kind: 'cancel_task' };
  if (action === 'decline') return reply({ action: 'decline' });
  if (only !== undefined) return reply({ action: 'accept', content: { [only.name]: true } });
  const content: Record<string, unknown> = {};
  for (const f of view.fields) {
    const value = await ask(io, `  ${f.title ?? f.name}${hint(f)}: `, (line) => parseAnswer(f, line));
    if (value === INTERRUPTED) return { kind: 'interrupted' };
    if (value === null) return reply({ action: 'cancel' });
    if (value !== SKIP) content[f.name] = value;
  }
  return reply({ action: 'accept', content });
}

const SKIP = Symbol('skip');
type Parsed<T> = { readonly ok: T } | { readonly error: string };

async function ask<T>(
  io: PromptIO,
  question: string,
  parse: (line: string) => Parsed<T>,
): Promise<T | null | typeof INTERRUPTED> {
  for (let i = 0; i < MAX_TRIES; i++) {
    io.out.write(question);
    const line = await io.reader.next();
    // The one who interrupted ends the line (it knows when the terminal echoed ^C).
    if (line === INTERRUPTED) return INTERRUPTED;
    if (line === null) {
      io.out.write('(end of input)\n');
      return null;
    }
    if (io.echo === true) io.out.write(`${line}\n`);
    const parsed = parse(line);
    if ('ok' in parsed) return parsed.ok;
    io.out.write(`  ! ${parsed.error}\n`);
  }
  return null;
}

function describeField(f: FieldSpec): string {
  const parts = [`${f.name} (${f.type}${f.required ? ', required' : ''})`];
  if (f.title !== undefined && f.title !== f.name) parts.push(f.title);
  if (f.description !== undefined) parts.push(f.description);
  if (f.choices !== undefined) parts.push(`one of: ${f.choices.map((c, i) => `${i + 1}) ${c.label}`).join(', ')}`);
  return parts.join(' - ');
}

function hint(f: FieldSpec): string {
  if (f.choices !== undefined) return ` [1-${f.choices.length}]`;
  if (f.type === 'boolean') return ' [y/n]';
  return f.default !== undefined ? ` [${JSON.stringify(f.default)}]` : '';
}

/** Parses one typed answer; an empty line takes the default, or skips an optional field. */
export function parseAnswer(f: FieldSpec, line: string): Parsed<unknown> {
  const text = line.trim();
  if (text === '') {
    if (f.default !== undefined) return { ok: f.default };
    return f.required ? { error: `${f.name} is required` } : { ok: SKIP };
  }
  if (f.choices !== undefined) {
    const byIndex = /^\d+$/.test(text) ? f.choices[Number(text) - 1] : undefined;
    const choice = byIndex ?? f.choices.find((c) => c.value === text || c.label === text);
    if (choice === undefined) return { error: `pick 1-${f.choices.length} or one of the values` };
    return { ok: f.type === 'string' ? choice.value : coerce(f, choice.value) };
  }
  return coerceChecked(f, text);
}

function coerce(f: FieldSpec, text: string): unknown {
  const parsed = coerceChecked(f, text);
  return 'ok' in parsed ? parsed.ok : text;
}

function coerceChecked(f: FieldSpec, text: string): Parsed<unknown> {
  switch (f.type) {
    case 'boolean': {
      const a = text.toLowerCase();
      if (['y', 'yes', 'true'].includes(a)) return { ok: true };
      if (['n', 'no', 'false'].includes(a)) return { ok: false };
      return { error: 'answer y or n' };
    }
    case 'number':
    case 'integer': {
      const n = Number(text);
      if (!Number.isFinite(n) || (f.type === 'integer' && !Number.isInteger(n)))
        return { error: `not ${f.type === 'integer' ? 'an integer' : 'a number'}` };
      return { ok: n };
    }
    case 'string':
      return { ok: text };
  }
}
