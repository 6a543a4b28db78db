// InfluxQL tokens. The lexer is driven by the parser: a `/` is division unless the parser asks for a regex literal at
// that point (after =~ / !~, in FROM, in WITH MEASUREMENT / KEY), because the two cannot be told apart by the lexer.
// Comments (`-- …` to the end of the line, `/* … */`) and white space separate tokens.

export type TokenKind =
  | 'EOF' | 'IDENT' | 'KEYWORD' | 'STRING' | 'NUMBER' | 'INTEGER' | 'DURATION' | 'PARAM'
  | 'OP' | 'LPAREN' | 'RPAREN' | 'COMMA' | 'SEMI' | 'DOT' | 'DCOLON' | 'REGEX';

export interface Token {
  kind: TokenKind;
  /** identifiers: the name (unquoted); keywords: upper case; operators: their text; strings: the value */
  value: string;
  /** whether an identifier was written in double quotes (then it is never a keyword) */
  quoted?: boolean;
  pos: number;
  /** the text as written, for error messages */
  text: string;
}

export class ParseError extends Error {}

const KEYWORDS = new Set([
  'ALL', 'ALTER', 'AND', 'ANY', 'AS', 'ASC', 'BEGIN', 'BY', 'CARDINALITY', 'CONTINUOUS', 'CREATE', 'DATABASE', 'DATABASES',
  'DEFAULT', 'DELETE', 'DESC', 'DESTINATIONS', 'DIAGNOSTICS', 'DISTINCT', 'DROP', 'DURATION', 'END', 'EVERY', 'EXACT', 'EXPLAIN',
  'FIELD', 'FOR', 'FROM', 'GRANT', 'GRANTS', 'GROUP', 'GROUPS', 'IN', 'INF', 'INSERT', 'INTO', 'KEY', 'KEYS', 'KILL', 'LIMIT',
  'MEASUREMENT', 'MEASUREMENTS', 'NAME', 'OFFSET', 'ON', 'OR', 'ORDER', 'PASSWORD', 'POLICIES', 'POLICY', 'PRIVILEGES',
  'QUERIES', 'QUERY', 'READ', 'REPLICATION', 'RESAMPLE', 'RETENTION', 'REVOKE', 'SELECT', 'SERIES', 'SET', 'SHARD', 'SHARDS',
  'SHOW', 'SLIMIT', 'SOFFSET', 'STATS', 'SUBSCRIPTION', 'SUBSCRIPTIONS', 'TAG', 'TO', 'USER', 'USERS', 'VALUES', 'WHERE', 'WITH',
  'WRITE', 'TRUE', 'FALSE',
]);

/** Nanoseconds per duration unit. */
export const DURATION_UNITS: Record<string, number> = {
  ns: 1, u: 1e3, 'µ': 1e3, us: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9, d: 86400e9, w: 604800e9,
};

