/** Running per-column statistics; plain JSON so it can be checkpointed and resumed. */
export interface ColumnStats {
  name: string;
  count: number;
  empty: number;
  numeric: number;
  sum: number;
  min: number | null;
  max: number | null;
  distinct: string[];
  distinctCapped: boolean;
}

/** Distinct values kept per column; beyond it only "more than 50" is reported. */
const MAX_DISTINCT = 50;

export function newStats(name: string): ColumnStats {
  return { name, count: 0, empty: 0, numeric: 0, sum: 0, min: null, max: null, distinct: [], distinctCapped: false };
}

export function addValue(stats: ColumnStats, value: string): void {
  stats.count++;
  if (value === '') {
    stats.empty++;
    return;
  }
  const n = Number(value);
  if (Number.isFinite(n)) {
    stats.numeric++;
    stats.sum += n;
    stats.min = stats.min === null ? n : Math.min(stats.min, n);
    stats.max = stats.max === null ? n : Math.max(stats.max, n);
  }
  if (!stats.distinctCapped && !stats.distinct.includes(value)) {
    if (stats.distinct.length < MAX_DISTINCT) stats.distinct.push(value);
    else stats.distinctCapped = true;
  }
}

export function summarize(stats: ColumnStats): Record<string, unknown> {
  const numericColumn = stats.numeric > 0 && stats.numeric === stats.count - stats.empty;
  return {
    name: stats.name,
    count: stats.count,
    empty: stats.empty,
    ...(numericColumn
      ? { min: stats.min, max: stats.max, mean: Number((stats.sum / stats.numeric).toFixed(4)) }
      : { distinct: stats.distinctCapped ? `more than ${MAX_DISTINCT}` : stats.distinct.length }),
  };
}
