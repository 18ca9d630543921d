// The build's step after tsc: the shipped template schemas compiled ahead (src/schema/precompiled.ts).
import { shippedConnectionSchemaPath, shippedTemplatesDir } from '../dist/src/schema/catalog.js';
import { writeShippedValidators } from '../dist/src/schema/precompiled.js';

await writeShippedValidators(shippedTemplatesDir(), shippedConnectionSchemaPath());
