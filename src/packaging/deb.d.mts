// Types of deb.mjs for the TypeScript that imports it (the tests).
export function libraryDepends(files: string[]): string;
export function buildDeb(opts: {
  exe: string; addon: string; arch: string; version: string; outDir: string; compression?: 'xz' | 'gzip'; level?: number; date?: Date;
}): string;
