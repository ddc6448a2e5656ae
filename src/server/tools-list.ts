import { z } from 'zod';
import type { TaskToolDefinition, ToolAnnotations, ToolIcon } from '../runner/tool.js';

/** An icon as listed (a mutable copy: the SDK's result type has no readonly arrays). */
export type ListedIcon = Omit<ToolIcon, 'sizes'> & { sizes?: string[] };

/** A `tools/list` entry. */
export interface ListedTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations?: ToolAnnotations;
  icons?: ListedIcon[];
  _meta?: Record<string, unknown>;
}

/**
 * `tools/list` from the engine's tool table, JSON Schema by zod v4 (`io: 'input'` for arguments, so
 * defaults make a field optional; `io: 'output'` for results). The input schema keeps zod's
 * `$schema` (the 2020-12 dialect, SEP-1613) and everything `.meta()` added (`$defs`, `$anchor`,
 * `if`/`then`/`else`, `x-mcp-header`). The output schema drops `$schema`: SDK 1.x clients compile
 * it with a draft-07 Ajv, which throws on a 2020-12 `$schema` and so fails every call of the tool.
 * Every wire lists these entries (the 2025 ones add their fields).
 */
export function listTools(tools: ReadonlyMap<string, TaskToolDefinition>): ListedTool[] {
  return [...tools.values()].map((tool) => {
    const listed: ListedTool = {
      name: tool.name,
      description: tool.description,
      inputSchema: inputSchemaOf(tool),
    };
    if (tool.title !== undefined) listed.title = tool.title;
    if (tool.outputSchema !== undefined) listed.outputSchema = jsonSchema(tool.outputSchema, 'output');
    if (tool.annotations !== undefined) listed.annotations = tool.annotations;
    if (tool.icons !== undefined) listed.icons = tool.icons.map(listIcon);
    if (tool._meta !== undefined) listed._meta = tool._meta;
    return listed;
  });
}

const inputSchemas = new WeakMap<TaskToolDefinition, ListedTool['inputSchema']>();

/** A tool's listed input schema, converted once per tool definition. */
export function inputSchemaOf(tool: TaskToolDefinition): ListedTool['inputSchema'] {
  let schema = inputSchemas.get(tool);
  if (schema === undefined) {
    schema = {
      ...(z.toJSONSchema(tool.inputSchema, { io: 'input', unrepresentable: 'any' }) as object),
      type: 'object',
    };
    inputSchemas.set(tool, schema);
  }
  return schema;
}

function jsonSchema(schema: z.ZodType, io: 'output'): { type: 'object'; [key: string]: unknown } {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return { ...rest, type: 'object' };
}

function listIcon(icon: ToolIcon): ListedIcon {
  const { sizes, ...rest } = icon;
  return sizes === undefined ? { ...rest } : { ...rest, sizes: [...sizes] };
}
