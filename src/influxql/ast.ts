// The InfluxQL syntax tree: what the parser produces and the executor reads.

export type Expr =
  | { kind: 'var'; name: string; cast?: 'field' | 'tag' }
  | { kind: 'wildcard'; cast?: 'field' | 'tag' }
  | { kind: 'regex'; source: string; re: RegExp }
  | { kind: 'number'; value: number }
  | { kind: 'integer'; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'bool'; value: boolean }
  /** a duration, in nanoseconds */
  | { kind: 'duration'; ns: number }
  | { kind: 'call'; name: string; args: Expr[] }
  | { kind: 'binary'; op: BinaryOp; lhs: Expr; rhs: Expr }
  | { kind: 'paren'; expr: Expr };

export type BinaryOp = '+' | '-' | '*' | '/' | '%' | '&' | '|' | '^' | '=' | '!=' | '<' | '<=' | '>' | '>=' | '=~' | '!~' | 'AND' | 'OR';

export interface Field {
  expr: Expr;
  alias?: string;
}

export interface Source {
  database?: string;
  retentionPolicy?: string;
  /** a measurement name, or a regex over measurement names */
  name?: string;
  regex?: RegExp;
}

export type Fill = { mode: 'null' } | { mode: 'none' } | { mode: 'previous' } | { mode: 'linear' } | { mode: 'value'; value: number };

export type Dimension =
  | { kind: 'time'; intervalNs: number; offsetNs: number }
  | { kind: 'tag'; name: string }
  | { kind: 'regex'; re: RegExp }
  | { kind: 'wildcard' };

export interface SelectStatement {
  kind: 'select';
  fields: Field[];
  sources: Source[];
  into?: string;
  condition?: Expr;
  dimensions: Dimension[];
  fill: Fill;
  desc: boolean;
  limit: number;
  offset: number;
  slimit: number;
  soffset: number;
  tz?: string;
}

export interface ShowStatement {
  kind: 'show';
  what: 'databases' | 'retention policies' | 'measurements' | 'tag keys' | 'tag values' | 'field keys' | 'series';
  database?: string;
  sources: Source[];
  /** SHOW MEASUREMENTS WITH MEASUREMENT =~ /re/ | = name */
  measurement?: Source;
  /** SHOW TAG VALUES WITH KEY …: an exact list, or a regex, or != / !~ */
  keys?: { op: '=' | '!=' | 'IN' | '=~' | '!~'; names?: string[]; re?: RegExp };
  condition?: Expr;
  limit: number;
  offset: number;
}

/** A statement InfluxQL knows but gridkeeper does not run (writes, users, continuous queries, ...). */
export interface UnsupportedStatement {
  kind: 'unsupported';
  text: string;
}

export type Statement = SelectStatement | ShowStatement | UnsupportedStatement;

export type Call = Extract<Expr, { kind: 'call' }>;

/** The calls of a field expression, outside other calls' arguments. */
export function callsIn(e: Expr): Call[] {
  switch (e.kind) {
    case 'call': return e.name === 'now' ? [] : [e];
    case 'binary': return [...callsIn(e.lhs), ...callsIn(e.rhs)];
    case 'paren': return callsIn(e.expr);
    default: return [];
  }
}

/**
 * An expression as text, to tell equal calls apart from different ones: InfluxDB reads each distinct call once, so
 * `last(x) + last(x)` is one selector. Casts are left out (InfluxDB gives every name its type before it compares).
 */
export function exprKey(e: Expr): string {
  switch (e.kind) {
    case 'var': return JSON.stringify(e.name);
    case 'wildcard': return '*';
    case 'regex': return `/${e.source}/`;
    case 'call': return `${e.name}(${e.args.map(exprKey).join(',')})`;
    case 'binary': return `(${exprKey(e.lhs)} ${e.op} ${exprKey(e.rhs)})`;
    case 'paren': return exprKey(e.expr);
    default: return JSON.stringify(e);
  }
}

/** The distinct calls among `calls`, first occurrences in order. */
export function distinctCalls(calls: Call[]): Call[] {
  const seen = new Map<string, Call>();
  for (const c of calls) if (!seen.has(exprKey(c))) seen.set(exprKey(c), c);
  return [...seen.values()];
}

/** Whether a field expression names a field or tag outside any call. */
export function hasVar(e: Expr): boolean {
  switch (e.kind) {
    case 'var': case 'wildcard': return true;
    case 'binary': return hasVar(e.lhs) || hasVar(e.rhs);
    case 'paren': return hasVar(e.expr);
    default: return false;
  }
}
