// InfluxQL parser: text -> statements. Recursive descent with one token of look-ahead; binary operators by
// precedence climbing (OR < AND < comparisons < + - | ^ < * / % &), as InfluxQL defines them. Bound parameters
// ($name) are replaced by their values while parsing. Errors read like InfluxDB's: `found X, expected Y at line L, char C`.
import type { BinaryOp, Dimension, Expr, Field, Fill, SelectStatement, ShowStatement, Source, Statement } from './ast.ts';
import { Lexer, ParseError, type Token } from './lexer.ts';

export { ParseError } from './lexer.ts';

const PRECEDENCE: Partial<Record<string, number>> = {
  OR: 1, AND: 2,
  '=': 4, '!=': 4, '<': 4, '<=': 4, '>': 4, '>=': 4, '=~': 4, '!~': 4,
  '+': 5, '-': 5, '|': 5, '^': 5,
  '*': 6, '/': 6, '%': 6, '&': 6,
};

/** Statements that InfluxQL has and gridkeeper refuses one by one (the rest of the query still runs). */
const UNSUPPORTED_START = new Set(['CREATE', 'DROP', 'DELETE', 'ALTER', 'GRANT', 'REVOKE', 'KILL', 'EXPLAIN', 'SET', 'INSERT', 'BEGIN', 'END']);

export type Params = Record<string, unknown>;

/** Parses a query of one or more statements separated by `;`. Throws ParseError. */
export function parseQuery(text: string, params: Params = {}): Statement[] {
  return new Parser(text, params).statements();
}

/** Compiles an InfluxQL regex literal (Go RE2 syntax, which JavaScript reads the same for everything common). */
export function compileRegex(source: string): RegExp {
  try {
    return new RegExp(source.replace(/\(\?i\)/g, ''), source.includes('(?i)') ? 'i' : '');
  } catch (err) {
    throw new ParseError(`invalid regular expression /${source}/: ${(err as Error).message}`);
  }
}

class Parser {
  private readonly lx: Lexer;

  constructor(text: string, private readonly params: Params) {
    this.lx = new Lexer(text);
  }

  statements(): Statement[] {
    const out: Statement[] = [];
    for (;;) {
      while (this.lx.peek().kind === 'SEMI') this.lx.next();
      if (this.lx.peek().kind === 'EOF') break;
      out.push(this.statement());
      const t = this.lx.peek();
      if (t.kind === 'EOF') break;
      if (t.kind !== 'SEMI') throw this.unexpected(t, [';']);
    }
    return out;
  }

  private fail(t: Token, expected: string[]): ParseError {
    return new ParseError(`found ${t.kind === 'EOF' ? 'EOF' : t.text}, expected ${expected.join(', ')} at ${this.lx.where(t.pos)}`);
  }

  private unexpected(t: Token, expected: string[]): ParseError {
    return this.fail(t, expected);
  }

  private isKeyword(word: string): boolean {
    const t = this.lx.peek();
    return t.kind === 'KEYWORD' && t.value === word;
  }

  private accept(word: string): boolean {
    if (!this.isKeyword(word)) return false;
    this.lx.next();
    return true;
  }

  private expect(word: string): void {
    const t = this.lx.next();
    if (t.kind !== 'KEYWORD' || t.value !== word) throw this.fail(t, [word]);
  }

  private expectKind(kind: Token['kind'], what: string): Token {
    const t = this.lx.next();
    if (t.kind !== kind) throw this.fail(t, [what]);
    return t;
  }

  private ident(): string {
    const t = this.lx.next();
    if (t.kind === 'IDENT') return t.value;
    if (t.kind === 'PARAM') {
      const v = this.param(t);
      if (typeof v === 'string') return v;
    }
    throw this.fail(t, ['identifier']);
  }

  private param(t: Token): unknown {
    if (!Object.hasOwn(this.params, t.value)) throw new ParseError(`missing parameter: ${t.value}`);
    return this.params[t.value];
  }

  private statement(): Statement {
    const t = this.lx.peek();
    if (t.kind === 'KEYWORD' && t.value === 'SELECT') return this.select();
    if (t.kind === 'KEYWORD' && t.value === 'SHOW') return this.show();
    if (t.kind === 'KEYWORD' && UNSUPPORTED_START.has(t.value)) return this.skipUnsupported();
    throw this.fail(t, ['SELECT', 'DELETE', 'SHOW', 'CREATE', 'DROP', 'EXPLAIN', 'GRANT', 'REVOKE', 'ALTER', 'SET', 'KILL']);
  }

