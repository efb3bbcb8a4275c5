/** Structured JSON logs, one object per line on stdout. Callers never pass secrets. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && value in ORDER;
}

export function createLogger(opts: { level?: LogLevel; fields?: Record<string, unknown>; write?: (line: string) => void } = {}): Logger {
  const min = ORDER[opts.level ?? 'info'];
  const write = opts.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const base = opts.fields ?? {};
  const emit =
    (level: LogLevel) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (ORDER[level] < min) return;
      write(serialize({ time: new Date().toISOString(), level, msg, ...base, ...fields }));
    };
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    child: (fields) => createLogger({ ...opts, fields: { ...base, ...fields } }),
  };
}

/**
 * One JSON line whatever the fields hold: bigint as a string, Error as {name, message, stack},
 * Map as an object, circular references as "[Circular]". Never throws (a log call must not fail the caller).
 */
function serialize(entry: Record<string, unknown>): string {
  // The objects being serialized, outermost first: `holder` is what JSON.stringify walks, `source` the original.
  const path: Array<{ holder: unknown; source: unknown }> = [];
  try {
    return JSON.stringify(entry, function (this: unknown, _key, value: unknown) {
      if (typeof value === 'bigint') return value.toString();
      if (typeof value !== 'object' || value === null) return value;
      while (path.length > 0 && path[path.length - 1]!.holder !== this) path.pop();
      if (path.some((p) => p.source === value)) return '[Circular]';
      let holder: unknown = value;
      if (value instanceof Error) {
        const cause = (value as { cause?: unknown }).cause;
        holder = { ...value, name: value.name, message: value.message, stack: value.stack, ...(cause === undefined ? {} : { cause }) };
      } else if (value instanceof Map) holder = Object.fromEntries(value);
      else if (value instanceof Set) holder = [...value];
      path.push({ holder, source: value });
      return holder;
    });
  } catch (error) {
    return JSON.stringify({ time: entry.time, level: entry.level, msg: entry.msg, logError: `fields not serializable: ${String(error)}` });
  }
}
