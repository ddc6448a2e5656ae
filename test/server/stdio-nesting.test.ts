import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { nestingDepth } from '../../src/core/digest.js';

/**
 * Issue 12 item 11 over stdio, where no HTTP edge counts brackets: arguments nested 10,000 levels
 * deep are `-32602` on the 2025 task and inline calls (they were `-32603`: the request digest
 * overflowed the stack), and nothing is stored.
 */
const root = new URL('../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'terminus-stdio-deep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const deep = '['.repeat(10_000) + ']'.repeat(10_000);

it('nestingDepth walks without recursion and stops past its bound', () => {
  expect(nestingDepth({ a: [1, { b: 2 }] }, 64)).toBe(3);
  expect(nestingDepth(JSON.parse(deep), 64)).toBe(65);
  expect(nestingDepth('x', 64)).toBe(0);
});

describe('terminus serve --stdio', () => {
  it('answers -32602 for 10,000 levels of nesting, as a task and inline, and stores nothing', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--stdio', '--db', join(dir, 'deep.db')],
      { cwd: root, stdio: ['pipe', 'pipe', 'ignore'] },
    );
    const answers = new Map<number, { error?: { code: number; message: string }; result?: Record<string, unknown> }>();
    const lines = createInterface({ input: child.stdout });
    const waiters = new Map<number, () => void>();
    lines.on('line', (line) => {
      const message = JSON.parse(line) as {
        id?: number;
        error?: { code: number; message: string };
        result?: Record<string, unknown>;
      };
      if (typeof message.id === 'number') {
        answers.set(message.id, message);
        waiters.get(message.id)?.();
      }
    });
    const send = (text: string, id?: number) =>
      new Promise<void>((resolve) => {
        if (id !== undefined) waiters.set(id, resolve);
        child.stdin.write(`${text}\n`);
        if (id === undefined) resolve();
      });
    try {
      await send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
        1,
      );
      await send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      const call = (id: number, task: boolean) =>
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"build_report",${task ? '"task":{},' : ''}"arguments":{"x":${deep},"sections":1,"sectionSeconds":0}}}`;
      await send(call(2, true), 2);
      await send(call(3, false), 3);
      await send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tasks/list', params: {} }), 4);
      for (const id of [2, 3]) {
        expect(answers.get(id)?.error?.code).toBe(-32602);
        expect(answers.get(id)?.error?.message).toContain('deeper than 64');
      }
      expect(answers.get(4)?.result?.tasks).toEqual([]);
    } finally {
      child.kill('SIGTERM');
    }
  }, 30_000);
});