  /** Skips to the end of a statement gridkeeper does not run; keeps its first words for the error. */
  private skipUnsupported(): Statement {
    const words: string[] = [];
    for (;;) {
      const t = this.lx.peek();
      if (t.kind === 'EOF' || t.kind === 'SEMI') break;
      // a regex literal inside (e.g. DROP SERIES FROM /re/) would otherwise lex as division
      if (t.kind === 'OP' && t.value === '/') this.lx.regex();
      else this.lx.next();
      if (words.length < 3 && t.kind === 'KEYWORD') words.push(t.value);
    }
    return { kind: 'unsupported', text: words.join(' ') };
  }

  // ---- SELECT ----

  private select(): SelectStatement {
    this.expect('SELECT');
    const fields = this.fields();
    let into: string | undefined;
    if (this.accept('INTO')) into = this.sourceList()[0]?.name ?? 'target';
    this.expect('FROM');
    const sources = this.sourceList();
    const stmt: SelectStatement = {
      kind: 'select', fields, sources, dimensions: [], fill: { mode: 'null' }, desc: false, limit: 0, offset: 0, slimit: 0, soffset: 0,
      ...(into !== undefined ? { into } : {}),
    };
    if (this.accept('WHERE')) stmt.condition = this.expr();
    if (this.accept('GROUP')) {
      this.expect('BY');
      stmt.dimensions = this.dimensions();
    }
    if (this.lx.peek().kind === 'IDENT' && this.lx.peek().value.toLowerCase() === 'fill') stmt.fill = this.fill();
    if (this.accept('ORDER')) {
      this.expect('BY');
      const t = this.lx.next();
      if (t.kind !== 'IDENT' || t.value.toLowerCase() !== 'time') throw new ParseError('only ORDER BY time supported at this time');
      if (this.accept('DESC')) stmt.desc = true;
      else this.accept('ASC');
    }
    if (this.accept('LIMIT')) stmt.limit = this.nonNegative('LIMIT');
    if (this.accept('OFFSET')) stmt.offset = this.nonNegative('OFFSET');
    if (this.accept('SLIMIT')) stmt.slimit = this.nonNegative('SLIMIT');
    if (this.accept('SOFFSET')) stmt.soffset = this.nonNegative('SOFFSET');
    const t = this.lx.peek();
    if (t.kind === 'IDENT' && t.value.toLowerCase() === 'tz') {
      this.lx.next();
      this.expectKind('LPAREN', '(');
      const zone = this.expectKind('STRING', 'string');
      this.expectKind('RPAREN', ')');
      stmt.tz = zone.value;
    }
    return stmt;
  }

  private nonNegative(what: string): number {
    const t = this.lx.next();
    if (t.kind !== 'INTEGER') throw this.fail(t, ['integer']);
    const n = Number(t.value);
    if (!Number.isSafeInteger(n)) throw new ParseError(`unable to parse integer at ${this.lx.where(t.pos)}`);
    if (what === 'LIMIT' && n === 0) return 0;
    return n;
  }

  private fields(): Field[] {
    const out: Field[] = [];
    do {
      const start = this.lx.peek().pos;
      const expr = this.expr();
      const op = conditionOperator(expr);
      if (op !== undefined) throw new ParseError(`invalid operator ${op} in SELECT clause at ${this.lx.where(start)}; operator is intended for WHERE clause`);
      const field: Field = { expr };
      if (this.accept('AS')) field.alias = this.ident();
      out.push(field);
    } while (this.acceptComma());
    return out;
  }

  private acceptComma(): boolean {
    if (this.lx.peek().kind !== 'COMMA') return false;
    this.lx.next();
    return true;
  }

  private sourceList(): Source[] {
    const out: Source[] = [];
    do out.push(this.source()); while (this.acceptComma());
    return out;
  }

  /** `m`, `"db"."rp"."m"`, `db..m`, `/regex/`, `"db"."rp"./regex/` */
  private source(): Source {
    const parts: string[] = [];
    for (;;) {
      const re = this.lx.regex();
      if (re !== undefined) {
        const src = this.dotted(parts);
        src.regex = compileRegex(re.value);
        return src;
      }
      const t = this.lx.peek();
      if (t.kind === 'LPAREN') throw new ParseError('subqueries are not supported');
      if (t.kind === 'DOT' && parts.length > 0) { parts.push(''); this.lx.next(); continue; }
      const name = t.kind === 'IDENT' || t.kind === 'PARAM' || (t.kind === 'KEYWORD' && !['WHERE', 'GROUP', 'ORDER', 'LIMIT'].includes(t.value))
        ? (t.kind === 'KEYWORD' ? (this.lx.next(), t.text) : this.ident())
        : undefined;
      if (name === undefined) throw this.fail(t, ['identifier', 'regex']);
      if (this.lx.peek().kind === 'DOT') {
        this.lx.next();
        parts.push(name);
        // `db..m`: an empty retention policy
        if (this.lx.peek().kind === 'DOT') { this.lx.next(); parts.push(''); }
        if (parts.length > 2) throw new ParseError(`too many segments in ${[...parts, ''].join('.')}`);
        continue;
      }
      const src = this.dotted(parts);
      src.name = name;
      return src;
    }
  }

