// GET|POST /query: filled in with the InfluxQL engine.
import type { RouteContext } from '../http/route-context.ts';

export function registerInfluxQueryRoutes(_ctx: RouteContext): void {}
