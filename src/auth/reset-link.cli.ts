// `gridkeeper user reset-link <email>`: prints a password reset link (valid 60 minutes, usable once) for an operator to
// hand over — the way to reset a password on an appliance that sends no mail. Earlier links of the user stop working.
import * as v from 'valibot';
import { ConfigError, EMAIL, publicUrlOf } from '../lib/config.ts';
import type { Command } from '../lib/command.ts';
import { withMigratedDatabase } from '../db/configured.ts';
import { findUserByEmail } from './users.store.ts';
import { issueResetToken, resetLink } from './password-reset.ts';

const Email = v.pipe(v.string(), v.trim(), v.toLowerCase(), v.maxLength(256), v.regex(EMAIL));

export const resetLinkCommand: Command = {
  words: ['user', 'reset-link'],
  usage: 'user reset-link <email>',
  async run(config, args, io) {
    const email = v.safeParse(Email, args[0]);
    if (args.length !== 1 || !email.success) throw new ConfigError('user reset-link: expected one e-mail address');
    const token = await withMigratedDatabase(config, async (db) => {
      const user = await findUserByEmail(db, email.output);
      if (!user) throw new ConfigError(`user reset-link: no user ${email.output}`);
      return issueResetToken(db, user.id, Date.now());
    });
    io.out(resetLink(publicUrlOf(config), token));
    return 0;
  },
};
