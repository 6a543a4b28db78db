// GET /assets/estimateCost.ts and /assets/estimateCost.py (docs/api.md#cost): the standalone cost scripts, served verbatim
// from the bundle (no files beside the executable), no token needed.
import type { RouteContext } from '../context/route-context.ts';
import tsScript from './estimateCost.ts?raw';
import pyScript from './estimateCost.py';

// text/plain so browsers show the script instead of guessing (there is no registered TypeScript type, and
// text/x-python is unregistered too); the filename tells `curl -OJ` and "save as" what to call it.
const ASSETS = [
  { name: 'estimateCost.ts', text: tsScript, summary: 'The request cost estimator for Node (TypeScript)' },
  { name: 'estimateCost.py', text: pyScript, summary: 'The request cost estimator for Python 3' },
];

export function registerAssetRoutes({ api }: RouteContext): void {
  for (const asset of ASSETS) {
    const headers = {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Disposition': `inline; filename="${asset.name}"`,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'public, max-age=3600',
    };
    api.route({
      method: 'get', path: `/assets/${asset.name}`, tag: 'telemetry', summary: asset.summary,
      description: 'Computes exactly the server\'s cost of a `POST /v1/telemetry/query` body (rules: docs/api.md#cost) before it is sent. '
        + 'Standalone and dependency-free; usage is documented at the top of the script.',
      responses: { 200: { description: 'the script', contentType: 'text/plain; charset=utf-8' } },
    }, (c) => c.body(asset.text, 200, headers));
  }
}
