// The house's two rules, held by reading the source (docs/architecture.md states them):
// - every import between rooms of src/ points down the floors written in docs/architecture.md (the arrows named
//   there as known exceptions aside), and no file imports itself through a circle;
// - SQL is written only in the places the SQL rule names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = new URL('../..', import.meta.url).pathname;
const src = join(root, 'src');
const CODE = /\.(ts|tsx|mts|mjs)$/;

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (CODE.test(name) && !/\.d\.m?ts$/.test(name)) out.push(p);
  }
  return out;
}

const files = sourceFiles(src);
const parsed = new Map(files.map((f) => [f, ts.createSourceFile(f, readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, true)]));
const rel = (f: string) => relative(root, f);

/** The files of src/ that `file` imports (static, re-exports, dynamic with a literal), type-only imports included. */
function importsOf(file: string): string[] {
  const out: string[] = [];
  const add = (spec: string) => {
    if (!spec.startsWith('.')) return;
    const target = resolve(dirname(file), spec);
    if (target.startsWith(src + '/') && CODE.test(target) && existsSync(target)) out.push(target);
  };
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier.text);
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) add(node.arguments[0].text);
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) add(node.argument.literal.text);
    ts.forEachChild(node, visit);
  };
  visit(parsed.get(file)!);
  return out;
}

const imports = new Map(files.map((f) => [f, importsOf(f)]));

/** A file's room: its first folder under src/, or its own name at the root of src/. */
const roomOf = (f: string) => relative(src, f).split('/')[0]!;