  private dotted(parts: string[]): Source {
    const src: Source = {};
    if (parts.length === 2) {
      if (parts[0] !== '') src.database = parts[0];
      if (parts[1] !== '') src.retentionPolicy = parts[1];
    } else if (parts.length === 1) {
      src.retentionPolicy = parts[0];
    }
    return src;
  }

  private dimensions(): Dimension[] {
    const out: Dimension[] = [];
    do {
      const re = this.lx.regex();
      if (re !== undefined) { out.push({ kind: 'regex', re: compileRegex(re.value) }); continue; }
      const t = this.lx.peek();
      if (t.kind === 'OP' && t.value === '*') { this.lx.next(); out.push({ kind: 'wildcard' }); continue; }
      const name = this.ident();
      if (!t.quoted && name.toLowerCase() === 'time' && this.lx.peek().kind === 'LPAREN') {
        this.lx.next();
        const interval = this.durationArg();
        let offsetNs = 0;
        if (this.acceptComma()) {
          const n = this.lx.peek();
          if (n.kind === 'IDENT' && n.value.toLowerCase() === 'now') {
            throw new ParseError('time dimension offset now() is not supported');
          }
          let sign = 1;
          if (n.kind === 'OP' && n.value === '-') { this.lx.next(); sign = -1; }
          offsetNs = sign * this.durationArg();
        }
        this.expectKind('RPAREN', ')');
        if (interval < 0) throw new ParseError('time dimension must have positive duration');
        // time(0s) groups nothing by time, as in InfluxDB
        if (interval > 0) out.push({ kind: 'time', intervalNs: interval, offsetNs });
        continue;
      }
      out.push({ kind: 'tag', name });
    } while (this.acceptComma());
    return out;
  }

  private durationArg(): number {
    const t = this.lx.next();
    if (t.kind === 'DURATION') return Number(t.value);
    if (t.kind === 'PARAM') {
      const v = this.param(t);
      if (typeof v === 'string') {
        const d = new Lexer(v).next();
        if (d.kind === 'DURATION') return Number(d.value);
      }
    }
    throw this.fail(t, ['duration']);
  }

  private fill(): Fill {
    this.lx.next();
    this.expectKind('LPAREN', '(');
    const t = this.lx.next();
    let fill: Fill;
    if (t.kind === 'IDENT' && ['null', 'none', 'previous', 'linear'].includes(t.value.toLowerCase())) {
      fill = { mode: t.value.toLowerCase() as 'null' };
    } else if (t.kind === 'INTEGER' || t.kind === 'NUMBER') {
      fill = { mode: 'value', value: Number(t.value) };
    } else if (t.kind === 'OP' && t.value === '-') {
      const n = this.lx.next();
      if (n.kind !== 'INTEGER' && n.kind !== 'NUMBER') throw this.fail(n, ['number']);
      fill = { mode: 'value', value: -Number(n.value) };
    } else {
      throw this.fail(t, ['null', 'none', 'previous', 'linear', 'number']);
    }
    this.expectKind('RPAREN', ')');
    return fill;
  }

  // ---- expressions ----

  expr(minPrecedence = 1): Expr {
    let lhs = this.unary();
    for (;;) {
      const t = this.lx.peek();
      const op = t.kind === 'OP' ? t.value : t.kind === 'KEYWORD' && (t.value === 'AND' || t.value === 'OR') ? t.value : undefined;
      const prec = op === undefined ? undefined : PRECEDENCE[op];
      if (prec === undefined || prec < minPrecedence) return lhs;
      this.lx.next();
      let rhs: Expr;
      if (op === '=~' || op === '!~') rhs = this.regexOperand();
      else rhs = this.expr(prec + 1);
      lhs = { kind: 'binary', op: op as BinaryOp, lhs, rhs };
    }
  }

