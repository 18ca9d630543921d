/**
 * Encrypted snapshots below the CLI: the writer's age file and its spill, the reader's decryption
 * (forward and by place), detection by content, and every way an age file or a key can be wrong.
 * Interoperability with the `age` CLI is in test/e2e/encrypted-snapshots.test.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { armor, Decrypter, Encrypter, generateIdentity, identityToRecipient } from 'age-encryption';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InputFileError, UsageError } from '../../src/errors.js';
import type { Connection } from '../../src/model/connection.js';
import { AGE_CHUNK_BYTES, type AgeKeys } from '../../src/snapshot/age.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { loadEncryption, loadSnapshotKeys, useSnapshotKeys } from '../../src/snapshot/keys.js';
import { type EntryPlace, indexSnapshot, loadSnapshot, verifySnapshot } from '../../src/snapshot/read.js';
import { isEncryptedSnapshot, openSnapshotSource } from '../../src/snapshot/source.js';
import { SpillCipher } from '../../src/snapshot/spill-cipher.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const header = createSnapshotHeader({
  tool: 'dds-migrate test',
  source: { url: 'https://prod.example.com', environment: 'prod' },
  createdAt: new Date('2026-11-22T10:00:00.000Z'),
});

/** Enough connections for several 64 KiB chunks, each with a recognisable secret. */
function connections(count: number): Connection[] {
  return Array.from({ length: count }, (_, i) => ({
    _id: `65a1${String(i).padStart(20, '0')}`,
    name: `conn-${String(count - i).padStart(5, '0')}`,
    type: 's3',
    bucket_name: `bucket-${i}`,
    aws_secret_key: `SECRET-VALUE-${i}-${'x'.repeat(200)}`,
  })) as Connection[];
}

let dir: string;
let identity: string;
let recipient: string;
let keys: AgeKeys;
beforeAll(async () => {
  identity = await generateIdentity();
  recipient = await identityToRecipient(identity);
  keys = { identities: [identity], passphrases: [] };
});
beforeEach(async () => {
  dir = await makeTempDir('dds-age-');
  useSnapshotKeys({ identities: [], passphrases: [] });
});

async function writeEncrypted(path: string, entries: Connection[]): Promise<void> {
  await writeSnapshot({ path }, header, entries, { encryption: { recipients: [recipient] } });
}

describe('an encrypted snapshot written and read', () => {
  it('is an age file, 0600, holding no name or secret in its bytes, and reads back whole', async () => {
    const path = join(dir, 'a.snapshot.jsonl');
    const entries = connections(600);
    await writeEncrypted(path, entries);
    const bytes = readFileSync(path);
    expect(bytes.subarray(0, 22).toString()).toBe('age-encryption.org/v1\n');
    expect(bytes.includes('SECRET-VALUE')).toBe(false);
    expect(bytes.includes('conn-00001')).toBe(false);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    // Only the snapshot is left: no spill, no temporary file.
    expect(await readdir(dir)).toEqual(['a.snapshot.jsonl']);
    expect(isEncryptedSnapshot(path)).toBe(true);

    useSnapshotKeys(keys);
    const loaded = await loadSnapshot(path);
    expect(loaded.entries.map((e) => e.name)).toEqual(entries.map((e) => e.name).sort());
    expect(loaded.entries.find((e) => e.name === 'conn-00001')?.aws_secret_key).toMatch(/^SECRET-VALUE-599/);
    // The library decrypts it whole to the plain snapshot the same entries make.
    const plainPath = join(dir, 'plain.snapshot.jsonl');
    await writeSnapshot({ path: plainPath }, header, entries);
    const d = new Decrypter();
    d.addIdentity(identity);
    expect(Buffer.from(await d.decrypt(bytes)).equals(readFileSync(plainPath))).toBe(true);
    expect((await verifySnapshot(path)).sha256).toBe((await verifySnapshot(plainPath)).sha256);
  });

  it('never has a clear entry on disk while it writes (the spill is enciphered)', async () => {
    const path = join(dir, 'spilled.snapshot.jsonl');
    const seen: string[] = [];
    async function* entries(): AsyncGenerator<Connection> {
      const all = connections(4000).map((c) => ({ ...c, description: 'd'.repeat(2000) }));
      for (const [i, entry] of all.entries()) {
        // Past several 1 MiB flushes of the spill: every file of the folder, as it is now.
        if (i === 3000) {
          for (const file of await readdir(dir)) {
            seen.push(file);
            expect(readFileSync(join(dir, file)).includes('SECRET-VALUE'), file).toBe(false);
          }
        }
        yield entry;
      }
    }
    await writeSnapshot({ path }, header, entries(), { encryption: { recipients: [recipient] } });
    expect(seen.some((file) => file.endsWith('.spill'))).toBe(true);
    expect(await readdir(dir)).toEqual(['spilled.snapshot.jsonl']);
  });

  it('rereads any entry by its place (chunks decrypted where the line lies)', async () => {
    const path = join(dir, 'b.snapshot.jsonl');
    await writeEncrypted(path, connections(800));
    useSnapshotKeys(keys);
    const places: { name: string; place: EntryPlace }[] = [];
    const { file } = await indexSnapshot(path, ({ name, place }) => places.push({ name, place }));
    expect(places.at(-1)?.place.offset).toBeGreaterThan(3 * AGE_CHUNK_BYTES);
    // Backwards, so every reread leaves the chunks decrypted last.
    for (const { name, place } of places.reverse()) expect(file.reread(place).name).toBe(name);
    file.close();
  });

  it('reads a passphrase-encrypted and an armored file', async () => {
    const e = new Encrypter();
    e.setScryptWorkFactor(10);
    e.setPassphrase('correct horse battery staple');
    const plainPath = join(dir, 'plain.snapshot.jsonl');
    await writeSnapshot({ path: plainPath }, header, connections(3));
    const cipher = await e.encrypt(readFileSync(plainPath));
    const path = join(dir, 'p.snapshot.jsonl');
    writeFileSync(path, cipher);
    useSnapshotKeys({ identities: [], passphrases: ['correct horse battery staple'] });
    expect((await loadSnapshot(path)).entries).toHaveLength(3);
    const armored = join(dir, 'armored.snapshot.jsonl');
    writeFileSync(armored, armor.encode(cipher));
    expect(isEncryptedSnapshot(armored)).toBe(true);
    expect((await loadSnapshot(armored)).entries).toHaveLength(3);
  });
});

