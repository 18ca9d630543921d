/**
 * The seam of `age-encryption` (age-encryption.org/v1): keys, headers, file keys. The payload's STREAM chunks
 * (HKDF-SHA256 of file key and nonce, label `payload`; 64 KiB, an 11-byte counter and a last-chunk flag as
 * nonce) are sealed and opened here with Node's ChaCha20-Poly1305 (docs/why.md, "Why the age payload of an
 * encrypted snapshot is read chunk by chunk"). Library messages are never shown: some quote the key.
 */
import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Identity, Recipient, Stanza } from 'age-encryption';

// Loaded on first use: a command that never meets a key or an age file does not pay its memory.
const requireModule = createRequire(import.meta.url);
function age(): typeof import('age-encryption') {
  return requireModule('age-encryption');
}

const AGE_MAGIC = 'age-encryption.org/v1\n';
const AGE_ARMOR_BEGIN = '-----BEGIN AGE ENCRYPTED FILE-----';

/** Plaintext bytes per payload chunk. */
export const AGE_CHUNK_BYTES = 64 * 1024;
const TAG_BYTES = 16;
const SEALED_CHUNK_BYTES = AGE_CHUNK_BYTES + TAG_BYTES;
/** Chunks kept decrypted (1 MiB), so rereads of nearby lines decrypt each chunk once. */
const RECENT_CHUNKS = 16;
/** The payload nonce that follows the header. */
export const AGE_NONCE_BYTES = 16;

/** The age format a file's first bytes begin, or undefined. */
export function ageFormatOf(start: Buffer): 'binary' | 'armored' | undefined {
  if (start.subarray(0, AGE_MAGIC.length).toString('latin1') === AGE_MAGIC) return 'binary';
  // The armor allows whitespace before the file.
  const text = start.toString('latin1').trimStart();
  return text.startsWith(AGE_ARMOR_BEGIN) ? 'armored' : undefined;
}

/** The binary age file an armored one encodes (AgeFileError when it is not well formed). */
export function decodeArmor(text: string): Uint8Array {
  try {
    return age().armor.decode(text);
  } catch {
    throw new AgeFileError('damaged', 'is an armored age file that is not well formed');
  }
}

/** What may open an age file: X25519 (and hybrid) identities, and passphrases. Both hold secrets. */
export interface AgeKeys {
  readonly identities: readonly string[];
  readonly passphrases: readonly string[];
}

function accepts(add: () => void): boolean {
  try {
    add();
    return true;
  } catch {
    return false;
  }
}

/** True when `text` is an age identity this build reads (`AGE-SECRET-KEY-1...`, as age-keygen writes). */
export const isAgeIdentity = (text: string) => accepts(() => new (age().Decrypter)().addIdentity(text));

/** True when `text` is an age recipient this build encrypts to (`age1...`). */
export const isAgeRecipient = (text: string) => accepts(() => new (age().Encrypter)().addRecipient(text));

/** Why an age file cannot be read (`damaged` says what is wrong in `message`). */
export class AgeFileError extends Error {
  constructor(
    readonly reason: 'no-key' | 'needs-passphrase' | 'no-match' | 'wrong-passphrase' | 'damaged',
    message: string,
  ) {
    super(message);
    this.name = 'AgeFileError';
  }
}

/** The offset after the header's `--- MAC` line in `bytes`, or -1 when it is not there yet. */
export function ageHeaderEnd(bytes: Buffer): number {
  // Stanza lines start with "-> " and bodies are base64: only the MAC line starts with "---".
  let at = bytes.indexOf('\n---');
  while (at >= 0) {
    const end = bytes.indexOf(0x0a, at + 1);
    if (end < 0) return -1;
    if (bytes[at + 4] === 0x20) return end + 1;
    at = bytes.indexOf('\n---', end);
  }
  return -1;
}

/** File keys by header, per key set: a snapshot read twice pays a passphrase's scrypt (1 s, 256 MB) once. */
const unwrapped = new WeakMap<AgeKeys, Map<string, Uint8Array>>();

