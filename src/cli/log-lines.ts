/**
 * How the CLI shows a task's log (issue 18), for `terminus ops logs` and `terminus call
 * --follow-logs`: one line per log line (`10:00:01.250  text`, an `output` chunk after `> `; the
 * handler's `fields` are for programs and are shown with `--json` only), with markers where the reader must know something happened between two lines:
 * `-- re-run, epoch 2 --` when a re-run after a crash appends, and `-- 3 lines dropped ... --` where
 * the server's per-task bound dropped lines before they were read (a gap in `seq`).
 */
import type { LogLine } from '../executor/wire-port.js';

/** What to print for one log line: the markers first (zero or more), then the line itself. */
export interface RenderedLine {
  readonly markers: readonly string[];
  readonly text: string;
}

/** `10:00:01.250` (UTC) from the line's ISO time; the raw value when it is not one. */
function clock(at: string): string {
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? at : new Date(ms).toISOString().slice(11, 23);
}

/** One text line per log line; control characters other than tab are shown escaped (a log is untrusted text). */
export function lineText(line: LogLine): string {
  const text = line.text
    .replace(/\r?\n$/, '')
    // eslint-disable-next-line no-control-regex -- matching control characters is the point here
    .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return `${clock(line.at)}  ${line.stream === 'output' ? '> ' : ''}${text}`;
}

/** Keeps the last seq and epoch seen, so gaps and re-runs are marked where they happen. */
export class LogMarks {
  private lastSeq: number;
  private lastEpoch: number | null = null;

  /** `after`: the cursor the reading started from (lines up to it were seen before). */
  constructor(after: number) {
    this.lastSeq = after;
  }

  /** The markers due before `line`, then records it as seen. */
  before(line: LogLine): string[] {
    const markers: string[] = [];
    const gap = line.seq - this.lastSeq - 1;
    if (gap > 0) {
      markers.push(
        `-- ${gap} line${gap === 1 ? '' : 's'} dropped (the server keeps a bounded log per task; the oldest go first) --`,
      );
    }
    if (this.lastEpoch !== null && line.epoch !== this.lastEpoch) markers.push(`-- re-run, epoch ${line.epoch} --`);
    this.lastSeq = line.seq;
    this.lastEpoch = line.epoch;
    return markers;
  }

  /** Both at once, for printers that write everything to one stream. */
  render(line: LogLine): RenderedLine {
    return { markers: this.before(line), text: lineText(line) };
  }
}
