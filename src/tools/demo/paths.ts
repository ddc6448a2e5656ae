import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { ToolRpcError } from '../../runner/tool.js';

/**
 * Demo tools read only below their data folder (issue 12 item 7): a caller names a file relative to
 * it. The lexical rule (relative, no `..` segment) is part of the argument schema, so an escape is
 * refused with `-32602` before anything is stored; the symlink rule needs the file system and runs
 * in the handler (a link inside the folder that points out of it ends the task `failed`).
 */

/** Longest relative path accepted; Linux's PATH_MAX is 4096. */
const MAX_PATH_LENGTH = 1024;

/** The schema of a path argument: relative to the data folder, no `..`, no NUL. */
export const dataPathSchema = z
  .string()
  .min(1)
  .max(MAX_PATH_LENGTH)
  .refine((p) => !p.includes('\0'), 'path must not contain NUL')
  .refine((p) => !isAbsolute(p) && !/^[A-Za-z]:/.test(p), 'path must be relative to the data folder')
  .refine((p) => !p.split(/[\\/]/).includes('..'), 'path must not contain ".." segments');

/**
 * The real path of `given` inside `dataDir`, following symlinks; a path that resolves outside (or
 * does not exist) is a `ToolRpcError` `-32602` naming only the given path, never the real one.
 */
export async function resolveDataPath(dataDir: string, given: string): Promise<string> {
  const parsed = dataPathSchema.safeParse(given);
  if (!parsed.success) throw outside(given);
  let root: string;
  let real: string;
  try {
    root = await realpath(resolve(dataDir));
    real = await realpath(resolve(root, given));
  } catch {
    throw new ToolRpcError(-32602, `No such file below the data folder: ${given}`, { reason: 'file_not_found' });
  }
  const rel = relative(root, real);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) throw outside(given);
  return real;
}

function outside(given: string): ToolRpcError {
  return new ToolRpcError(-32602, `path must name a file below the data folder: ${given}`, {
    reason: 'path_outside_data_folder',
  });
}
