/**
 * The thinnest 2026-07-28 Tasks-extension client: one stateless POST per request, the envelope in
 * `_meta`, the `Mcp-Method`/`Mcp-Name` headers the fast path requires. JSON or SSE answers. Only our
 * servers speak this wire (B0 and the floor have 2025-11-25 only).
 */
export const TASKS_EXT_PROTOCOL = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';

export interface TasksExtClient {
  /** One request; resolves with its `result`, rejects with the JSON-RPC error's message. */
  call(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export function tasksExtClient(url: string, headers: Readonly<Record<string, string>> = {}): TasksExtClient {
  let id = 0;
  return {
    async call(method, params) {
      id += 1;
      const name = method === 'tools/call' ? params.name : params.taskId;
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': TASKS_EXT_PROTOCOL,
          'mcp-method': method,
          ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method,
          params: {
            ...params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': TASKS_EXT_PROTOCOL,
              'io.modelcontextprotocol/clientInfo': { name: 'terminus-bench', version: '0.1.0' },
              'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } },
            },
          },
        }),
      });
      const text = await response.text();
      const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? 'null');
      const message = JSON.parse(json) as { result?: Record<string, unknown>; error?: unknown } | null;
      if (message?.result === undefined) throw new Error(`${method} failed: ${JSON.stringify(message?.error)}`);
      return message.result;
    },
  };
}
