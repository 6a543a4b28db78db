// Nodes of one installation must hold the same sealing keys: a TOTP secret sealed on node A is opened on node B. A
// node whose key differs would seal values the others cannot open, and fail to open theirs: 2FA would depend on which
// node a request reached. So the database holds one sealed check value (settings `sealing_check`), written by the first
// node; every node opens it at start and refuses to start when it cannot (a ConfigError: exit code 2 naming the
// setting). `gridkeeper secrets rotate` seals it again under the new key, as it does the TOTP secrets.
// PostgreSQL only: an embedded SQLite database has one process and keeps its key file beside it.
import { randomBytes } from 'node:crypto';
import { ConfigError } from '../lib/config.ts';
import type { Db } from '../db/open.ts';
import { SealError, sealedKeyId, type SecretBox } from '../lib/secret-box.ts';
import { insertSettingIfAbsent, readSetting, replaceSetting } from './settings.store.ts';

const SETTING = 'sealing_check';
const PLACE = 'settings:sealing_check';

const mismatch = (keyId: string | undefined) => new ConfigError(
  `GRIDKEEPER_SECRET_KEY / <data dir>/secret.key: this node's sealing key does not open the secrets of the installation in `
  + `this database (sealed under key ${keyId ?? '?'} by another node): give every node the same GRIDKEEPER_SECRET_KEY`);

/**
 * Checks that `box` opens the installation's check value, writing it when there is none yet (the first node); a value
 * sealed under an older key that `box` still holds (during `secrets rotate`) is sealed again under the current key.
 */
export async function checkSealingKey(db: Db, box: SecretBox): Promise<void> {
  if (db.backend !== 'postgres') return;
  let value = await readSetting(db, SETTING);
  if (value === undefined) {
    // several nodes starting at once: one insert wins, every node checks what was stored
    await insertSettingIfAbsent(db, SETTING, box.seal(randomBytes(16).toString('base64url'), PLACE));
    value = (await readSetting(db, SETTING))!;
  }
  try {
    box.open(value, PLACE);
  } catch (err) {
    if (err instanceof SealError) throw mismatch(sealedKeyId(value));
    throw err;
  }
  if (sealedKeyId(value) !== box.currentKeyId) {
    await replaceSetting(db, SETTING, value, box.seal(box.open(value, PLACE), PLACE));
  }
}
