/**
 * Golden scenarios of the diff core: every `fixtures/diff/NNN-name/` folder holds `from.json`,
 * `to.json`, `expected.json` (the `--format json` result), optionally `options.json`
 * (`{ignoreFields, secretFields: {type: [field]}}`) and `expected.txt` (the text form, no colour).
 * Nothing is normalised: the result must equal the expected file exactly (as JSON values).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderDiffText } from '../../src/diff/render-text.js';
import type { DiffOptions } from '../../src/diff/types.js';
import type { Connection } from '../../src/model/connection.js';
import { fixturesDir } from '../../src/paths.js';
import { isSecretFieldName, MASK } from '../../src/secrets.js';
import { diffConnections } from '../helpers/diff-arrays.js';

const root = join(fixturesDir(), 'diff');
const scenarios = readdirSync(root)
  .filter((d) => /^\d{3}-/.test(d))
  .sort();

interface ScenarioOptions {
  readonly ignoreFields?: string[];
  readonly secretFields?: Record<string, string[]>;
}

function readJson<T>(dir: string, file: string): T {
  return JSON.parse(readFileSync(join(root, dir, file), 'utf8')) as T;
}

function load(dir: string) {
  const raw = existsSync(join(root, dir, 'options.json'))
    ? readJson<ScenarioOptions>(dir, 'options.json')
    : {};
  const options: DiffOptions = {
    ignoreFields: raw.ignoreFields ?? [],
    secretFields: (type) => new Set(raw.secretFields?.[type] ?? []),
  };
  return {
    from: readJson<Connection[]>(dir, 'from.json'),
    to: readJson<Connection[]>(dir, 'to.json'),
    options,
    raw,
  };
}

/**
 * Every secret value of a scenario: values of credential-like keys (any depth), of the scenario's
 * template secret fields, of encrypted custom fields, and any value facing a mask on the other side.
 */
function collectSecrets(from: Connection[], to: Connection[], raw: ScenarioOptions): Set<string> {
  const secrets = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === 'string' && v !== '' && v !== MASK) secrets.add(v);
  };
  const walk = (value: unknown, type: string, depth: number) => {
    if (Array.isArray(value)) for (const v of value) walk(v, type, depth + 1);
    else if (value !== null && typeof value === 'object') {
      const o = value as Record<string, unknown>;
      for (const [k, v] of Object.entries(o)) {
        const templateSecret = depth === 0 && (raw.secretFields?.[type] ?? []).includes(k);
        if (isSecretFieldName(k) || templateSecret || (o.field_type === 'encrypted' && k === 'field_value'))
          add(v);
        else walk(v, type, depth + 1);
      }
    }
  };
  for (const c of [...from, ...to]) walk(c, c.type, 0);
  const toByName = new Map(to.map((c) => [c.name, c]));
  for (const a of from) {
    const b = toByName.get(a.name);
    if (!b) continue;
    for (const k of Object.keys(a)) {
      if (a[k] === MASK) add(b[k]);
      if (b[k] === MASK) add(a[k]);
    }
  }
  return secrets;
}

describe('diff golden scenarios', () => {
  it('has the scenarios the issue asks for', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(10);
  });

  describe.each(scenarios)('%s', (dir) => {
    const { from, to, options, raw } = load(dir);

    it('gives the expected result', () => {
      const result = diffConnections(from, to, options);
      expect(JSON.parse(JSON.stringify(result))).toEqual(readJson(dir, 'expected.json'));
    });

    it('is symmetric: swapping sides swaps added/removed and from/to', () => {
      const forward = diffConnections(from, to, options);
      const backward = diffConnections(to, from, options);
      expect(backward.added).toEqual(forward.removed);
      expect(backward.removed).toEqual(forward.added);
      expect(backward.unchanged).toBe(forward.unchanged);
      expect(backward.uncomparable).toEqual(forward.uncomparable);
      expect(backward.changed.map((c) => ({ name: c.name, fields: c.fields.map((f) => f.path) }))).toEqual(
        forward.changed.map((c) => ({ name: c.name, fields: c.fields.map((f) => f.path) })),
      );
    });

    it('never shows a secret value', () => {
      const secrets = collectSecrets(from, to, raw);
      const result = diffConnections(from, to, options);
      const json = JSON.stringify(result);
      const text = renderDiffText(result, { typeOf: () => 'x' }).join('\n');
      for (const secret of secrets) {
        expect(json).not.toContain(secret);
        expect(text).not.toContain(secret);
      }
    });

    if (existsSync(join(root, dir, 'expected.txt'))) {
      it('renders the expected text', () => {
        const result = diffConnections(from, to, options);
        const expected = readFileSync(join(root, dir, 'expected.txt'), 'utf8').trimEnd();
        // As the command shows them: the type beside each name (a removed one's from the `to` side).
        const typeOf = (name: string) =>
          (from.find((c) => c.name === name) ?? to.find((c) => c.name === name))?.type;
        expect(renderDiffText(result, { typeOf }).join('\n')).toBe(expected);
      });
    }
  });

  it('the secret scenarios do hold secrets (so the leak check can fail)', () => {
    for (const dir of ['005-changed-secret', '006-masked-side']) {
      const { from, to, raw } = load(dir);
      expect(collectSecrets(from, to, raw).size).toBeGreaterThanOrEqual(3);
    }
  });
});
