/** The tools the bridge adds for the model: wait, check, cancel, list, answer operations, and read their logs. */
const operation = { type: 'string', description: 'The operation id a call returned (starts with op_)' } as const;

/** The model's tools; `notice` (upstreams missing from the list, say) ends `terminus_operations`' description. */
export function modelTools(inlineWaitSeconds: number, notice?: string): Record<string, unknown>[] {
  return [
    {
      name: 'terminus_wait',
      title: 'Wait for a long-running operation',
      description:
        `Waits up to ${inlineWaitSeconds} s for an operation a tool call returned, then returns the tool's ` +
        'result, or says it is still running (call again to keep waiting). Never re-run the tool to wait.',
      inputSchema: {
        type: 'object',
        properties: {
          operation,
          seconds: { type: 'number', minimum: 0, maximum: inlineWaitSeconds, description: 'How long to wait at most' },
        },
        required: ['operation'],
      },
    },
    {
      name: 'terminus_status',
      title: 'Status of an operation',
      description: 'The state, progress and any pending question of an operation, without waiting.',
      inputSchema: { type: 'object', properties: { operation }, required: ['operation'] },
    },
    {
      name: 'terminus_cancel',
      title: 'Cancel an operation',
      description:
        'Asks the server to stop an operation. A request, not a guarantee: the answer says what the server decided ' +
        '(cancelled, or it finished first).',
      inputSchema: { type: 'object', properties: { operation }, required: ['operation'] },
    },
    {
      name: 'terminus_operations',
      title: 'List operations',
      description:
        'Your operations in flight and those that ended recently, with their ids: use it instead of remembering ids.' +
        (notice === undefined ? '' : `\n\n${notice}`),
      inputSchema: { type: 'object', properties: {} },
    },
    {
      name: 'terminus_respond',
      title: 'Answer an operation that needs input',
      description:
        'Answers the question an operation is waiting on (shown by the call, terminus_wait or terminus_status). ' +
        '`response` is the requested object, or {"action":"decline"} / {"action":"cancel"}.',
      inputSchema: {
        type: 'object',
        properties: {
          operation,
          response: { type: 'object', description: "The answer, shaped as the question's schema asks" },
          key: { type: 'string', description: 'Which question, when several are open (default: the oldest)' },
        },
        required: ['operation', 'response'],
      },
    },
    {
      name: 'terminus_logs',
      title: "Read an operation's log",
      description:
        'The lines an operation has written to its log so far (test results, steps, partial output), while it runs ' +
        `or after it ended, ${LOG_LINES_PER_READ} at most per call. The answer gives \`next\`: pass it as \`after\` to read only newer lines.`,
      inputSchema: {
        type: 'object',
        properties: {
          operation,
          after: {
            type: 'integer',
            minimum: 0,
            description: 'Only lines after this one: the `next` of the last answer',
          },
        },
        required: ['operation'],
      },
    },
  ];
}

/** Lines one `terminus_logs` answer carries: a page a model reads without drowning its context. */
export const LOG_LINES_PER_READ = 100;

export const MODEL_TOOL_NAMES = [
  'terminus_wait',
  'terminus_status',
  'terminus_cancel',
  'terminus_operations',
  'terminus_respond',
  'terminus_logs',
] as const;

/** A note appended to a durable tool's description, so a model expects a handle. */
export function durableNote(inlineWaitSeconds: number): string {
  return (
    `\n\nLong-running: if it does not finish within ${inlineWaitSeconds} s this returns an operation id ` +
    'instead of the result; the work goes on. Then call terminus_wait with that id (never call this tool again to wait).'
  );
}
