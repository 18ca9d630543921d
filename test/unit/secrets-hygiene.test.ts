/**
 * The shared secret-hygiene mechanisms of src/secrets.ts, each with the leak it closes: deep masking
 * (nested credentials, numeric secrets, passphrases), V8's JSON.parse excerpts (which quote the input,
 * so a damaged snapshot line's password), and free-text service messages that name a credential.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendAuditRecords } from '../../src/cases/audit.js';
import { loadConfig, resolveEnvironment } from '../../src/config.js';
import {
  clearRegisteredSecrets,
  describeJsonError,
  isSecretFieldName,
  MASK,
  maskSecrets,
  registerSecret,
  registerSecretsOf,
  scrub,
  scrubServiceText,
} from '../../src/secrets.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const CANARY = 'CANARY-pw-5f1e0c2d-77aa';

/** The message V8 gives for `text` (the engine's, not a copy: a V8 upgrade is then caught here). */
function parseError(text: string): Error {
  try {
    JSON.parse(text);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`${text} parsed`);
}

/** Inputs whose parse errors quote the input in different ways (short, long with `...`, top-level). */
const DAMAGED_LINES = [
  `{"password":${CANARY}}`,
  `{"name":"${'a'.repeat(60)}","password":${CANARY},"${'z'.repeat(60)}":1}`,
  `{"password":${CANARY},"${'z'.repeat(80)}":1}`,
  `{"${'a'.repeat(80)}":1,"password":${CANARY}}`,
  CANARY,
  `t${CANARY}`,
];

afterEach(() => clearRegisteredSecrets());

describe('JSON.parse messages lose the excerpt of their input', () => {
  it.each(DAMAGED_LINES)('describeJsonError(%s)', (line) => {
    const error = parseError(line);
    // The premise: V8 does quote the input, so without the fix this would leak.
    expect(error.message).toContain('CANARY');
    const described = describeJsonError(error);
    expect(described).not.toContain('CANARY');
    expect(described).not.toMatch(/is not valid JSON/);
    expect(described.length).toBeGreaterThan(0);
  });

  it.each(DAMAGED_LINES)('scrub removes it from a message, a stack and a JSON log line (%s)', (line) => {
    const error = parseError(line);
    expect(scrub(error.message)).not.toContain('CANARY');
    expect(scrub(String(error.stack))).not.toContain('CANARY');
    const logLine = JSON.stringify({ level: 50, msg: 'failed', err: error.message, next: '"kept"' });
    const scrubbed = scrub(logLine);
    expect(scrubbed).not.toContain('CANARY');
    // The rest of the line is intact and still JSON.
    expect(JSON.parse(scrubbed)).toMatchObject({ level: 50, msg: 'failed', next: '"kept"' });
  });

  it('scrub removes an excerpt that spans a line break (a pretty-printed input), in a message and a stack', () => {
    // A short input is quoted whole (a longer one: ten characters on each side of the error).
    const error = parseError('{"p":"9f3k",\n"a":}');
    // The premise: V8 quotes the input as it is, line break and the secret's end included.
    expect(error.message).toContain('\n');
    expect(error.message).toContain('9f3k');
    expect(scrub(error.message)).not.toContain('9f3k');
    expect(scrub(String(error.stack))).not.toContain('9f3k');
  });

  it('leaves parse errors that quote nothing, and ordinary text, alone', () => {
    const error = parseError('{"a":1');
    expect(describeJsonError(error)).toBe(error.message);
    expect(scrub(error.message)).toBe(error.message);
    expect(scrub('name "x" is not valid JSON? no')).toBe('name "x" is not valid JSON? no');
  });
});

