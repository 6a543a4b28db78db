// The type check InfluxDB makes of a SELECT's fields before it reads anything: each operator's operands must make a
// value together (a string or a boolean plus a number does not, nor anything with a tag), else the statement answers
// "type error: <the operation, its names typed>: incompatible types: <left> and <right>". A name of no known type
// passes, as in InfluxDB.
import type { BinaryOp, Expr, Field } from './ast.ts';
import { StatementError } from './errors.ts';

export type DataType = 'float' | 'integer' | 'unsigned' | 'string' | 'boolean' | 'tag' | 'unknown';

/** The type of a name in the statement's measurements: a field's, 'tag' for a tag key, else 'unknown'. */
export type TypeOf = (name: string, cast?: 'field' | 'tag') => DataType;

const FLOAT_CALLS = new Set(['mean', 'median', 'integral', 'stddev', 'derivative', 'non_negative_derivative', 'moving_average']);
const INTEGER_CALLS = new Set(['count', 'elapsed']);
const COMPARISONS = new Set<BinaryOp>(['=', '!=', '<', '<=', '>', '>=']);
const ARITHMETIC = new Set<BinaryOp>(['+', '-', '*', '/', '%']);
const BITWISE = new Set<BinaryOp>(['&', '|', '^']);

/** Whether a field expression has an operator to check (most selects have none: no names to type). */
export function needsTypeCheck(fields: readonly Field[]): boolean {
  const has = (e: Expr): boolean => {
    switch (e.kind) {
      case 'binary': return true;
      case 'paren': return has(e.expr);
      case 'call': return e.args.some(has);
      default: return false;
    }
  };
  return fields.some((f) => has(f.expr));
}

/** Throws InfluxDB's type error for the first field whose operators cannot combine their operands' types. */
export function checkTypes(fields: readonly Field[], typeOf: TypeOf): void {
  for (const f of fields) typeOfExpr(f.expr, typeOf);
}

function typeOfExpr(e: Expr, typeOf: TypeOf): DataType {
  switch (e.kind) {
    case 'var': return typeOf(e.name, e.cast);
    case 'integer': return 'integer';
    case 'number': return 'float';
    case 'string': return 'string';
    case 'bool': return 'boolean';
    case 'paren': return typeOfExpr(e.expr, typeOf);
    case 'call': {
      const args = e.args.map((a) => typeOfExpr(a, typeOf));
      if (FLOAT_CALLS.has(e.name)) return 'float';
      if (INTEGER_CALLS.has(e.name)) return 'integer';
      return args[0] ?? 'unknown';
    }
    case 'binary': {
      const l = typeOfExpr(e.lhs, typeOf);
      const r = typeOfExpr(e.rhs, typeOf);
      if (l === 'unknown') return r;
      if (r === 'unknown') return l;
      const t = combined(e.op, l, r);
      if (t === undefined) throw new StatementError(`type error: ${exprText(e, typeOf)}: incompatible types: ${l} and ${r}`);
      return t;
    }
    default: return 'unknown';
  }
}

/** The type of `l op r`, or undefined when InfluxDB's evaluation of the two types' zero values makes no value. */
function combined(op: BinaryOp, l: DataType, r: DataType): DataType | undefined {
  const numeric = (t: DataType) => t === 'float' || t === 'integer' || t === 'unsigned';
  if (numeric(l) && numeric(r)) {
    if (COMPARISONS.has(op)) return 'boolean';
    if (ARITHMETIC.has(op)) return l === 'float' || r === 'float' || op === '/' ? 'float' : l;
    if (BITWISE.has(op)) return l !== 'float' && r !== 'float' ? l : undefined;
    return undefined;
  }
  // a boolean on the left of a logical or bitwise operator makes a boolean with anything (false unless both are true)
  if (l === 'boolean') return op === '=' || op === '!=' || op === 'AND' || op === 'OR' || BITWISE.has(op) ? 'boolean' : undefined;
  if (l === 'string' && r === 'string') return op === '=' || op === '!=' ? 'boolean' : undefined;
  return undefined;
}

// InfluxQL's keywords: a name spelled as one is quoted when printed
const KEYWORDS = new Set([
  'ALL', 'ALTER', 'ANALYZE', 'ANY', 'AS', 'ASC', 'BEGIN', 'BY', 'CARDINALITY', 'CREATE', 'CONTINUOUS', 'DATABASE', 'DATABASES', 'DEFAULT',
  'DELETE', 'DESC', 'DESTINATIONS', 'DIAGNOSTICS', 'DISTINCT', 'DROP', 'DURATION', 'END', 'EVERY', 'EXACT', 'EXPLAIN', 'FIELD', 'FOR',
  'FROM', 'GRANT', 'GRANTS', 'GROUP', 'GROUPS', 'IN', 'INF', 'INSERT', 'INTO', 'KEY', 'KEYS', 'KILL', 'LIMIT', 'MEASUREMENT',
  'MEASUREMENTS', 'NAME', 'OFFSET', 'ON', 'ORDER', 'PASSWORD', 'POLICY', 'POLICIES', 'PRIVILEGES', 'QUERIES', 'QUERY', 'READ',
  'REPLICATION', 'RESAMPLE', 'RETENTION', 'REVOKE', 'SELECT', 'SERIES', 'SET', 'SHARD', 'SHARDS', 'SLIMIT', 'SOFFSET', 'STATS',
  'SUBSCRIPTION', 'SUBSCRIPTIONS', 'TAG', 'TO', 'USER', 'USERS', 'VALUES', 'WHERE', 'WITH', 'WRITE', 'AND', 'OR', 'TRUE', 'FALSE',
]);

function ident(name: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !KEYWORDS.has(name.toUpperCase())) return name;
  return `"${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** An expression as InfluxDB prints it in its type errors: names with their types, numbers with three decimals. */
function exprText(e: Expr, typeOf: TypeOf): string {
  switch (e.kind) {
    case 'var': {
      const t = typeOf(e.name, e.cast);
      return t === 'unknown' ? ident(e.name) : `${ident(e.name)}::${t}`;
    }
    case 'wildcard': return e.cast ? `*::${e.cast}` : '*';
    case 'regex': return `/${e.source.replace(/\//g, '\\/')}/`;
    case 'integer': return String(e.value);
    case 'number': return e.value.toFixed(3);
    case 'string': return `'${e.value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
    case 'bool': return String(e.value);
    case 'duration': return `${e.ns}ns`;
    case 'call': return `${e.name}(${e.args.map((a) => exprText(a, typeOf)).join(', ')})`;
    case 'binary': return `${exprText(e.lhs, typeOf)} ${e.op} ${exprText(e.rhs, typeOf)}`;
    case 'paren': return `(${exprText(e.expr, typeOf)})`;
  }
}