/** The floors and the known upward arrows, as docs/architecture.md writes them. */
function readHouse(): { floors: Map<string, number>; exceptions: Set<string> } {
  const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const floors = new Map<string, number>();
  for (const m of doc.matchAll(/^floor\s+(\d+)\s+(.+)$/gm)) {
    for (const room of m[2]!.trim().split(/\s+/)) floors.set(room.replace(/\/$/, ''), Number(m[1]));
  }
  const exceptions = new Set([...doc.matchAll(/^up\s+(src\/\S+)\s+->\s+(\S+?)\/?\s*(?:\(|$)/gm)].map((m) => `${m[1]} -> ${m[2]}`));
  return { floors, exceptions };
}

test('docs/architecture.md gives every room of src/ a floor', () => {
  const { floors } = readHouse();
  const rooms = [...new Set(files.map(roomOf))].sort();
  assert.deepEqual(rooms.filter((r) => !floors.has(r)), []);
  assert.deepEqual([...floors.keys()].filter((r) => !rooms.includes(r)), [], 'a floor names a room that does not exist');
});

test('every import between rooms points down a floor (the named exceptions aside)', () => {
  const { floors, exceptions } = readHouse();
  const wrong: string[] = [];
  const used = new Set<string>();
  for (const [file, targets] of imports) {
    const from = roomOf(file);
    for (const target of targets) {
      const to = roomOf(target);
      if (from === to) continue;
      if (floors.get(to)! < floors.get(from)!) continue;
      const key = `${rel(file)} -> ${to}`;
      if (exceptions.has(key)) { used.add(key); continue; }
      wrong.push(`${rel(file)} (${from}, floor ${floors.get(from)}) imports ${rel(target)} (${to}, floor ${floors.get(to)})`);
    }
  }
  assert.deepEqual(wrong, []);
  // an exception that no longer happens is struck from the list
  assert.deepEqual([...exceptions].filter((e) => !used.has(e)), [], 'docs/architecture.md names an upward arrow that is gone');
  assert.ok(exceptions.size <= 5, 'at most five known upward arrows');
});

test('no import circle between the files of src/', () => {
  // Tarjan's strongly connected components: a component of more than one file (or a file importing itself) is a circle
  let index = 0;
  const stack: string[] = [];
  const on = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const circles: string[][] = [];
  const connect = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of imports.get(v) ?? []) {
      if (!idx.has(w)) { connect(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const part: string[] = [];
      let w: string;
      do { w = stack.pop()!; on.delete(w); part.push(rel(w)); } while (w !== v);
      if (part.length > 1 || (imports.get(v) ?? []).includes(v)) circles.push(part.sort());
    }
  };
  for (const f of files) if (!idx.has(f)) connect(f);
  assert.deepEqual(circles, []);
});

// The SQL rule (docs/architecture.md#sql): SQL is written in a room's *.store.ts, in access/ (the rights engine's
// recursive CTEs), in db/ (the seam: connections, transactions, migrations, the copy between backends) and in the
// telemetry engine's backends (telemetry/sqlite/, telemetry/pg/).
const SQL_PLACES = [/\.store\.ts$/, /^src\/access\//, /^src\/db\//, /^src\/telemetry\/(sqlite|pg)\//];
// Files that hold SQL outside those places: none (a file named here fails the test once it holds none).
const SQL_EXCEPTIONS: string[] = [];

const BUILDER = new Set(['selectFrom', 'insertInto', 'updateTable', 'deleteFrom', 'replaceInto', 'mergeInto', 'selectNoFrom']);
const SQL_TEXT = /^\s*(SELECT\s[\s\S]*\bFROM\b|SELECT \d|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE (UNIQUE )?(TABLE|INDEX|VIEW|TRIGGER)|DROP (TABLE|INDEX)|ALTER TABLE|PRAGMA \w|VACUUM|WITH (RECURSIVE )?\w+ AS|BEGIN (IMMEDIATE|DEFERRED|ISOLATION)|SAVEPOINT \w)/;

/** Where `file` writes SQL: the query builder, `sql` templates, prepared statements, or SQL text in a string. */
function sqlIn(file: string): string[] {
  const sf = parsed.get(file)!;
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => found.push(`${rel(file)}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`);
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const name = node.expression.name.text;
      const on = node.expression.expression;
      if (BUILDER.has(name)) at(node, `query builder (${name})`);
      else if (name === 'prepare' && node.arguments.length > 0) at(node, 'prepared statement');
      else if (ts.isIdentifier(on) && ((on.text === 'sql' && name !== 'join') || (on.text === 'CompiledQuery' && name === 'raw'))) at(node, `${on.text}.${name}`);
    }
    if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && node.tag.text === 'sql') at(node, 'sql template');
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node)) && SQL_TEXT.test(node.text)) {
      if (!ts.isTaggedTemplateExpression(node.parent) && !ts.isTaggedTemplateExpression(node.parent?.parent)) at(node, 'SQL text');
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

test('SQL is written only where the SQL rule allows it', () => {
  const outside: string[] = [];
  const excepted = new Set<string>();
  for (const file of files) {
    const path = rel(file);
    if (path.startsWith('src/console/ui/') || SQL_PLACES.some((p) => p.test(path))) continue;
    const found = sqlIn(file);
    if (found.length === 0) continue;
    if (SQL_EXCEPTIONS.includes(path)) { excepted.add(path); continue; }
    outside.push(...found);
  }
  assert.deepEqual(outside, []);
  assert.deepEqual(SQL_EXCEPTIONS.filter((f) => !excepted.has(f)), [], 'an exception that holds no SQL any more is struck from the list');
});

test('the SQL finder sees each way of writing SQL', () => {
  const sample = join(src, 'sample.ts');
  parsed.set(sample, ts.createSourceFile(sample, [
    "db.qb.selectFrom('t').select('a');",
    'sql`SELECT 1`;',
    "conn.prepare('UPDATE t SET a = 1');",
    "const text = 'DELETE FROM t WHERE a = ?';",
    "const fine = 'SELECT a role to delete';",
  ].join('\n'), ts.ScriptTarget.Latest, true));
  try {
    assert.deepEqual(sqlIn(sample).map((s) => s.replace(/^[^:]+:/, '')), [
      '1: query builder (selectFrom)', '2: sql template', '3: prepared statement', '3: SQL text', '4: SQL text',
    ]);
  } finally {
    parsed.delete(sample);
  }
});
