// Types of release.mjs for the TypeScript that imports it (the tests).
export function targetExecutable(name: 'linux-x64' | 'linux-arm64', opts: { bundle: string; hostExe: string }): { exe: string; addon: string };
export function buildRelease(opts: { dist: string; version: string; say?: (msg: string) => void }): { file: string; bytes: number }[];
export function packageVersion(root: string): string;
