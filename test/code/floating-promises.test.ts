// Every promise in src/ is awaited, returned, or handed on: the data layer is asynchronous, and a statement whose
// promise floats would run outside its transaction, or fail without anyone hearing of it. The TypeScript compiler's
// own type checker finds them: an expression statement whose type is a promise (or a promise in a condition).
// `void promise` states on purpose that nobody waits (a fire-and-forget with its own error handling).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import ts from 'typescript';

const root = new URL('../..', import.meta.url).pathname;

function isPromise(checker: ts.TypeChecker, type: ts.Type): boolean {
  if (type.isUnion()) return type.types.some((t) => isPromise(checker, t));
  const name = type.getSymbol()?.getName();
  return name === 'Promise' || (name !== undefined && /^Promise(Like)?$/.test(name));
}

test('no floating promise and no promise used as a condition in src/', () => {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
  const files = config.fileNames.filter((f) => f.includes('/src/') && !f.includes('/src/console/ui/'));
  const program = ts.createProgram(files, config.options);
  const checker = program.getTypeChecker();
  const found: string[] = [];
  const report = (node: ts.Node, what: string) => {
    const sf = node.getSourceFile();
    const { line } = sf.getLineAndCharacterOfPosition(node.getStart());
    found.push(`${sf.fileName.slice(root.length)}:${line + 1}: ${what}: ${node.getText().slice(0, 80)}`);
  };
  for (const sf of program.getSourceFiles()) {
    if (!files.includes(sf.fileName)) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isExpressionStatement(node)) {
        const e = node.expression;
        const assigned = ts.isBinaryExpression(e) && e.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && e.operatorToken.kind <= ts.SyntaxKind.LastAssignment;
        if (!assigned && !ts.isVoidExpression(e) && !ts.isAwaitExpression(e) && isPromise(checker, checker.getTypeAtLocation(e))) report(node, 'floating promise');
      }
      if ((ts.isIfStatement(node) || ts.isWhileStatement(node) || ts.isConditionalExpression(node)) && isPromise(checker, checker.getTypeAtLocation(ts.isConditionalExpression(node) ? node.condition : node.expression))) {
        report(node, 'promise as a condition');
      }
      if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken && isPromise(checker, checker.getTypeAtLocation(node.operand))) {
        report(node, 'negated promise');
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  assert.ok(files.length > 100, `expected the source files, found ${files.length}`);
  assert.deepEqual(found, []);
});
