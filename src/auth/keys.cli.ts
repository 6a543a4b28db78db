// `gridkeeper keys rotate`: a new token signing key (keys.ts). The previous keys are retired, not deleted: the tokens
// they signed keep verifying until they expire (refresh tokens: 14 days). Running nodes sign with the new key within
// KEY_CHECK_MS, or at once when they meet a token it signed.
import { parseFlags, type Command } from '../lib/command.ts';
import { withMigratedDatabase } from '../db/configured.ts';
import { KEY_CHECK_MS, rotateSigningKey } from './keys.ts';

const USAGE = 'keys rotate';

export const rotateKeysCommand: Command = {
  words: ['keys', 'rotate'],
  usage: USAGE,
  async run(config, args, io) {
    parseFlags('keys rotate', USAGE, args, []);
    const kid = await withMigratedDatabase(config, (db) => rotateSigningKey(db, Date.now()));
    io.out(`new signing key ${kid}: running nodes sign with it within ${KEY_CHECK_MS / 1000} s; `
      + 'tokens signed by the previous keys stay valid until they expire');
    return 0;
  },
};
