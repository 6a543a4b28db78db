// Request and response schemas of roles, manages and member relations (docs/api.md#roles, #manages, #members): the same objects validate
// requests and feed /openapi.json.
import * as v from 'valibot';
import { EMAIL } from '../lib/config.ts';
import { RIGHTS, type Right } from '../access/rights.ts';
import { qBool, qInt, qIntList, qString, qStringList, idList, idListOrStar, pathInt, UUID_PATTERN } from '../http/validate.ts';

const MAX_LIST = 1000;
const MAX_SECRET = 256;
/** the same minimum as user passwords (docs/api.md#passwords) */
export const MIN_ROLE_PASSWORD_LENGTH = 10;

const bool = v.boolean('expected true or false');

/** all six flags required */
export const Flags6 = v.strictObject(
  Object.fromEntries(RIGHTS.map((r) => [r, bool])) as Record<Right, typeof bool>,
);
/** any subset of the six flags */
export const PartialFlags6 = v.strictObject(
  Object.fromEntries(RIGHTS.map((r) => [r, v.optional(bool)])) as Record<Right, v.OptionalSchema<typeof bool, undefined>>,
);

const RoleName = v.pipe(
  v.string('expected a string'),
  v.minLength(1, 'expected 1 to 100 characters'),
  v.maxLength(100, 'expected 1 to 100 characters'),
  // `god` is reserved on the Eniris platform; refused in any letter case so no look-alike exists either
  v.check((name) => name.toLowerCase() !== 'god', 'the name "god" is reserved'),
);

const Secret = v.pipe(
  v.string('expected a string'),
  v.minLength(MIN_ROLE_PASSWORD_LENGTH, `expected at least ${MIN_ROLE_PASSWORD_LENGTH} characters`),
  v.maxLength(MAX_SECRET, `expected at most ${MAX_SECRET} characters`),
);

/** RoleInput: `password` absent = unchanged (on create: none), null = cleared, string = set (stored scrypt-hashed). */
/** `isCompany` (ours): absent = unchanged (on create: false). */
export const RoleInput = v.strictObject({
  name: RoleName,
  selfRights: Flags6,
  password: v.optional(v.nullable(Secret)),
  isCompany: v.optional(v.boolean('expected true or false')),
});

export const CreateRoleBody = v.strictObject({ manages: Flags6, role: RoleInput });
export const CreateRoleQuery = v.strictObject({ parentRoleId: qInt });

const jsonId = v.pipe(
  v.number('expected an integer >= 0'), v.safeInteger('expected an integer >= 0'), v.minValue(0, 'expected an integer >= 0'),
);
const idArray = v.pipe(v.array(jsonId, 'expected an array of integers'), v.maxLength(MAX_LIST, `expected at most ${MAX_LIST} items`));
const stringArray = v.pipe(
  v.array(v.pipe(v.string('expected a string'), v.maxLength(MAX_SECRET, `expected at most ${MAX_SECRET} characters`)), 'expected an array of strings'),
  v.maxLength(MAX_LIST, `expected at most ${MAX_LIST} items`),
);
/** accepted by the schema only to answer 400 NOT_SUPPORTED (there are no views on an appliance) */
const unsupported = v.optional(v.unknown());
/** one company id or a list of them (company ids are the ids of company roles) */
const companyIds = v.pipe(
  v.union([jsonId, idArray], 'expected an integer >= 0 or an array of them'),
  v.transform((x) => (Array.isArray(x) ? x : [x])),
);

export const RoleQueryBody = v.optional(v.strictObject({
  filter: v.optional(v.strictObject({
    id: v.optional(idArray),
    name: v.optional(stringArray),
    ancestorRoleId: v.optional(idArray),
    viewId: unsupported,
    companyId: v.optional(companyIds),
  })),
  userRights: v.optional(PartialFlags6),
}));

/** GET /v1/role (deprecated): the body's filters as query parameters; `userRights.<flag>=true`. */
export const RoleListQuery = v.strictObject({
  id: v.optional(qIntList),
  name: v.optional(qStringList),
  ancestorRoleId: v.optional(qIntList),
  viewId: v.optional(qString),
  companyId: v.optional(qIntList),
  ...Object.fromEntries(RIGHTS.map((r) => [`userRights.${r}`, v.optional(qBool)])) as Record<`userRights.${Right}`, v.OptionalSchema<typeof qBool, undefined>>,
});

export const RoleIdParams = v.strictObject({ roleId: pathInt });
export const RoleIdsParams = v.strictObject({ roleId: idListOrStar });
export const ManagesIdParams = v.strictObject({ parentRoleId: pathInt, managesId: idList });
export const ManagesParentParams = v.strictObject({ parentRoleId: pathInt });
export const ManagesParentsParams = v.strictObject({ parentRoleId: idListOrStar });
export const MemberIdParams = v.strictObject({ roleId: pathInt, memberId: idList });

