// `gridkeeper user add <email> [--password P] [--role ID]`: with roles/, because it may make the new user a member.
import * as v from 'valibot';
import { ConfigError, EMAIL } from '../lib/config.ts';
import { parseFlags, type Command } from '../lib/command.ts';
import { withMigratedDatabase } from '../db/configured.ts';
import { generatePassword, hashSecret } from '../auth/passwords.ts';
import { insertUser } from '../auth/users.store.ts';
import { roleExists } from './roles.store.ts';
import { upsertMember } from './members.store.ts';
import { plainAuditLog, recordCommandAudit } from '../audit/record.ts';
import { withEvents } from '../events/outbox.ts';

const Email = v.pipe(v.string(), v.trim(), v.toLowerCase(), v.maxLength(256), v.regex(EMAIL));

export const addUserCommand: Command = {
  words: ['user', 'add'],
  usage: 'user add <email> [--password P] [--role ID]',
  async run(config, args, io) {
    const { values, positionals } = parseFlags('user add', this.usage, args, ['password', 'role'], 1);
    const password = values.password;
    const roleId = values.role === undefined ? undefined : Number(values.role);
    const email = v.safeParse(Email, positionals[0]);
    if (positionals.length !== 1 || !email.success) throw new ConfigError('user add: expected one e-mail address');
    if (password !== undefined && password.length < 10) throw new ConfigError('user add: --password needs at least 10 characters');
    if (roleId !== undefined && !(Number.isSafeInteger(roleId) && roleId >= 0)) throw new ConfigError('user add: --role expects a role id');
    return withMigratedDatabase(config, async (db) => {
      const clear = password ?? generatePassword();
      const hash = await hashSecret(clear);
      const now = Date.now();
      const result = await db.tx(async (tx) => {
        if (roleId !== undefined && !(await roleExists(tx, roleId))) return 'no-role' as const;
        const userId = await insertUser(tx, email.output, hash, now);
        if (userId === undefined) return 'exists' as const;
        const memberId = roleId === undefined ? undefined
          : (await upsertMember(tx, roleId, userId)).id;
        await recordCommandAudit(tx, now, [
          { action: 'user.create', target: { kind: 'user', id: userId }, changes: { email: { after: email.output } } },
          ...(roleId !== undefined && memberId !== undefined ? [{
            action: 'member.put' as const, target: { kind: 'member' as const, id: memberId }, roleId, userId,
            changes: { roleId: { after: roleId }, userEmail: { after: email.output }, userCreated: true },
          }] : []),
        ], withEvents(plainAuditLog));
        return userId;
      });
      if (result === 'exists') throw new ConfigError(`user add: ${email.output} already exists`);
      if (result === 'no-role') throw new ConfigError(`user add: role ${roleId} does not exist`);
      io.out(`created user ${result} ${email.output}${roleId !== undefined ? ` in role ${roleId}` : ''}`);
      if (!password) io.err(`password for ${email.output}: ${clear} (shown once)`);
      return 0;
    });
  },
};
