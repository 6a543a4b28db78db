// The console's assets in memory: each file as bytes and gzipped once, and the one HTML page that loads them.
import { gzipSync } from 'node:zlib';

export interface ConsoleFile {
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

export interface ConsoleAssets {
  files: Map<string, ConsoleFile>;
  page: string;
}

/**
 * The strict policy of every console response: scripts, styles and connections only from this origin, no inline
 * script, no plugin, no framing. Images may be data: URLs (none are used today; SVG is drawn as elements).
 */
export const CONSOLE_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "font-src 'self'", "manifest-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

let loaded: Promise<ConsoleAssets> | undefined;

/** Loaded on the first console request: processes that never serve the console (CLI commands, most tests) skip it. */
export function consoleAssets(): Promise<ConsoleAssets> {
  loaded ??= import('gridkeeper:console-assets').then(({ default: built }) => {
    const files = new Map<string, ConsoleFile>();
    for (const f of built.files) {
      const body = Buffer.from(f.text, 'utf8');
      files.set(f.name, { type: f.type, body, gzip: gzipSync(body, { level: 9 }), etag: `"${f.name}"` });
    }
    return { files, page: renderPage(built.js, built.css) };
  });
  return loaded;
}

function renderPage(js: string, css: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>gridkeeper console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/${css}">
<script type="module" src="/console/assets/${js}"></script>
</head>
<body>
<div id="app"><noscript>The gridkeeper console needs JavaScript. The API reference is at <a href="/docs">/docs</a>.</noscript></div>
</body>
</html>
`;
}
