// Compressed column blocks of telemetry: pure codecs, the block container and per-field statistics. No
// I/O; storage, sealing and reads build on these.
export { BlockFormatError } from './errors.ts';
export type { Column } from './column.ts';
export { BLOCK_VERSION, MAX_BLOCK_ROWS, blockRowCount, decodeBlock, encodeBlock, withColumns, type BlockData } from './block.ts';
export { columnStats, decodeStats, encodeStats, type FieldStats } from './stats.ts';
export { columnCells, columnFromValues, valuesOfColumn, type ColumnCells, type RowValue } from './values.ts';
