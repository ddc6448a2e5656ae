import type { TaskToolDefinition } from '../../../runner/tool.js';
import { listTools } from '../../tools-list.js';
import type { LegacyListedTool } from './extension.js';

/**
 * `tools/list` on the 2025 era: every tool with `execution.taskSupport` (reference 1.3, T-93). The
 * field is always written, `forbidden` included, so no client has to know the absent-means-forbidden
 * default.
 */
export function listLegacyTools(tools: ReadonlyMap<string, TaskToolDefinition>): LegacyListedTool[] {
  return listTools(tools).map((listed) => ({
    ...listed,
    execution: { taskSupport: tools.get(listed.name)?.taskSupport ?? 'optional' },
  }));
}
