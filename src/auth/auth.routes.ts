// The authentication API (docs/api.md#authentication) and user settings: each group lives in its own routes file.
import type { RouteContext } from '../context/route-context.ts';
import { registerLoginRoutes } from './login.routes.ts';
import { registerTwoFactorRoutes } from './two-factor.routes.ts';
import { registerPasswordRoutes } from './password.routes.ts';
import { registerUserRoutes } from './users.routes.ts';
import { registerPasswordResetRoutes } from './password-reset.routes.ts';
import { registerApiTokenRoutes } from './api-tokens.routes.ts';

export function registerAuthRoutes(ctx: RouteContext): void {
  registerLoginRoutes(ctx);
  registerTwoFactorRoutes(ctx);
  registerPasswordRoutes(ctx);
  registerUserRoutes(ctx);
  registerPasswordResetRoutes(ctx);
  registerApiTokenRoutes(ctx);
}