const isDigit = (ch: string) => ch >= '0' && ch <= '9';
const isIdentStart = (ch: string) => (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch === '_';
const isIdentChar = (ch: string) => isIdentStart(ch) || isDigit(ch);

export class Lexer {
  private pos = 0;
  private peeked: Token | undefined;

  constructor(readonly src: string) {}

  /** Line and column (1-based) of a position, for error messages. */
  where(pos: number): string {
    let line = 1;
    let col = 1;
    for (let i = 0; i < pos && i < this.src.length; i++) {
      if (this.src[i] === '\n') { line++; col = 1; } else col++;
    }
    return `line ${line}, char ${col}`;
  }

  peek(): Token {
    this.peeked ??= this.scan();
    return this.peeked;
  }

  next(): Token {
    const t = this.peek();
    this.peeked = undefined;
    return t;
  }

  /** A regex literal at the next token (which must start with `/`), or undefined. */
  regex(): Token | undefined {
    const t = this.peek();
    if (t.kind !== 'OP' || t.value !== '/') return undefined;
    this.peeked = undefined;
    let i = t.pos + 1;
    let body = '';
    for (;;) {
      if (i >= this.src.length) throw new ParseError(`found ${this.src.slice(t.pos)}, expected regular expression at ${this.where(t.pos)}`);
      const ch = this.src[i];
      if (ch === '\\' && this.src[i + 1] === '/') { body += '/'; i += 2; continue; }
      if (ch === '\\') { body += ch + (this.src[i + 1] ?? ''); i += 2; continue; }
      if (ch === '/') { i++; break; }
      body += ch;
      i++;
    }
    this.pos = i;
    return { kind: 'REGEX', value: body, pos: t.pos, text: this.src.slice(t.pos, i) };
  }

  private skipSpaceAndComments(): void {
    const s = this.src;
    for (;;) {
      while (this.pos < s.length && /\s/.test(s[this.pos])) this.pos++;
      if (s.startsWith('--', this.pos)) {
        while (this.pos < s.length && s[this.pos] !== '\n') this.pos++;
        continue;
      }
      if (s.startsWith('/*', this.pos)) {
        const end = s.indexOf('*/', this.pos + 2);
        this.pos = end < 0 ? s.length : end + 2;
        continue;
      }
      return;
    }
  }

  private scan(): Token {
    this.skipSpaceAndComments();
    const s = this.src;
    const start = this.pos;
    const tok = (kind: TokenKind, value: string, extra: Partial<Token> = {}): Token => ({ kind, value, pos: start, text: s.slice(start, this.pos), ...extra });
    if (start >= s.length) return { kind: 'EOF', value: '', pos: start, text: 'EOF' };
    const ch = s[start];
    if (ch === '"' || ch === "'") {
      const value = this.quoted(ch);
      return ch === '"' ? tok('IDENT', value, { quoted: true }) : tok('STRING', value);
    }
    if (isIdentStart(ch)) {
      while (this.pos < s.length && isIdentChar(s[this.pos])) this.pos++;
      const word = s.slice(start, this.pos);
      const upper = word.toUpperCase();
      return KEYWORDS.has(upper) ? tok('KEYWORD', upper) : tok('IDENT', word);
    }
    if (ch === '$') {
      this.pos++;
      if (s[this.pos] === '"') return tok('PARAM', this.quoted('"'));
      while (this.pos < s.length && isIdentChar(s[this.pos])) this.pos++;
      if (this.pos === start + 1) throw new ParseError(`found $, expected identifier at ${this.where(start)}`);
      return tok('PARAM', s.slice(start + 1, this.pos));
    }
    if (isDigit(ch) || (ch === '.' && isDigit(s[start + 1] ?? ''))) return this.number();
    this.pos++;
    const two = s.slice(start, start + 2);
    switch (ch) {
      case '(': return tok('LPAREN', '(');
      case ')': return tok('RPAREN', ')');
      case ',': return tok('COMMA', ',');
      case ';': return tok('SEMI', ';');
      case '.': return tok('DOT', '.');
      case ':':
        if (two === '::') { this.pos++; return tok('DCOLON', '::'); }
        break;
      case '=':
        if (two === '=~') { this.pos++; return tok('OP', '=~'); }
        return tok('OP', '=');
      case '!':
        if (two === '!=' || two === '!~') { this.pos++; return tok('OP', two); }
        break;
      case '<':
        if (two === '<=' || two === '<>') { this.pos++; return tok('OP', two === '<>' ? '!=' : '<='); }
        return tok('OP', '<');
      case '>':
        if (two === '>=') { this.pos++; return tok('OP', '>='); }
        return tok('OP', '>');
      case '+': case '-': case '*': case '/': case '%': case '&': case '|': case '^':
        return tok('OP', ch);
      default:
        break;
    }
    throw new ParseError(`found ${ch}, expected a token at ${this.where(start)}`);
  }

  /** A quoted string or identifier; `\` escapes the quote, `\\` and `\n`. */
  private quoted(q: string): string {
    const s = this.src;
    const start = this.pos;
    this.pos++;
    let out = '';
    for (;;) {
      if (this.pos >= s.length || s[this.pos] === '\n') throw new ParseError(`found ${s.slice(start, this.pos)}, expected ${q === '"' ? 'identifier' : 'string'} (unterminated quote) at ${this.where(start)}`);
      const ch = s[this.pos];
      if (ch === '\\') {
        const nx = s[this.pos + 1];
        if (nx === q || nx === '\\') out += nx;
        else if (nx === 'n') out += '\n';
        else throw new ParseError(`bad escape \\${nx ?? ''} at ${this.where(this.pos)}`);
        this.pos += 2;
        continue;
      }
      this.pos++;
      if (ch === q) return out;
      out += ch;
    }
  }

  /** INTEGER, NUMBER, or DURATION (digits followed by a unit: 10s, 1h, 100ms, 3d). */
  private number(): Token {
    const s = this.src;
    const start = this.pos;
    while (this.pos < s.length && isDigit(s[this.pos])) this.pos++;
    let isFloat = false;
    if (s[this.pos] === '.' && isDigit(s[this.pos + 1] ?? '')) {
      isFloat = true;
      this.pos++;
      while (this.pos < s.length && isDigit(s[this.pos])) this.pos++;
    }
    if (!isFloat) {
      // a duration unit right after the digits
      for (const unit of ['ns', 'us', 'µs', 'ms', 'u', 'µ', 's', 'm', 'h', 'd', 'w']) {
        if (s.startsWith(unit, this.pos) && !isIdentChar(s[this.pos + unit.length] ?? '')) {
          const digits = s.slice(start, this.pos);
          this.pos += unit.length;
          return { kind: 'DURATION', value: String(Number(digits) * DURATION_UNITS[unit === 'µs' ? 'us' : unit]), pos: start, text: s.slice(start, this.pos) };
        }
      }
    }
    const text = s.slice(start, this.pos);
    return { kind: isFloat ? 'NUMBER' : 'INTEGER', value: text, pos: start, text };
  }
}
