/**
 * Where log lines go: stderr, and the one `/logs/stream` reader when there is one. Each has
 * a target filter (`ts/logs/target.ts`) and a format (`human` or `json`), changed at run
 * time by `POST /logs/stderr` and `POST /logs/stream`.
 *
 * The winston logger has a single transport, this hub, and its level is kept at the most
 * verbose level either destination wants (silent when neither wants anything), so
 * `logger.isInfoEnabled()` stays one comparison on the request path and a line nobody will
 * read is never built. The per-target filters run only on lines that pass that level.
 *
 * What it does not do: decide who may open the stream (the route does), or buffer for a
 * slow reader: when more than {@link STREAM_BACKLOG_BYTES} are waiting to be sent, lines
 * are dropped rather than held in memory.
 */
import type winston from 'winston';
// winston's own transport base class (winston re-exports it at run time, not in its types).
import TransportStream from 'winston-transport';
import type { LevelNumber, TargetFilter } from './target';

export type LogMode = 'human' | 'json';

/** Bytes a stream reader may fall behind before lines are dropped. */
export const STREAM_BACKLOG_BYTES = 4 * 1024 * 1024;

/** winston's npm levels as tracing's numbers. */
const LEVEL_OF: Record<string, LevelNumber> = { error: 1, warn: 2, info: 3, http: 3, verbose: 4, debug: 4, silly: 5 };
const WINSTON_LEVEL = ['error', 'error', 'warn', 'info', 'debug', 'silly'] as const;
const LEVEL_TEXT = ['OFF', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE'] as const;

/** Lines without a target of their own. */
export const DEFAULT_TARGET = 'quarry';

/** A reader of the stream: it gets whole lines, and says how far behind it is. */
export interface StreamSink {
  write(line: string): void;
  backlog(): number;
  /** Called when the stream is taken away from the reader (`DELETE /logs/stream`). */
  end?(): void;
}

interface Destination {
  filter: TargetFilter;
  mode: LogMode;
  sink: StreamSink;
}

type Info = winston.Logform.TransformableInfo & Record<string, unknown>;

export class LogHub {
  private stderr: Destination;
  private stream: Destination | null = null;

  constructor(
    private readonly logger: winston.Logger,
    stderrFilter: TargetFilter,
    stderrMode: LogMode,
    stderrSink: StreamSink,
  ) {
    this.stderr = { filter: stderrFilter, mode: stderrMode, sink: stderrSink };
    this.refreshLevel();
  }

  /** The stderr filter now in force. */
  get stderrTarget(): string {
    return this.stderr.filter.text;
  }

  setStderr(filter: TargetFilter): void {
    this.stderr = { ...this.stderr, filter };
    this.refreshLevel();
  }

  /** Starts sending lines to `sink`; false when another reader already has the stream. */
  openStream(filter: TargetFilter, mode: LogMode, sink: StreamSink): boolean {
    if (this.stream !== null) return false;
    this.stream = { filter, mode, sink };
    this.refreshLevel();
    return true;
  }

  /** Stops the stream if `sink` (or, without one, anyone) has it; true when one was stopped. */
  closeStream(sink?: StreamSink): boolean {
    const current = this.stream;
    if (current === null || (sink !== undefined && current.sink !== sink)) return false;
    this.stream = null;
    this.refreshLevel();
    if (sink === undefined) current.sink.end?.();
    return true;
  }

  get streaming(): boolean {
    return this.stream !== null;
  }

  private refreshLevel(): void {
    const max = Math.max(this.stderr.filter.max, this.stream?.filter.max ?? 0) as LevelNumber;
    this.logger.silent = max === 0;
    this.logger.level = WINSTON_LEVEL[max];
  }

  /** Called by the transport for every line that passed the logger's level. */
  dispatch(info: Info): void {
    const level = LEVEL_OF[info.level] ?? 3;
    const target = typeof info.target === 'string' ? info.target : DEFAULT_TARGET;
    const at = new Date().toISOString();
    for (const d of [this.stderr, this.stream]) {
      if (d === null || d.filter.levelFor(target) < level) continue;
      if (d !== this.stderr && d.sink.backlog() > STREAM_BACKLOG_BYTES) continue;
      d.sink.write(formatLine(d.mode, at, level, target, info));
    }
  }

  /** The winston transport that hands lines to this hub. */
  transport(): TransportStream {
    return new HubTransport(this);
  }
}

class HubTransport extends TransportStream {
  constructor(private readonly hub: LogHub) {
    super();
  }

  override log(info: Info, next: () => void): void {
    this.hub.dispatch(info);
    next();
  }
}

function fieldsOf(info: Info): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(info)) {
    if (v === undefined || k === 'level' || k === 'message' || k === 'target' || k === 'timestamp') continue;
    fields[k] = v instanceof Error ? (v.stack ?? String(v)) : v;
  }
  return fields;
}

/** One line, with its newline: tracing's `fmt` layout for `human`, its JSON layout for `json`. */
export function formatLine(mode: LogMode, at: string, level: LevelNumber, target: string, info: Info): string {
  const message = typeof info.message === 'string' ? info.message : JSON.stringify(info.message);
  const fields = fieldsOf(info);
  if (mode === 'json') {
    return `${JSON.stringify({ timestamp: at, level: LEVEL_TEXT[level], fields: { message, ...fields }, target })}\n`;
  }
  let line = `${at} ${LEVEL_TEXT[level].padStart(5)} ${target}: ${message}`;
  for (const [k, v] of Object.entries(fields)) line += ` ${k}=${humanValue(v)}`;
  return `${line}\n`;
}

function humanValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]*$/.test(v) && v !== '' ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}
