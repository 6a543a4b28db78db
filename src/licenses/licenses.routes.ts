// Routes of this domain (filled in by its issue).
import type { RouteContext } from '../app.ts';

export function registerLicenseRoutes(_ctx: RouteContext): void {}