describe('a registered secret with line breaks', () => {
  it('is scrubbed as it is and as it stands in a JSON string (a key file in a report or --json)', () => {
    const key = 'line1-CANARY-9931\nline2-CANARY-9932';
    registerSecret(key);
    expect(scrub(`raw ${key} end`)).toBe('raw ****** end');
    expect(scrub(JSON.stringify({ warehouse: key }))).toBe('{"warehouse":"******"}');
    expect(scrub(`/warehouse: ${JSON.stringify(key)} -> "DR_WH"`)).not.toContain('CANARY');
  });
});

describe('maskSecrets masks at any depth', () => {
  it('masks nested credentials, whole secret subtrees, numeric secrets, passphrases and encrypted custom fields', () => {
    const masked = maskSecrets({
      name: 'sf',
      type: 'snowflake',
      password: CANARY,
      pin_code: 1234,
      passphrase: CANARY,
      auth: { method: 'oauth', client_secret: CANARY, nested: [{ api_key: CANARY }] },
      credentials: { type: 'service_account', json: CANARY, retries: 3 },
      custom_fields: [
        { field_name: 'pin', field_value: CANARY, field_type: 'encrypted' },
        { field_name: 'cost', field_value: 'CC-1', field_type: 'clear' },
      ],
      options: { extra: { custom_fields: [{ field_name: 'k', field_value: 42, field_type: 'encrypted' }] } },
      aws_secret_key: '',
      token_required: true,
      owner: 'alice',
    });
    expect(JSON.stringify(masked)).not.toContain('CANARY');
    expect(masked).toMatchObject({
      name: 'sf',
      password: MASK,
      passphrase: MASK,
      auth: { method: 'oauth', client_secret: MASK, nested: [{ api_key: MASK }] },
      credentials: { type: MASK, json: MASK, retries: MASK },
      custom_fields: [
        { field_name: 'pin', field_value: MASK, field_type: 'encrypted' },
        { field_name: 'cost', field_value: 'CC-1', field_type: 'clear' },
      ],
      options: { extra: { custom_fields: [{ field_name: 'k', field_value: MASK }] } },
      // An empty optional secret and a flag are information, not secrets.
      aws_secret_key: '',
      token_required: true,
      owner: 'alice',
    });
    expect(masked.pin_code).toBe(1234);
  });

  it('masks template x-secret fields whatever their name', () => {
    expect(maskSecrets({ warehouse_key: CANARY, other: 'x' }, new Set(['warehouse_key']))).toEqual({
      warehouse_key: MASK,
      other: 'x',
    });
  });

  it('recognises the names the service masks', () => {
    for (const name of ['passphrase', 'ssh_passphrase', 'security_token', 'sas_token', 'gcp_private_key']) {
      expect(isSecretFieldName(name), name).toBe(true);
    }
    for (const name of ['name', 'username', 'aws_region', 'isCredentialsAuth', 'description']) {
      expect(isSecretFieldName(name), name).toBe(false);
    }
  });
});

describe('scrubServiceText: what a service says about a credential is masked', () => {
  it.each([
    [`login failed: password=${CANARY} for scanner`, 'password=******'],
    [`{"password":"${CANARY}","user":"scanner"}`, '"password":"******"'],
    [`invalid aws_secret_key: ${CANARY}`, 'aws_secret_key: ******'],
    [`Passphrase '${CANARY}' is wrong`, "Passphrase '******'"],
    [`client_secret="${CANARY}"`, 'client_secret="******"'],
  ])('%s', (text, expected) => {
    const scrubbed = scrubServiceText(text);
    expect(scrubbed).not.toContain('CANARY');
    expect(scrubbed).toContain(expected);
  });

  it('also removes registered secrets, and leaves harmless text as it is', () => {
    registerSecret('CANARY-token-1234');
    expect(scrubServiceText('token CANARY-token-1234 has no access')).toBe('token ****** has no access');
    expect(scrubServiceText('Password must be at least 8 characters')).toBe(
      'Password must be at least 8 characters',
    );
    expect(scrubServiceText('Unable to locate data source finance-s3')).toBe(
      'Unable to locate data source finance-s3',
    );
  });
});

