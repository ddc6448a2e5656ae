import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Splits one CSV line (RFC 4180 quoting, no embedded newlines). */
export function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(field);
      field = '';
    } else field += c;
  }
  out.push(field);
  return out;
}

const CITIES = ['Lisbon', 'Oslo', 'Nairobi', 'Lima', 'Osaka', 'Perth', 'Quito', 'Riga', 'Seoul', 'Tunis'];

/**
 * Writes a deterministic sample CSV (`id,city,amount,quantity,ok`) unless it already exists. Written
 * to a temporary name and renamed, so a crash mid-write never leaves a truncated sample behind.
 */
export async function ensureSampleCsv(path: string, rows: number): Promise<void> {
  const existing = await stat(path).catch(() => undefined);
  if (existing !== undefined) return;
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const out = createWriteStream(tmp);
  out.write('id,city,amount,quantity,ok\n');
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let i = 1; i <= rows; i++) {
    const line = `${i},${CITIES[i % CITIES.length]},${(next() * 1000).toFixed(2)},${Math.floor(next() * 50)},${next() > 0.1}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  await rename(tmp, path);
}
