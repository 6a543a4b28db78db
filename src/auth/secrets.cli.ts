// `gridkeeper secrets rotate`: seal every TOTP secret under a new key (see secret-box.ts).
// - Key file: a new key is written first in the file (the old ones still open), every secret is re-sealed under it in
//   one transaction, then the file is rewritten with the new key alone. A crash at any step leaves every secret
//   openable. A running server reads the file again when it meets the new key, and before it seals anything.
// - GRIDKEEPER_SECRET_KEY: the operator puts the new key first (`new,old`), runs this, then drops the old key.
import { ConfigError } from '../lib/config.ts';
import { parseFlags, type Command } from '../lib/command.ts';
import { withMigratedDatabase } from '../db/configured.ts';
import { createSecretBox, keySourceOf, KEY_FILE, newSecretKey, readKeys, SealError, writeKeyFile } from '../lib/secret-box.ts';
import { resealTotpSecrets } from './two-factor.store.ts';
import { checkSealingKey } from './sealing-check.ts';

const USAGE = 'secrets rotate';

export const rotateSecretsCommand: Command = {
  words: ['secrets', 'rotate'],
  usage: USAGE,
  async run(config, args, io) {
    parseFlags('secrets rotate', USAGE, args, []);
    return withMigratedDatabase(config, async (db) => {
      let report: string;
      let result: Awaited<ReturnType<typeof resealTotpSecrets>>;
      try {
        if (config.secretKey !== undefined) {
          const source = keySourceOf(config, { create: false });
          if (readKeys(source).length < 2) {
            throw new ConfigError('secrets rotate: GRIDKEEPER_SECRET_KEY holds one key; set it to "<new key>,<old key>" '
              + '(a new key: openssl rand -base64 32), run this again, then keep the new key alone');
          }
          const box = createSecretBox(source);
          result = await resealTotpSecrets(db, box);
          await checkSealingKey(db, box);
          report = `key ${box.currentKeyId}: ${result.resealed} secret(s) sealed under it; GRIDKEEPER_SECRET_KEY may now hold it alone`;
        } else {
          const source = keySourceOf(config, { create: true });
          const fresh = newSecretKey();
          writeKeyFile(config.dataDir, [fresh, ...readKeys(source)]);
          const box = createSecretBox(source);
          result = await resealTotpSecrets(db, box);
          await checkSealingKey(db, box);
          writeKeyFile(config.dataDir, [fresh]);
          report = `new key ${fresh.id}: ${result.resealed} secret(s) sealed under it; ${config.dataDir}/${KEY_FILE} holds it alone (back it up)`;
        }
      } catch (err) {
        if (err instanceof SealError) throw new ConfigError(`secrets rotate: ${err.message}`);
        throw err;
      }
      io.out(report);
      if (result.unreadable.length > 0) {
        io.err(`secrets rotate: no key opens the TOTP secret of user(s) ${result.unreadable.join(', ')}: their 2FA must be reset`);
      }
      return 0;
    });
  },
};
