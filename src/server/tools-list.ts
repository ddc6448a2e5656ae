import { z } from 'zod';
import type { TaskToolDefinition } from '../runner/tool.js';

/** A `tools/list` entry. */
export interface ListedTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
}

/**
 * `tools/list` from the engine's tool table, JSON Schema by zod v4 (`io: 'input'`, so defaults make a
 * field optional). The `$schema` key is dropped: MCP input schemas are plain objects.
 */
export function listTools(tools: ReadonlyMap<string, TaskToolDefinition>): ListedTool[] {
  return [...tools.values()].map((tool) => {
    const { $schema: _ignored, ...inputSchema } = z.toJSONSchema(tool.inputSchema, {
      io: 'input',
      unrepresentable: 'any',
    }) as Record<string, unknown>;
    const listed: ListedTool = {
      name: tool.name,
      description: tool.description,
      inputSchema: { ...inputSchema, type: 'object' },
    };
    if (tool.title !== undefined) listed.title = tool.title;
    return listed;
  });
}
