import { resolve } from 'node:path';
import { InputFileError, UsageError } from '../errors.js';
import { readTextFile } from '../files.js';
import { registerSecret } from '../secrets.js';
import { type AgeEncryption, type AgeKeys, isAgeIdentity, isAgeRecipient } from './age.js';

export type { AgeEncryption, AgeKeys } from './age.js';

/** The variable naming an identity file when no `--identity` is given. */
export const AGE_IDENTITY_ENV = 'DDS_AGE_IDENTITY';

let current: AgeKeys = { identities: [], passphrases: [] };

/** The keys that open this command's snapshots (replacing an earlier in-process command's). */
export function useSnapshotKeys(keys: AgeKeys): void {
  current = keys;
}

/** The keys {@link useSnapshotKeys} set. */
export function snapshotKeys(): AgeKeys {
  return current;
}

/** Where a command's keys come from: `--identity FILE` (relative to `cwd`), `--passphrase-env VAR`. */
export interface SnapshotKeyRequest {
  readonly identityFiles: readonly string[];
  readonly passphraseEnv: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

const IDENTITY_HINT = 'Give the file age-keygen wrote (lines AGE-SECRET-KEY-1..., # comments allowed)';

/** The identities of `--identity` (else `$DDS_AGE_IDENTITY`'s file) and the `--passphrase-env` passphrase. */
export async function loadSnapshotKeys(request: SnapshotKeyRequest): Promise<AgeKeys> {
  const fromEnv = request.env[AGE_IDENTITY_ENV];
  const files =
    request.identityFiles.length > 0
      ? request.identityFiles.map((file) => ({ file, label: file }))
      : fromEnv !== undefined && fromEnv.trim() !== ''
        ? [{ file: fromEnv, label: `${fromEnv} (${AGE_IDENTITY_ENV})` }]
        : [];
  const identities: string[] = [];
  for (const { file, label } of files) {
    const lines = await readKeyLines(resolve(request.cwd, file), label, 'identity', IDENTITY_HINT);
    for (const { text, line } of lines) {
      if (!isAgeIdentity(text)) {
        throw new InputFileError(
          label,
          line,
          text.startsWith('age1')
            ? 'is a recipient (a public key), not an identity'
            : 'is not an age identity (AGE-SECRET-KEY-1...)',
          { hint: IDENTITY_HINT },
        );
      }
      registerSecret(text);
      identities.push(text);
    }
  }
  const passphrases =
    request.passphraseEnv === undefined ? [] : [readPassphrase(request.env, request.passphraseEnv)];
  return { identities, passphrases };
}

/** Where `export` encrypts to: `--encrypt-to`, `--encrypt-to-file` (relative to `cwd`), a passphrase. */
export interface EncryptionRequest extends Omit<SnapshotKeyRequest, 'identityFiles'> {
  readonly recipients: readonly string[];
  readonly recipientFiles: readonly string[];
}

const RECIPIENT_HINT =
  'A recipient is the public key age-keygen prints (age1...); `age-keygen -y KEYFILE` shows it';

/** The encryption `export` was asked for, checked; undefined when none was. */
export async function loadEncryption(request: EncryptionRequest): Promise<AgeEncryption | undefined> {
  const recipients: string[] = [];
  for (const recipient of request.recipients) {
    if (!isAgeRecipient(recipient)) {
      // A secret key given by mistake is not quoted.
      const shown = /^AGE-SECRET-KEY-/i.test(recipient)
        ? 'a secret key (AGE-SECRET-KEY-...)'
        : JSON.stringify(recipient);
      throw new UsageError(`Expected --encrypt-to to be an age recipient (age1...), got ${shown}`, {
        hint: RECIPIENT_HINT,
      });
    }
    recipients.push(recipient);
  }
  for (const file of request.recipientFiles) {
    const lines = await readKeyLines(resolve(request.cwd, file), file, 'recipient', RECIPIENT_HINT);
    for (const { text, line } of lines) {
      if (!isAgeRecipient(text)) {
        throw new InputFileError(file, line, 'is not an age recipient (age1...)', { hint: RECIPIENT_HINT });
      }
      recipients.push(text);
    }
  }
  if (request.passphraseEnv !== undefined) {
    if (recipients.length > 0) {
      throw new UsageError('Give either --encrypt-to / --encrypt-to-file or --passphrase-env, not both', {
        hint: 'A passphrase-encrypted age file has no other recipient',
      });
    }
    return { passphrase: readPassphrase(request.env, request.passphraseEnv) };
  }
  return recipients.length > 0 ? { recipients: [...new Set(recipients)] } : undefined;
}

function readPassphrase(env: Readonly<Record<string, string | undefined>>, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new UsageError(
      `--passphrase-env ${name}: the variable ${name} is ${value === '' ? 'empty' : 'not set'}`,
      {
        hint: `Set ${name} to the passphrase (it is never printed)`,
      },
    );
  }
  registerSecret(value);
  return value;
}

/** A key file's lines but blanks and `#` comments, trimmed, with their numbers; none: refused. */
async function readKeyLines(
  path: string,
  label: string,
  what: 'identity' | 'recipient',
  hint: string,
): Promise<{ text: string; line: number }[]> {
  const fileWhat = what === 'identity' ? 'identity file' : 'recipients file';
  const text = await readTextFile(path, { label, what: fileWhat, readHint: hint });
  const lines: { text: string; line: number }[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const trimmed = raw.trim();
    if (trimmed !== '' && !trimmed.startsWith('#')) lines.push({ text: trimmed, line: i + 1 });
  }
  if (lines.length === 0) throw new InputFileError(label, undefined, `holds no age ${what}`, { hint });
  return lines;
}