/** The file key of `header` (up to its MAC line), unwrapped with one of `keys` and MAC-checked. */
export async function unwrapFileKey(header: Buffer, keys: AgeKeys): Promise<Uint8Array> {
  const id = header.toString('latin1');
  const cache = unwrapped.get(keys) ?? new Map<string, Uint8Array>();
  unwrapped.set(keys, cache);
  const known = cache.get(id);
  if (known !== undefined) return known;
  const scrypt = /\n-> scrypt /.test(id);
  if (keys.identities.length === 0 && keys.passphrases.length === 0) {
    throw new AgeFileError(scrypt ? 'needs-passphrase' : 'no-key', 'no key was given');
  }
  const decrypter = new (age().Decrypter)();
  for (const identity of keys.identities) decrypter.addIdentity(identity);
  for (const passphrase of keys.passphrases) decrypter.addPassphrase(passphrase);
  // Asked last, only when no key before it opened the file.
  let noneMatched = false;
  const lastResort: Identity = {
    unwrapFileKey: (_stanzas: Stanza[]) => {
      noneMatched = true;
      return null;
    },
  };
  decrypter.addIdentity(lastResort);
  let fileKey: Uint8Array;
  try {
    fileKey = await decrypter.decryptHeader(header);
  } catch {
    if (noneMatched) {
      const reason = !scrypt
        ? 'no-match'
        : keys.passphrases.length > 0
          ? 'wrong-passphrase'
          : 'needs-passphrase';
      throw new AgeFileError(reason, 'no key given opens it');
    }
    throw new AgeFileError('damaged', 'has an age header that is damaged or was changed');
  }
  if (cache.size >= 8) cache.clear();
  cache.set(id, fileKey);
  return fileKey;
}

/** Reads the payload as `readSync` reads a file. */
export type CiphertextReader = (buffer: Buffer, offset: number, length: number, position: number) => number;

/** The payload of an age file (after its header and nonce), decrypted and authenticated a chunk at a time. */
export class AgePayload {
  readonly size: number;
  private readonly key: Buffer;
  private readonly chunks: number;
  private readonly sealed = Buffer.allocUnsafe(SEALED_CHUNK_BYTES);
  private readonly recent = new Map<number, Buffer>();

  constructor(
    fileKey: Uint8Array,
    nonce: Buffer,
    private readonly ciphertextBytes: number,
    private readonly read: CiphertextReader,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', fileKey, nonce, 'payload', 32));
    const chunks = Math.ceil(ciphertextBytes / SEALED_CHUNK_BYTES);
    const last = ciphertextBytes - (chunks - 1) * SEALED_CHUNK_BYTES;
    // Only a lone last chunk may be empty.
    if (chunks === 0 || last < TAG_BYTES || (last === TAG_BYTES && chunks > 1)) {
      throw new AgeFileError('damaged', 'is cut short or extended (its size is not that of an age payload)');
    }
    this.chunks = chunks;
    this.size = ciphertextBytes - chunks * TAG_BYTES;
  }

  /** As `readSync` at `position` into the start of `buffer`. */
  readAt(buffer: Buffer, length: number, position: number): number {
    let done = 0;
    while (done < length && position + done < this.size) {
      const at = position + done;
      const index = Math.floor(at / AGE_CHUNK_BYTES);
      const chunk = this.chunk(index);
      const from = at - index * AGE_CHUNK_BYTES;
      done += chunk.copy(buffer, done, from, Math.min(chunk.length, from + length - done));
    }
    return done;
  }

  private chunk(index: number): Buffer {
    const known = this.recent.get(index);
    if (known !== undefined) return known;
    const start = index * SEALED_CHUNK_BYTES;
    const length = Math.min(SEALED_CHUNK_BYTES, this.ciphertextBytes - start);
    for (let got = 0; got < length; ) {
      const n = this.read(this.sealed, got, length - got, start + got);
      if (n === 0) throw new AgeFileError('damaged', 'was cut short while it was being read');
      got += n;
    }
    let plain: Buffer;
    try {
      const nonce = chunkNonce(index, index === this.chunks - 1);
      const decipher = createDecipheriv('chacha20-poly1305', this.key, nonce, { authTagLength: TAG_BYTES });
      decipher.setAuthTag(this.sealed.subarray(length - TAG_BYTES, length));
      plain = decipher.update(this.sealed.subarray(0, length - TAG_BYTES));
      decipher.final();
    } catch {
      throw new AgeFileError(
        'damaged',
        `is damaged, cut short or was changed (chunk ${index + 1} of ${this.chunks} does not decrypt)`,
      );
    }
    if (this.recent.size >= RECENT_CHUNKS) this.recent.delete(this.recent.keys().next().value as number);
    this.recent.set(index, plain);
    return plain;
  }
}

