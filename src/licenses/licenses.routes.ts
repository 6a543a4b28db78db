// Licenses and controllers (docs/api.md#licenses): create (root members), activate, claim, list a controller's licenses.
// License keys are secrets: none of this code logs them, and the request log line carries the path only (keys travel
// in bodies, never in paths).
import type { RouteContext } from '../context/route-context.ts';
import { ApiError } from '../http/errors.ts';
import { isRootMember } from '../access/root.ts';
import {
  ActivateBody, ActivateResponse, ClaimBody, ClaimResponse, ControllerParams, CreateLicenseBody, LicenseListResponse,
  LicenseQueryBody, LicensesResponse, licenseCreated, toLicense,
} from './licenses.schemas.ts';
import { activateLicense, claimLicense, controllerLicenses, createLicenses } from './licenses.service.ts';
import { linkedDeviceId, listLicenses } from './licenses.store.ts';
import { recordAudit } from '../audit/record.ts';



export function registerLicenseRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  api.route({
    method: 'post', path: '/v1/license', tag: 'licenses', summary: 'Create licenses',
    description: 'Members of the root role only. Generates `count` licenses with unguessable keys '
      + '(GK-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX, 125 random bits), or one license with the given `key` (409 when taken).',
    auth: auth.requireActor, body: CreateLicenseBody,
    responses: { 200: { description: 'the created licenses', schema: LicensesResponse } },
  }, async (c, { body }) => {
    if (!await isRootMember(db, c.var.actor.userId)) throw new ApiError('FORBIDDEN', 'creating licenses needs membership of the root role');
    const created = await db.write(async (tx) => {
      const rows = await createLicenses(tx, body, deps.now());
      // one entry per license (each is a target of its own)
      if (rows) await recordAudit(tx, c, deps, rows.map(licenseCreated));
      return rows;
    });
    if (!created) throw new ApiError('CONFLICT', 'a license with this key already exists');
    return c.json({ licenses: created.map(toLicense) });
  });

  api.route({
    method: 'post', path: '/v1/license/query', tag: 'licenses', summary: 'List every license (ours)',
    description: 'Members of the root role only (the licenses are theirs to hand out). Newest first; filter.claimed and '
      + 'filter.activated narrow the list; limit (1..1000, default 100) and offset page it. Answers { licenses, total } '
      + '(total: the licenses that match the filter).',
    auth: auth.requireActor, body: LicenseQueryBody,
    responses: { 200: { description: 'a page of licenses', schema: LicenseListResponse } },
  }, async (c, { body }) => {
    if (!await isRootMember(db, c.var.actor.userId)) throw new ApiError('FORBIDDEN', 'listing licenses needs membership of the root role');
    const { rows, total } = await listLicenses(db, body?.filter ?? {}, { limit: body?.limit ?? 100, offset: body?.offset ?? 0 });
    return c.json({ licenses: rows.map(toLicense), total });
  });

  api.route({
    method: 'post', path: '/v1/license/activate', tag: 'licenses', summary: 'Activate a license',
    description: 'Starts the license now, or at `activationIso` (any UTC offset; answered in Z). Any authenticated user may '
      + 'activate a license that is not linked to a controller; a linked one needs read access to the controller.',
    auth: auth.requireActor, body: ActivateBody,
    responses: { 200: { description: 'the activated license', schema: ActivateResponse } },
  }, async (c, { body }) => {
    // Rights depend on the license's link, so they are checked inside the service's transaction.
    const license = await db.write(async (tx) => {
      const row = await activateLicense(tx, c.var.actor.userId, body.key, body.activationIso ?? deps.now());
      const { activationDate, deactivationDate } = toLicense(row);
      await recordAudit(tx, c, deps, {
        action: 'license.activate', target: { kind: 'license', id: row.id },
        changes: { activationDate: { before: null, after: activationDate }, deactivationDate: { before: null, after: deactivationDate } },
      });
      return row;
    });
    return c.json({ success: true, license: toLicense(license) });
  });

  api.route({
    method: 'post', path: '/v1/license/claim', tag: 'licenses', summary: 'Link a license to a controller',
    description: 'Needs monitorManagement on the controller (a device with nodeType smartgridController): 403 when it is '
      + 'readable without that right, 404 when it is invisible or missing.',
    auth: auth.requireActor, body: ClaimBody,
    responses: { 200: { description: 'the license and the controller it is linked to', schema: ClaimResponse } },
  }, async (c, { body }) => {
    // Rights on the controller are checked inside the service's transaction, before the key is looked at.
    const license = await db.write(async (tx) => {
      const claimed = await claimLicense(tx, c.var.actor.userId, body.licenseKey, body.nodeId, deps.now());
      // the controller by device id: its nodeId is a property some readers of the entry may not be allowed to read
      const controllerId = await linkedDeviceId(tx, claimed.id);
      await recordAudit(tx, c, deps, { action: 'license.claim', target: { kind: 'license', id: claimed.id }, changes: { controllerId: { before: null, after: controllerId } } });
      return claimed;
    });
    return c.json({ success: true, license });
  });

  api.route({
    method: 'get', path: '/v1/license/controller/:nodeId', tag: 'licenses', summary: 'Licenses of a controller',
    description: 'The licenses linked to the controller; 404 unless the caller can read it.',
    auth: auth.requireActor, params: ControllerParams,
    responses: { 200: { description: 'the licenses, in the order they were claimed', schema: LicensesResponse } },
  }, async (c, { params }) => {
    // Read access to the controller is checked by the service (404 when invisible).
    return c.json({ licenses: (await controllerLicenses(db, c.var.actor.userId, params.nodeId)).map(toLicense) });
  });
}
