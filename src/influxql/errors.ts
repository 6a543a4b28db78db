// An error of one InfluxQL statement: answered as that statement's `{ statement_id, error }`; the other statements
// of the query still run.
export class StatementError extends Error {}