export const ManagesUpsertQuery = v.strictObject({
  childRoleId: qInt,
  childRolePassword: v.optional(v.pipe(qString, v.minLength(1, 'expected a non-empty string'), v.maxLength(MAX_SECRET, `expected at most ${MAX_SECRET} characters`))),
});

export const ManagesQueryBody = v.optional(v.strictObject({
  filter: v.optional(v.strictObject({
    id: v.optional(idArray),
    parentRoleId: v.optional(idArray),
    childRoleId: v.optional(idArray),
  })),
}));

export const ManagesListQuery = v.strictObject({
  id: v.optional(qIntList),
  childRoleId: v.optional(qIntList),
});

// The same loose pattern as configuration: addresses without a dot (admin@localhost) are normal on an appliance.
const Email = v.pipe(
  v.string('expected a string'),
  v.maxLength(MAX_SECRET, `expected at most ${MAX_SECRET} characters`),
  v.regex(EMAIL, 'expected an e-mail address'),
);

export const MemberUpsertQuery = v.strictObject({
  userEmail: v.pipe(qString, Email),
  password: v.optional(v.pipe(qString, Secret)),
});

/** PUT member bodies are exactly {} (Eniris sends an empty object). */
export const EmptyBody = v.strictObject({});

export const MemberQueryBody = v.optional(v.strictObject({
  filter: v.optional(v.strictObject({
    id: v.optional(idArray),
    roleId: v.optional(idArray),
    userEmail: v.optional(stringArray),
  })),
}));

export const MemberListQuery = v.strictObject({
  id: v.optional(qIntList),
  roleId: v.optional(qIntList),
  userEmail: v.optional(qStringList),
});

// ---- responses ----

const FlagsOut = v.object(Object.fromEntries(RIGHTS.map((r) => [r, v.boolean()])) as Record<Right, v.BooleanSchema<undefined>>);
const PartialFlagsOut = v.object(Object.fromEntries(RIGHTS.map((r) => [r, v.optional(v.boolean())])) as Record<Right, v.OptionalSchema<v.BooleanSchema<undefined>, undefined>>);

export const Role = v.object({
  id: v.number(), name: v.string(), selfRights: FlagsOut, userRights: PartialFlagsOut,
  isCompany: v.boolean(), uuid: v.optional(v.pipe(v.string(), v.uuid())),
});
export const Manages = v.object({ id: v.number(), parentRoleId: v.number(), childRoleId: v.number(), ...FlagsOut.entries });
export const Member = v.object({ id: v.number(), roleId: v.number(), userEmail: v.string() });

export const DeletionInfo = v.object({
  deletedNodeIds: v.array(v.number()),
  deletedRelationIds: v.array(v.number()),
  deleted: v.object({
    roles: v.array(v.number()),
    devices: v.array(v.number()),
    manages: v.array(v.number()),
    members: v.array(v.number()),
    monitors: v.array(v.number()),
  }),
});

export const CreateRoleResponse = v.object({ manages: Manages, role: Role });
export const RoleResponse = v.object({ role: Role });
export const RolesResponse = v.object({ role: v.array(Role) });
export const ManagesResponse = v.object({ manages: v.union([Manages, v.array(Manages)]) });
export const ManagesListResponse = v.object({ manages: v.array(Manages) });
export const MemberResponse = v.object({ member: v.union([Member, v.array(Member)]) });
export const MembersResponse = v.object({ member: v.array(Member) });
export const DeletionResponse = v.union([DeletionInfo, v.array(DeletionInfo)]);

export const ThrottledError = v.object({
  statusCode: v.literal(429), error: v.string(), message: v.string(), code: v.literal('TOO_MANY_PASSWORD_CHECKS'), retryAfter: v.number(),
});

// ---- companies ----

/** GET /v1/company: filters as query parameters (repeated or comma-separated); view filters answer 400 NOT_SUPPORTED. */
export const CompanyListQuery = v.strictObject({
  id: v.optional(qIntList),
  uuid: v.optional(v.pipe(
    qStringList,
    v.check((list) => list.every((s) => UUID_PATTERN.test(s)), 'expected uuids'),
    v.transform((list) => list.map((s) => s.toLowerCase())),
  )),
  roleId: v.optional(qIntList),
  viewId: v.optional(qString),
  viewInsightsVersion: v.optional(qString),
});

export const Company = v.object({ id: v.number(), uuid: v.pipe(v.string(), v.uuid()), name: v.string() });
export const CompaniesResponse = v.object({ company: v.array(Company) });
