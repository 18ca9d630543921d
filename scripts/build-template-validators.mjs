// The build's step after tsc: the shipped template schemas (schemas/templates and the generic
// schemas/connection.schema.json) compiled by ajv, with the settings a run compiles them with, into
// standalone validators (ajv's "standalone validation code"), written to
// dist/src/schema/precompiled-templates.js and keyed by each schema's digest. src/schema/precompiled.ts
// loads them; test/unit/precompiled-templates.test.ts checks that they answer as a run-time compile does.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createAjv } from '../dist/src/schema/ajv.js';
import {
  shippedConnectionSchemaPath,
  shippedTemplatesDir,
  TEMPLATE_SCHEMA_OPTIONS,
} from '../dist/src/schema/catalog.js';
import { PRECOMPILED_FILE, schemaDigest } from '../dist/src/schema/precompiled.js';

const standaloneCode = createRequire(import.meta.url)('ajv/dist/standalone').default;

const dir = shippedTemplatesDir();
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.schema.json'))
  .sort()
  .map((name) => join(dir, name));
files.push(shippedConnectionSchemaPath());

const ajv = createAjv({
  ...TEMPLATE_SCHEMA_OPTIONS,
  validateSchema: false,
  code: { ...TEMPLATE_SCHEMA_OPTIONS.code, source: true, esm: true },
});
const exported = {};
const byDigest = [];
files.forEach((file, i) => {
  const schema = JSON.parse(readFileSync(file, 'utf8'));
  ajv.addSchema(schema, `schema${i}`);
  exported[`template${i}`] = `schema${i}`;
  byDigest.push(`${JSON.stringify(schemaDigest(schema))}: template${i}`);
});

const code = [
  '// Written by scripts/build-template-validators.mjs: do not edit.',
  "import { createRequire } from 'node:module';",
  'const require = createRequire(import.meta.url);',
  standaloneCode(ajv, exported),
  `export const validators = { ${byDigest.join(', ')} };`,
  '',
].join('\n');
writeFileSync(new URL(`../dist/src/schema/${PRECOMPILED_FILE}`, import.meta.url), code);
