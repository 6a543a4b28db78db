// The shape of a CLI command, and how commands read their flags. Apart from cli.ts (which imports every *.cli.ts) so
// that command files import nothing that imports them back.
import { parseArgs } from 'node:util';
import { ConfigError, type Config } from './config.ts';

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

export interface ParsedArgs<F extends string> {
  /** each given flag's value (`--flag value` or `--flag=value`) */
  values: Partial<Record<F, string>>;
  positionals: string[];
}

/**
 * Reads `--flag value` / `--flag=value` pairs with Node's util.parseArgs. Refuses, as a ConfigError naming the command:
 * an unknown flag, a flag without its value (also `--password --role 5`: a value never starts with `--` unless written
 * inline), a flag given twice, and more positional arguments than the command takes.
 */
export function parseFlags<F extends string>(command: string, usage: string, args: string[], flags: readonly F[], maxPositionals = 0): ParsedArgs<F> {
  const options = Object.fromEntries(flags.map((f) => [f, { type: 'string' as const }]));
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  const values: Partial<Record<F, string>> = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'option-terminator') continue;
    if (token.kind === 'positional') {
      if (positionals.length >= maxPositionals) throw new ConfigError(`${command}: unknown argument ${token.value} (usage: gridkeeper ${usage})`);
      positionals.push(token.value);
      continue;
    }
    const name = token.name as F;
    if (!flags.includes(name)) throw new ConfigError(`${command}: unknown argument ${token.rawName} (usage: gridkeeper ${usage})`);
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--'))) {
      throw new ConfigError(`${command}: ${token.rawName} needs a value`);
    }
    if (values[name] !== undefined) throw new ConfigError(`${command}: ${token.rawName} given twice`);
    values[name] = token.value;
  }
  return { values, positionals };
}