  private regexOperand(): Expr {
    const re = this.lx.regex();
    if (re !== undefined) return { kind: 'regex', source: re.value, re: compileRegex(re.value) };
    const t = this.lx.next();
    if (t.kind === 'PARAM') {
      const v = this.param(t);
      if (typeof v === 'string') return { kind: 'regex', source: v, re: compileRegex(v) };
    }
    throw this.fail(t, ['regex']);
  }

  private unary(): Expr {
    const t = this.lx.peek();
    if (t.kind === 'OP' && (t.value === '-' || t.value === '+')) {
      this.lx.next();
      // InfluxDB's parser takes no keyword after a sign, distinct() included
      const after = this.lx.peek();
      if (after.kind === 'KEYWORD' && after.value === 'DISTINCT') throw new ParseError(`found DISTINCT, expected identifier, number, duration, ( at ${this.lx.where(after.pos)}`);
      const inner = this.unary();
      if (t.value === '+') return inner;
      if (inner.kind === 'number' || inner.kind === 'integer') return { ...inner, value: -inner.value };
      if (inner.kind === 'duration') return { kind: 'duration', ns: -inner.ns };
      return { kind: 'binary', op: '*', lhs: { kind: 'integer', value: -1 }, rhs: inner };
    }
    return this.primary();
  }

  private primary(): Expr {
    const t = this.lx.next();
    switch (t.kind) {
      case 'LPAREN': {
        const inner = this.expr();
        this.expectKind('RPAREN', ')');
        return { kind: 'paren', expr: inner };
      }
      case 'STRING': return { kind: 'string', value: t.value };
      case 'INTEGER': {
        const value = Number(t.value);
        if (!Number.isSafeInteger(value)) return { kind: 'number', value };
        return { kind: 'integer', value };
      }
      case 'NUMBER': return { kind: 'number', value: Number(t.value) };
      case 'DURATION': return { kind: 'duration', ns: Number(t.value) };
      case 'PARAM': return this.paramExpr(t);
      case 'KEYWORD':
        if (t.value === 'TRUE' || t.value === 'FALSE') return { kind: 'bool', value: t.value === 'TRUE' };
        // distinct is a keyword and a function
        if (t.value === 'DISTINCT' && this.lx.peek().kind === 'LPAREN') return this.call('distinct');
        throw this.fail(t, ['identifier', 'string', 'number', 'bool']);
      case 'OP':
        if (t.value === '*') return { kind: 'wildcard', ...this.cast() };
        break;
      case 'IDENT': {
        if (!t.quoted && this.lx.peek().kind === 'LPAREN') return this.call(t.value.toLowerCase());
        return { kind: 'var', name: t.value, ...this.cast() };
      }
      default: break;
    }
    throw this.fail(t, ['identifier', 'string', 'number', 'bool']);
  }

  private paramExpr(t: Token): Expr {
    const v = this.param(t);
    if (typeof v === 'string') return { kind: 'string', value: v };
    if (typeof v === 'boolean') return { kind: 'bool', value: v };
    if (typeof v === 'number') return Number.isInteger(v) ? { kind: 'integer', value: v } : { kind: 'number', value: v };
    if (v !== null && typeof v === 'object' && typeof (v as { identifier?: unknown }).identifier === 'string') {
      return { kind: 'var', name: (v as { identifier: string }).identifier };
    }
    throw new ParseError(`unsupported value of parameter ${t.value}`);
  }

  private cast(): { cast?: 'field' | 'tag' } {
    if (this.lx.peek().kind !== 'DCOLON') return {};
    this.lx.next();
    const t = this.lx.next();
    const word = t.kind === 'IDENT' || t.kind === 'KEYWORD' ? t.value.toLowerCase() : '';
    if (word === 'field' || word === 'tag') return { cast: word };
    // value types (::float, ::integer, ::string, ::boolean) are accepted and do not change anything here
    if (['float', 'integer', 'string', 'boolean', 'unsigned'].includes(word)) return {};
    throw this.fail(t, ['float', 'integer', 'string', 'boolean', 'field', 'tag']);
  }

  private call(name: string): Expr {
    this.expectKind('LPAREN', '(');
    const args: Expr[] = [];
    if (this.lx.peek().kind !== 'RPAREN') {
      do {
        const re = this.lx.regex();
        args.push(re !== undefined ? { kind: 'regex', source: re.value, re: compileRegex(re.value) } : this.expr());
      } while (this.acceptComma());
    }
    this.expectKind('RPAREN', ')');
    return { kind: 'call', name, args };
  }

  // ---- SHOW ----

