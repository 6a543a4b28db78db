// The shape of a CLI command. Apart from cli.ts (which imports every *.cli.ts) so that command files import nothing
// that imports them back.
import type { Config } from './config.ts';

export interface CommandIo {
  out(line: string): void;
  err(line: string): void;
}

export interface Command {
  /** words that select it, e.g. ['user', 'add'] */
  words: string[];
  usage: string;
  run(config: Config, args: string[], io: CommandIo): Promise<number>;
}
