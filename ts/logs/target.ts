/**
 * Log targets in Meilisearch's syntax (the `tracing` crate's `EnvFilter` directives):
 * comma-separated `level`, `target`, or `target=level`, for instance `info` or
 * `milli=trace,index_scheduler=info`. A level is `off`, `error`, `warn`, `info`, `debug`,
 * `trace` (any case) or a number 0-5; a target alone means `trace`.
 *
 * Quarry's log lines carry targets of their own (`quarry`, `quarry::http`, `quarry::tasks`),
 * and Meilisearch's crate names are read as the part of Quarry that does the same work:
 * `meilisearch` is the whole server, `index_scheduler` the task worker, `milli` the engine,
 * `actix_web` / `tracing_actix_web` the HTTP layer. A directive applies to a line when its
 * target is a prefix of the line's (`quarry::http` inside `quarry`), the most specific
 * directive wins, and a line no directive covers is not logged, as with `EnvFilter`.
 *
 * This file does not log anything; `ts/logs/hub.ts` applies the filters.
 */

/** 0 off, 1 error, 2 warn, 3 info, 4 debug, 5 trace (tracing's numbering). */
export type LevelNumber = 0 | 1 | 2 | 3 | 4 | 5;

export const LEVEL_NAMES = ['off', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/** Meilisearch's crate names and the Quarry target each one stands for. */
const ALIASES: Record<string, string> = {
  meilisearch: 'quarry',
  index_scheduler: 'quarry::tasks',
  milli: 'quarry::engine',
  actix_web: 'quarry::http',
  tracing_actix_web: 'quarry::http',
};

interface Directive {
  /** '' for a bare level (every target). */
  target: string;
  level: LevelNumber;
}

/** Why a target was refused; the message is the text after "Invalid value at `.target`: ". */
export class TargetError extends Error {}

const LEVEL_ERROR =
  'error parsing level filter: expected one of "off", "error", "warn", "info", "debug", "trace", or a number 0-5';

function parseLevel(text: string): LevelNumber | null {
  const lower = text.toLowerCase();
  const named = (LEVEL_NAMES as readonly string[]).indexOf(lower);
  if (named >= 0) return named as LevelNumber;
  if (/^[0-5]$/.test(text)) return Number(text) as LevelNumber;
  return null;
}

/** A parsed target: which level each line target is logged at. */
export class TargetFilter {
  /** The most verbose level any directive allows (what the logger must let through). */
  readonly max: LevelNumber;
  private readonly cache = new Map<string, LevelNumber>();

  private constructor(
    readonly text: string,
    private readonly directives: Directive[],
  ) {
    this.max = directives.reduce<LevelNumber>((m, d) => Math.max(d.level, m) as LevelNumber, 0);
  }

  /** Parses `text`; throws TargetError with Meilisearch's wording when it is not a target. */
  static parse(text: string): TargetFilter {
    if (text === '') {
      throw new TargetError(
        'Empty string is not a valid target. If you want to get no logs use `OFF`. Usage: `info`, `meilisearch=info`, or you can write multiple filters in one target: `index_scheduler=info,milli=trace`',
      );
    }
    const directives: Directive[] = [];
    for (const raw of text.split(',')) {
      const part = raw.trim();
      if (part === '') continue;
      const pieces = part.split('=');
      if (pieces.length > 2)
        throw new TargetError("invalid filter directive: too many '=' in filter directive, expected 0 or 1");
      if (pieces.length === 1) {
        const level = parseLevel(part);
        directives.push(level === null ? { target: targetOf(part), level: 5 } : { target: '', level });
        continue;
      }
      const [target, levelText] = pieces;
      const level = levelText === '' ? 5 : parseLevel(levelText);
      if (level === null) throw new TargetError(LEVEL_ERROR);
      directives.push({ target: targetOf(target), level });
    }
    return new TargetFilter(text, directives);
  }

  /** The level lines of `target` are logged at (0: not at all). */
  levelFor(target: string): LevelNumber {
    const cached = this.cache.get(target);
    if (cached !== undefined) return cached;
    let best: Directive | null = null;
    for (const d of this.directives) {
      if (!covers(d.target, target)) continue;
      // The most specific directive wins; between equally specific ones, the last given.
      if (best === null || d.target.length >= best.target.length) best = d;
    }
    const level = best === null ? 0 : best.level;
    this.cache.set(target, level);
    return level;
  }
}

function targetOf(name: string): string {
  // A span filter (`target[span]`) narrows within a target; Quarry has no spans, so the target stays.
  const bare = name.replace(/\[.*$/, '');
  return ALIASES[bare] ?? bare;
}

function covers(directive: string, target: string): boolean {
  return directive === '' || target === directive || target.startsWith(`${directive}::`);
}
