/** The age options of the commands that read snapshots and of `export`: docs/encrypted-snapshots.md. */
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { splitListValues } from '../list-values.js';
import {
  AGE_IDENTITY_ENV,
  type AgeEncryption,
  loadEncryption,
  loadSnapshotKeys,
  useSnapshotKeys,
} from '../snapshot/keys.js';
import { isEncryptedSnapshot, openSnapshotSource } from '../snapshot/source.js';
import type { ParsedArgs } from './command.js';
import type { CliContext } from './context.js';
import { listOption, readStringOption, stringOption } from './options.js';

/** `--identity` and `--passphrase-env`, for a command that reads snapshots. */
export function withSnapshotKeyOptions(yargs: Argv): Argv {
  return yargs.options({
    identity: listOption(
      `An age identity file (as age-keygen writes) that opens an encrypted snapshot; repeatable (default: the file $${AGE_IDENTITY_ENV} names)`,
    ),
    'passphrase-env': stringOption(
      'Open an encrypted snapshot with the passphrase in the environment variable VAR',
    ),
  });
}

/** The SNAPSHOT positional, with the options that open an encrypted one. */
export function withSnapshotArgument(yargs: Argv): Argv {
  return withSnapshotKeyOptions(yargs).positional('snapshot', {
    type: 'string',
    describe: 'A *.snapshot.jsonl file written by export',
  });
}

/** `--encrypt-to`, `--encrypt-to-file` and `--passphrase-env`, for `export`. */
export function withEncryptionOptions(yargs: Argv): Argv {
  return yargs.options({
    'encrypt-to': listOption(
      'Encrypt the snapshot with age to this recipient (age1..., the public key age-keygen prints); repeatable',
    ),
    'encrypt-to-file': listOption(
      'Encrypt the snapshot to the recipients in FILE (one a line, # comments); repeatable',
    ),
    'passphrase-env': stringOption(
      'Encrypt the snapshot with the passphrase in the environment variable VAR (age scrypt)',
    ),
  });
}

function readPaths(value: unknown, flag: string): string[] {
  if (value === undefined || value === null) return [];
  const items = (Array.isArray(value) ? value : [value]).map(String);
  if (items.some((item) => item.trim() === '')) {
    throw new UsageError(`Expected ${flag} to be a path, got ""`, { hint: 'See --help' });
  }
  return items;
}

/** Open snapshots with the command's keys, and check that each encrypted one of `snapshots` opens. */
export async function useSnapshotKeysOf(
  args: ParsedArgs,
  ctx: CliContext,
  snapshots: readonly string[],
): Promise<void> {
  const keys = await loadSnapshotKeys({
    identityFiles: readPaths(args.identity, '--identity'),
    passphraseEnv: readStringOption(args, 'passphrase-env', 'a variable name'),
    env: ctx.io.env,
    cwd: ctx.io.cwd,
  });
  useSnapshotKeys(keys);
  for (const snapshot of snapshots) {
    const path = resolve(ctx.io.cwd, snapshot);
    if (isEncryptedSnapshot(path)) (await openSnapshotSource(path, snapshot, keys)).close();
  }
}

/** The SNAPSHOT argument as typed (`label`) and resolved (`path`), checked to open with the keys. */
export async function readSnapshotArgument(
  args: ParsedArgs,
  ctx: CliContext,
): Promise<{ readonly path: string; readonly label: string }> {
  const label = readStringOption(args, 'snapshot', 'a path');
  if (label === undefined) throw new UsageError('Missing SNAPSHOT', { hint: 'See --help' });
  await useSnapshotKeysOf(args, ctx, [label]);
  return { path: resolve(ctx.io.cwd, label), label };
}

/** The encryption `export` was asked for (undefined: none), checked before anything is fetched. */
export async function readEncryption(args: ParsedArgs, ctx: CliContext): Promise<AgeEncryption | undefined> {
  return loadEncryption({
    recipients: args.encryptTo === undefined ? [] : splitListValues(args.encryptTo),
    recipientFiles: readPaths(args.encryptToFile, '--encrypt-to-file'),
    passphraseEnv: readStringOption(args, 'passphrase-env', 'a variable name'),
    env: ctx.io.env,
    cwd: ctx.io.cwd,
  });
}
