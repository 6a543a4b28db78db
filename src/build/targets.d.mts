// Types of targets.mjs for the TypeScript that imports it (the tests).
export const TARGETS: Record<'linux-x64' | 'linux-arm64', { deb: string; triplet?: string; qemu?: string; packages?: string[] }>;
export const CACHE: string;
export const TOOLS_CACHE: string;
export function emulator(name: 'linux-x64' | 'linux-arm64'): string[];
export function requireTools(name: 'linux-x64' | 'linux-arm64'): void;