  private show(): Statement {
    this.expect('SHOW');
    const t = this.lx.next();
    const base = (what: ShowStatement['what']): ShowStatement => ({ kind: 'show', what, sources: [], limit: 0, offset: 0 });
    const on = (s: ShowStatement) => { if (this.accept('ON')) s.database = this.ident(); };
    const from = (s: ShowStatement) => { if (this.accept('FROM')) s.sources = this.sourceList(); };
    const where = (s: ShowStatement) => { if (this.accept('WHERE')) s.condition = this.expr(); };
    const limits = (s: ShowStatement) => {
      if (this.accept('LIMIT')) s.limit = this.nonNegative('LIMIT');
      if (this.accept('OFFSET')) s.offset = this.nonNegative('OFFSET');
    };
    if (t.kind === 'KEYWORD') {
      switch (t.value) {
        case 'DATABASES': return base('databases');
        case 'RETENTION': {
          this.expect('POLICIES');
          const s = base('retention policies');
          on(s);
          return s;
        }
        case 'MEASUREMENTS': {
          const s = base('measurements');
          on(s);
          if (this.accept('WITH')) {
            this.expect('MEASUREMENT');
            const op = this.lx.next();
            if (op.kind === 'OP' && op.value === '=~') {
              const re = this.lx.regex();
              if (re === undefined) throw this.fail(this.lx.peek(), ['regex']);
              s.measurement = { regex: compileRegex(re.value) };
            } else if (op.kind === 'OP' && op.value === '=') {
              s.measurement = { name: this.ident() };
            } else throw this.fail(op, ['=', '=~']);
          }
          where(s);
          limits(s);
          return s;
        }
        case 'TAG': {
          const next = this.lx.next();
          if (next.kind === 'KEYWORD' && next.value === 'KEYS') {
            if (this.isKeyword('CARDINALITY')) break;
            const s = base('tag keys');
            on(s); from(s); where(s); limits(s);
            return s;
          }
          if (next.kind === 'KEYWORD' && next.value === 'VALUES') {
            if (this.isKeyword('CARDINALITY')) break;
            const s = base('tag values');
            on(s); from(s);
            this.expect('WITH');
            this.expect('KEY');
            s.keys = this.tagKeyCondition();
            where(s); limits(s);
            return s;
          }
          throw this.fail(next, ['KEYS', 'VALUES']);
        }
        case 'FIELD': {
          this.expect('KEYS');
          if (this.isKeyword('CARDINALITY')) break;
          const s = base('field keys');
          on(s); from(s); limits(s);
          return s;
        }
        case 'SERIES': {
          if (this.isKeyword('CARDINALITY')) break;
          const s = base('series');
          on(s); from(s); where(s); limits(s);
          return s;
        }
        default: break;
      }
      // SHOW USERS, GRANTS, SHARDS, STATS, ... and the CARDINALITY forms: not run here
      const rest = this.skipUnsupported() as { text: string };
      return { kind: 'unsupported', text: `SHOW ${t.value}${rest.text ? ` ${rest.text}` : ''}`.trim() };
    }
    throw this.fail(t, ['DATABASES', 'FIELD', 'MEASUREMENTS', 'RETENTION', 'SERIES', 'TAG']);
  }

  private tagKeyCondition(): NonNullable<ShowStatement['keys']> {
    const op = this.lx.next();
    if (op.kind === 'KEYWORD' && op.value === 'IN') {
      this.expectKind('LPAREN', '(');
      const names: string[] = [];
      do names.push(this.ident()); while (this.acceptComma());
      this.expectKind('RPAREN', ')');
      return { op: 'IN', names };
    }
    if (op.kind === 'OP' && (op.value === '=~' || op.value === '!~')) {
      const re = this.lx.regex();
      if (re === undefined) throw this.fail(this.lx.peek(), ['regex']);
      return { op: op.value, re: compileRegex(re.value) };
    }
    if (op.kind === 'OP' && (op.value === '=' || op.value === '!=')) return { op: op.value, names: [this.ident()] };
    throw this.fail(op, ['=', '!=', '=~', '!~', 'IN']);
  }
}

const CONDITION_OPERATORS = new Set(['=', '!=', '<', '<=', '>', '>=', '=~', '!~', 'AND', 'OR']);

/** The outermost comparison or logical operator of a field expression (InfluxDB refuses them in SELECT), left first. */
function conditionOperator(e: Expr): string | undefined {
  switch (e.kind) {
    case 'binary': return CONDITION_OPERATORS.has(e.op) ? e.op : conditionOperator(e.lhs) ?? conditionOperator(e.rhs);
    case 'paren': return conditionOperator(e.expr);
    case 'call': for (const a of e.args) { const op = conditionOperator(a); if (op !== undefined) return op; } return undefined;
    default: return undefined;
  }
}