describe('what cannot be read', () => {
  let path: string;
  beforeEach(async () => {
    path = join(dir, 'c.snapshot.jsonl');
    await writeEncrypted(path, connections(300));
  });

  async function failure(keysGiven: AgeKeys, file = path): Promise<InputFileError> {
    useSnapshotKeys(keysGiven);
    const error = await verifySnapshot(file, { label: 'c.snapshot.jsonl' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InputFileError);
    const line = (error as InputFileError).toUserLine();
    expect(line).not.toContain('\n');
    expect(line).not.toContain('AGE-SECRET-KEY');
    return error as InputFileError;
  }

  it('says no key was given, and which kind it needs', async () => {
    expect((await failure({ identities: [], passphrases: [] })).toUserLine()).toMatch(
      /^c\.snapshot\.jsonl: the snapshot is encrypted \(age\) and no identity was given\. Give --identity FILE/,
    );
  });

  it('says the identity does not open it', async () => {
    const other = await generateIdentity();
    expect((await failure({ identities: [other], passphrases: [] })).toUserLine()).toMatch(
      /cannot decrypt the snapshot: none of the identities given opens it/,
    );
  });

  it('says a passphrase is wrong', async () => {
    const e = new Encrypter();
    e.setScryptWorkFactor(10);
    e.setPassphrase('right');
    const p = join(dir, 'p.snapshot.jsonl');
    writeFileSync(p, await e.encrypt(readFileSync(path)));
    expect((await failure({ identities: [], passphrases: ['wrong'] }, p)).toUserLine()).toMatch(
      /the passphrase given does not open it\. Check the passphrase/,
    );
    expect((await failure({ identities: [identity], passphrases: [] }, p)).toUserLine()).toMatch(
      /encrypted with a passphrase \(age\) and none was given\. Give --passphrase-env VAR/,
    );
  });

  it('refuses a changed byte, a cut file and an added byte, naming the chunk', async () => {
    const bytes = readFileSync(path);
    const tampered = Buffer.from(bytes);
    tampered[bytes.length - 100] = (tampered[bytes.length - 100] as number) ^ 1;
    writeFileSync(path, tampered);
    expect((await failure(keys)).toUserLine()).toMatch(
      /is damaged, cut short or was changed \(chunk \d+ of \d+/,
    );
    // Cut at a chunk's end: the chunk before was not sealed as the last one.
    writeFileSync(path, bytes.subarray(0, bytes.length - 2000));
    expect((await failure(keys)).toUserLine()).toMatch(/damaged, cut short or was changed/);
    writeFileSync(path, Buffer.concat([bytes, Buffer.from('x')]));
    expect((await failure(keys)).toUserLine()).toMatch(/damaged, cut short or was changed/);
    writeFileSync(path, bytes.subarray(0, 40));
    expect((await failure(keys)).toUserLine()).toMatch(/has no complete age header/);
  });

  it('refuses a changed header (its MAC)', async () => {
    const bytes = Buffer.from(readFileSync(path));
    // The MAC: the stanza still opens with the key, and the header's MAC does not match it.
    const at = bytes.indexOf('\n--- ') + 6;
    bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
    writeFileSync(path, bytes);
    expect((await failure(keys)).toUserLine()).toMatch(/age header that is damaged or was changed/);
  });

  it('opens a plain snapshot with or without keys', async () => {
    const plain = join(dir, 'plain.snapshot.jsonl');
    await writeSnapshot({ path: plain }, header, connections(2));
    const source = await openSnapshotSource(plain, plain, keys);
    expect(source.encrypted).toBe(false);
    source.close();
    expect(isEncryptedSnapshot(plain)).toBe(false);
  });
});

describe('keys', () => {
  const env = {};
  it('reads an age-keygen identity file with comments, and DDS_AGE_IDENTITY when no --identity', async () => {
    const file = join(dir, 'key.txt');
    await writeFile(file, `# created: 2026-11-27T00:00:00Z\n# public key: ${recipient}\n${identity}\n`);
    const loaded = await loadSnapshotKeys({
      identityFiles: ['key.txt'],
      passphraseEnv: undefined,
      env,
      cwd: dir,
    });
    expect(loaded.identities).toEqual([identity]);
    const fromEnv = await loadSnapshotKeys({
      identityFiles: [],
      passphraseEnv: undefined,
      env: { DDS_AGE_IDENTITY: file },
      cwd: '/',
    });
    expect(fromEnv.identities).toEqual([identity]);
  });

  it('refuses a file that is not an identity file, never quoting it', async () => {
    const file = join(dir, 'bad.txt');
    await writeFile(file, `# comment\n${identity.slice(0, -2)}zz\n`);
    const error = await loadSnapshotKeys({
      identityFiles: [file],
      passphraseEnv: undefined,
      env,
      cwd: dir,
    }).catch((e: unknown) => e as InputFileError);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as InputFileError).toUserLine()).toMatch(
      /:2: is not an age identity \(AGE-SECRET-KEY-1\.\.\.\)/,
    );
    expect((error as InputFileError).toUserLine()).not.toContain(identity.slice(20, 40));
    await writeFile(file, `${recipient}\n`);
    await expect(
      loadSnapshotKeys({ identityFiles: [file], passphraseEnv: undefined, env, cwd: dir }),
    ).rejects.toThrow(/:1: is a recipient \(a public key\), not an identity/);
    await writeFile(file, '# nothing\n');
    await expect(
      loadSnapshotKeys({ identityFiles: [file], passphraseEnv: undefined, env, cwd: dir }),
    ).rejects.toThrow(/holds no age identity/);
    await expect(
      loadSnapshotKeys({ identityFiles: ['missing.txt'], passphraseEnv: undefined, env, cwd: dir }),
    ).rejects.toThrow(/missing\.txt: no such file/);
  });

  it('refuses an unset or empty passphrase variable', async () => {
    await expect(
      loadSnapshotKeys({ identityFiles: [], passphraseEnv: 'PASS', env: {}, cwd: dir }),
    ).rejects.toThrow(UsageError);
    await expect(
      loadSnapshotKeys({ identityFiles: [], passphraseEnv: 'PASS', env: { PASS: '' }, cwd: dir }),
    ).rejects.toThrow(/the variable PASS is empty/);
  });

  it('reads recipients from flags and files, and refuses a secret key given as one without quoting it', async () => {
    const file = join(dir, 'recipients.txt');
    await writeFile(file, `# backup key\n${recipient}\n\n`);
    const request = { recipients: [], recipientFiles: [file], passphraseEnv: undefined, env, cwd: dir };
    expect(await loadEncryption(request)).toEqual({ recipients: [recipient] });
    expect(await loadEncryption({ ...request, recipientFiles: [] })).toBeUndefined();
    const error = await loadEncryption({ ...request, recipients: [identity] }).catch(
      (e: unknown) => e as Error,
    );
    expect((error as Error).message).toMatch(/got a secret key/);
    expect((error as Error).message).not.toContain(identity);
    await expect(loadEncryption({ ...request, recipients: ['age1nope'] })).rejects.toThrow(/got "age1nope"/);
    await expect(loadEncryption({ ...request, passphraseEnv: 'P', env: { P: 'x' } })).rejects.toThrow(
      /not both/,
    );
  });
});

describe('the spill cipher', () => {
  it('reads back any range of what it enciphered at any offset', () => {
    const cipher = new SpillCipher();
    const plain = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
    const sealed = Buffer.concat([
      cipher.apply(Buffer.from(plain.subarray(0, 333)), 0),
      cipher.apply(Buffer.from(plain.subarray(333)), 333),
    ]);
    expect(sealed.equals(plain)).toBe(false);
    for (const [from, to] of [
      [0, 1000],
      [17, 18],
      [333, 777],
      [999, 1000],
    ] as const) {
      expect(
        cipher.apply(Buffer.from(sealed.subarray(from, to)), from).equals(plain.subarray(from, to)),
      ).toBe(true);
    }
    // Runs read in another order, each deciphered in place.
    const runs = [
      { position: 700, length: 55 },
      { position: 3, length: 1 },
      { position: 16, length: 32 },
      { position: 333, length: 300 },
    ];
    const gathered = Buffer.concat(
      runs.map((r) =>
        cipher.apply(Buffer.from(sealed.subarray(r.position, r.position + r.length)), r.position),
      ),
    );
    expect(
      gathered.equals(Buffer.concat(runs.map((r) => plain.subarray(r.position, r.position + r.length)))),
    ).toBe(true);
  });
});
