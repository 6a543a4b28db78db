// What every domain's register*Routes function receives. Apart from app.ts (which imports every route file) so that
// route files import nothing that imports them back.
import type { Api } from './route.ts';
import type { Authenticators } from './auth.ts';
import type { Deps } from '../deps.ts';

export interface RouteContext {
  api: Api;
  deps: Deps;
  auth: Authenticators;
}
