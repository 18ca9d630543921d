// The build's step after tsc: the shipped template schemas compiled ahead (src/schema/precompiled.ts),
// read as the catalog reads them.
import { namedSchemas, readSchemasFolder, shippedTemplatesDir } from '../dist/src/schema/catalog.js';
import { writeShippedValidators } from '../dist/src/schema/precompiled.js';

const { schemas, generic } = await readSchemasFolder(shippedTemplatesDir());
await writeShippedValidators(namedSchemas(schemas, generic));