/** What to encrypt a snapshot to: recipients, or one passphrase (age's scrypt). */
export type AgeEncryption = { readonly recipients: readonly string[] } | { readonly passphrase: string };

/** Bytes in (copied: the caller may reuse its buffer), an age file out; `end` seals the last chunk. */
export interface AgeWriter {
  write(bytes: Buffer): Promise<void>;
  end(): Promise<void>;
}

/**
 * An age writer: the library writes the header, the payload is sealed here (the library seals in
 * JavaScript: about 1.4 s for a 76 MB export). The file key reaches a {@link Recipient} of ours; a
 * passphrase file allows no other stanza, so its key is unwrapped from the header (a second scrypt).
 */
export async function createAgeWriter(
  encryption: AgeEncryption,
  sink: (bytes: Buffer) => Promise<void>,
): Promise<AgeWriter> {
  const encrypter = new (age().Encrypter)();
  let fileKey: Uint8Array | undefined;
  if ('passphrase' in encryption) encrypter.setPassphrase(encryption.passphrase);
  else {
    for (const recipient of encryption.recipients) encrypter.addRecipient(recipient);
    const keeper: Recipient = {
      wrapFileKey: (key: Uint8Array) => {
        fileKey = key;
        return [];
      },
    };
    encrypter.addRecipient(keeper);
  }
  // An empty file: its header, its nonce, and an empty last chunk (dropped).
  const empty = Buffer.from(await encrypter.encrypt(new Uint8Array(0)));
  const headerEnd = ageHeaderEnd(empty);
  if (headerEnd < 0) throw new Error('age: the library wrote no header');
  if ('passphrase' in encryption) {
    const keys = { identities: [], passphrases: [encryption.passphrase] };
    fileKey = await unwrapFileKey(empty.subarray(0, headerEnd), keys);
  }
  if (fileKey === undefined) throw new Error('age: the library wrapped no file key');
  const nonce = empty.subarray(headerEnd, headerEnd + AGE_NONCE_BYTES);
  const key = Buffer.from(hkdfSync('sha256', fileKey, nonce, 'payload', 32));
  await sink(empty.subarray(0, headerEnd + AGE_NONCE_BYTES));
  const chunk = Buffer.allocUnsafe(AGE_CHUNK_BYTES);
  let used = 0;
  let index = 0;
  const seal = (last: boolean): Buffer => {
    const cipher = createCipheriv('chacha20-poly1305', key, chunkNonce(index, last), {
      authTagLength: TAG_BYTES,
    });
    index += 1;
    const sealed = Buffer.concat([
      cipher.update(chunk.subarray(0, used)),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    used = 0;
    return sealed;
  };
  return {
    async write(bytes) {
      const sealed: Buffer[] = [];
      for (let at = 0; at < bytes.length; ) {
        // A full chunk is sealed only once more bytes follow it: the last chunk carries the last flag.
        if (used === AGE_CHUNK_BYTES) sealed.push(seal(false));
        const n = bytes.copy(chunk, used, at, Math.min(bytes.length, at + AGE_CHUNK_BYTES - used));
        used += n;
        at += n;
      }
      if (sealed.length > 0) await sink(Buffer.concat(sealed));
    },
    async end() {
      await sink(seal(true));
    },
  };
}

/** The nonce of payload chunk `index`: an 11-byte big-endian counter and the last-chunk flag. */
function chunkNonce(index: number, last: boolean): Buffer {
  const nonce = Buffer.alloc(12);
  nonce.writeUIntBE(Math.floor(index / 2 ** 32), 3, 4);
  nonce.writeUInt32BE(index % 2 ** 32, 7);
  nonce[11] = last ? 1 : 0;
  return nonce;
}