/** The error a promise rejects with. */
async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('configuration messages never show a credential', () => {
  const noConfig = { environments: {}, path: undefined };
  const io = { env: { DDS_TOKEN: 'a-token-value' }, cwd: tmpdir() };

  it.each([`https://admin:${CANARY}@dds.example.com`, `https://admin:${CANARY}@dds example.com`])(
    'a URL with user:password@ (%s)',
    async (url) => {
      const error = await rejectionOf(resolveEnvironment(url, noConfig, io, { role: 'single' }));
      expect(error.message).toMatch(/not carry credentials|is not a URL/);
      expect(error.message).toContain('***@');
      expect(error.message).not.toContain('CANARY');
    },
  );

  it('a config file whose JSON breaks at a pasted token', async () => {
    const dir = await makeTempDir('dds-secrets-config-');
    await writeFile(
      join(dir, 'dds-migrate.config.json'),
      `{"environments":{"prod":{"url":"https://p.example.com","tokenEnv":${CANARY}}}}`,
    );
    const error = await rejectionOf(loadConfig(undefined, { env: {}, cwd: dir }));
    expect(error.message).toMatch(/not valid JSON/);
    expect(error.message).not.toContain('CANARY');
  });
});

describe('the cases audit trail', () => {
  it('is 0600 and scrubbed of registered secrets', async () => {
    const dir = await makeTempDir('dds-secrets-audit-');
    registerSecret(CANARY);
    const file = join(dir, 'audit.jsonl');
    await appendAuditRecords(file, [
      {
        event: 'failed',
        runId: 'r1',
        at: '2026-01-01T00:00:00.000Z',
        environment: 'https://p.example.com',
        change: { field: 'assignee', newValue: 'bob' },
        filters: [],
        matched: 1,
        error: `PATCH /api/v1/cases:update -> 500: echoed ${CANARY}`,
      },
    ]);
    const text = await readFile(file, 'utf8');
    expect(text).toContain('echoed ******');
    expect(text).not.toContain('CANARY');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
});

describe('registerSecretsOf: what is sent is known to scrub, at any depth', () => {
  it('registers template secrets, credential-named fields, nested credentials and encrypted custom fields', () => {
    registerSecretsOf(
      {
        name: 'crm',
        db_pass: 'TemplateSecret-1',
        password: 'TopLevelPass-2',
        auth: { client_id: 'public-id', client_secret: 'NestedSecret-3' },
        pin_code: 'not-a-secret-name',
        custom_fields: [{ field_name: 'k', field_value: 'EncryptedValue-4', field_type: 'encrypted' }],
      },
      new Set(['db_pass']),
    );
    const text =
      'TemplateSecret-1 TopLevelPass-2 NestedSecret-3 EncryptedValue-4 public-id not-a-secret-name';
    expect(scrub(text)).toBe('****** ****** ****** ****** public-id not-a-secret-name');
  });

  it('registers exactly the values maskSecrets masks', () => {
    const entry = {
      name: 'crm-2',
      credentials: { user: 'SubtreeUser-5', pin: 908_174, flags: [true, 'ArrayItem-6', ''] },
      token_required: false,
      password_max_age: 9_117,
      api_key: '',
      list: [{ field_name: 'x', field_value: 'EncryptedInList-7', field_type: 'encrypted' }],
      notes: 'PlainNote-8',
    };
    const masked: string[] = [];
    maskSecrets(entry, new Set(['notes']), (value) => masked.push(String(value)));
    expect(masked.sort()).toEqual([
      '908174',
      'ArrayItem-6',
      'EncryptedInList-7',
      'PlainNote-8',
      'SubtreeUser-5',
    ]);
    registerSecretsOf(entry, new Set(['notes']));
    for (const value of masked) expect(scrub(`[${value}]`)).toBe('[******]');
    expect(scrub('crm-2 9117 false')).toBe('crm-2 9117 false');
  });
});
