/**
 * The house rules of shared/style.md that a grep can check: the direction of imports between layers,
 * one seam per third-party library, a pure core, and an emulator that shares no code with the client.
 * A violation names the file and the import.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

/** Every module specifier a file imports (static `import`/`export ... from` and dynamic `import()`). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/g))
    found.push(match[1]!);
  for (const match of text.matchAll(/import\(\s*'([^']+)'\s*\)/g)) found.push(match[1]!);
  return found;
}

const files = sourceFiles('src');

/** Files (other than `allowed`) that import a specifier matching `pattern`, as `file -> specifier`. */
function offenders(pattern: RegExp, allowed: (file: string) => boolean): string[] {
  return files
    .filter((file) => !allowed(file))
    .flatMap((file) =>
      importsOf(file)
        .filter((spec) => pattern.test(spec))
        .map((spec) => `${file} -> ${spec}`),
    );
}

describe('one seam per third-party library', () => {
  it('axios only in src/api/http.ts', () => {
    expect(offenders(/^axios/, (f) => f === 'src/api/http.ts')).toEqual([]);
  });
  it('pino only in src/log.ts', () => {
    expect(offenders(/^pino/, (f) => f === 'src/log.ts')).toEqual([]);
  });
  it('ajv only in src/schema/', () => {
    expect(offenders(/^ajv/, (f) => f.startsWith('src/schema/'))).toEqual([]);
  });
  it('yargs only in src/cli/', () => {
    expect(offenders(/^yargs/, (f) => f.startsWith('src/cli/'))).toEqual([]);
  });
  it('age-encryption only in src/snapshot/age.ts', () => {
    expect(offenders(/^age-encryption/, (f) => f === 'src/snapshot/age.ts')).toEqual([]);
  });
});

describe('a pure core', () => {
  const impure =
    /^(node:)?(fs|fs\/promises|http|https|net|child_process)$|^axios|^pino|\/log\.js$|\/api\/(?!types\.js$)/;
  it('src/diff/ and src/sync/plan.ts import no fs, HTTP or logger (types of src/api are fine)', () => {
    const pure = (f: string) => f.startsWith('src/diff/') || f === 'src/sync/plan.ts';
    expect(offenders(impure, (f) => !pure(f))).toEqual([]);
  });
});

describe('the CLI prints and reads its options; the I/O happens below it', () => {
  const cliFiles = files.filter((f) => f.startsWith('src/cli/'));
  it('no file under src/cli/ imports fs, HTTP, sockets or child processes', () => {
    const io = /^(node:)?(fs|fs\/promises|http|https|net|tls|child_process)$|^axios/;
    expect(offenders(io, (f) => !f.startsWith('src/cli/'))).toEqual([]);
  });
  it('nor calls the config loader, the token readers or the HTTP client factory (src/environments/ does)', () => {
    const calls = cliFiles.flatMap((file) =>
      [
        ...readFileSync(join(root, file), 'utf8').matchAll(
          /\b(loadConfig|resolveEnvironment|createHttpClient|classifySide)\(/g,
        ),
      ].map((m) => `${file}: ${m[1]}(`),
    );
    expect(calls).toEqual([]);
  });
});

describe('the emulator is an independent reading of the spec', () => {
  it('imports nothing of the client or the rest of the tool', () => {
    const outside = files
      .filter((f) => f.startsWith('src/emulator/'))
      .flatMap((file) =>
        importsOf(file)
          .filter((spec) => spec.startsWith('.') && !spec.startsWith('./'))
          .map((spec) => `${file} -> ${spec}`),
      );
    expect(outside).toEqual([]);
  });
});

describe('only the entry point exits the process', () => {
  it('process.exit appears in src/cli/main.ts only', () => {
    const callers = files.filter(
      (f) => f !== 'src/cli/main.ts' && /process\.exit\(/.test(readFileSync(join(root, f), 'utf8')),
    );
    expect(callers).toEqual([]);
  });
});

/**
 * The layers, lowest first: `model <- base <- api | snapshot | schema | diff <- workflows <- cli`. A file
 * may import its own layer and the layers below it, never above. Each `src/` file belongs to exactly one
 * layer (a file of none fails the test, so a new folder is placed deliberately). ARCHITECTURE.md shows the
 * same table.
 */
const LAYERS = ['model', 'base', 'core', 'workflow', 'cli', 'entry'] as const;
type Layer = (typeof LAYERS)[number];

/** The base every layer may use: small shared modules, no HTTP. */
const BASE_FILES = new Set([
  'src/errors.ts',
  'src/log.ts',
  'src/log-levels.ts',
  'src/config.ts',
  'src/files.ts',
  'src/secrets.ts',
  'src/list-values.ts',
  'src/display-name.ts',
  'src/closest.ts',
  'src/detach-string.ts',
  'src/bounded-memo.ts',
  'src/paths.ts',
  'src/protected.ts',
  'src/own-property.ts',
  'src/json-depth.ts',
  'src/version.ts',
  'src/markdown.ts',
  // The ajv seam: config.ts checks the config file with it, so it sits with the base.
  'src/schema/ajv.ts',
  // The retry policy is data (it imports only errors.ts, where the transient statuses are defined).
  'src/api/retry-policy.ts',
]);
const BASE_FOLDERS = ['src/connections/'];
/** The core: the API client, the snapshot format, template schemas, the pure diff. */
const CORE_FOLDERS = ['src/api/', 'src/snapshot/', 'src/schema/', 'src/diff/'];
/** One entry function per command, below cli/. */
const WORKFLOW_FOLDERS = [
  'src/importer/',
  'src/export/',
  'src/diff-workflow/',
  'src/validate/',
  'src/listing/',
  'src/profiles/',
  'src/cases/',
  'src/verify/',
  'src/sync/',
  'src/overrides/',
  // The run's environments (config, tokens, HTTP clients): the ports the CLI hands to the workflows.
  'src/environments/',
];
/**
 * Within the core, which sibling each folder may import: schema/ reads snapshots (validate); no core
 * folder but api/ itself imports api/ (templates reach schema/ as data, fetched by a workflow).
 */
const CORE_SIBLINGS: Readonly<Record<string, readonly string[]>> = {
  'src/api/': [],
  'src/snapshot/': [],
  'src/schema/': ['src/snapshot/'],
  'src/diff/': [],
};

/** The layer of a `src/` file; undefined for the emulator (checked on its own) and for unplaced files. */
function layerOf(file: string): Layer | undefined {
  if (file.startsWith('src/model/')) return 'model';
  if (BASE_FILES.has(file) || BASE_FOLDERS.some((d) => file.startsWith(d))) return 'base';
  if (CORE_FOLDERS.some((d) => file.startsWith(d))) return 'core';
  if (WORKFLOW_FOLDERS.some((d) => file.startsWith(d))) return 'workflow';
  if (file.startsWith('src/cli/')) return 'cli';
  // The demo drives the CLI in-process, as a user would: the one module above cli/.
  if (file.startsWith('src/demo/')) return 'entry';
  return undefined;
}

/** The core folder of a file, if it is in the core. */
function coreFolderOf(file: string): string | undefined {
  return layerOf(file) === 'core' ? CORE_FOLDERS.find((d) => file.startsWith(d)) : undefined;
}

/** The `src/` file a relative specifier names (`../api/http.js` from `src/schema/x.ts` -> `src/api/http.ts`). */
function resolveSpecifier(file: string, spec: string): string {
  return posix.join(posix.dirname(file), spec).replace(/\.js$/, '.ts');
}

/** The wrong-way imports among `imports` (file -> its specifiers), as `file -> specifier (why)`. */
function findLayerViolations(imports: ReadonlyMap<string, readonly string[]>): string[] {
  const violations: string[] = [];
  for (const [file, specs] of imports) {
    const from = layerOf(file);
    if (from === undefined) continue;
    for (const spec of specs) {
      if (!spec.startsWith('.')) {
        if (from === 'model') violations.push(`${file} -> ${spec} (model/ imports nothing)`);
        continue;
      }
      const target = resolveSpecifier(file, spec);
      const to = layerOf(target);
      if (to === undefined) {
        // The emulator is started by `dds-migrate emulator` and by the demo, nothing else.
        const startsEmulator = target.startsWith('src/emulator/') && (from === 'cli' || from === 'entry');
        if (!startsEmulator) violations.push(`${file} -> ${spec} (${target} is in no layer)`);
        continue;
      }
      if (LAYERS.indexOf(to) > LAYERS.indexOf(from)) {
        violations.push(`${file} -> ${spec} (${from} must not import ${to})`);
        continue;
      }
      const fromCore = coreFolderOf(file);
      const toCore = coreFolderOf(target);
      if (fromCore && toCore && fromCore !== toCore && !CORE_SIBLINGS[fromCore]?.includes(toCore)) {
        violations.push(`${file} -> ${spec} (${fromCore} must not import ${toCore})`);
      }
    }
  }
  return violations.sort();
}

describe('layers: model <- base <- api | snapshot | schema | diff <- workflows <- cli', () => {
  it('places every source file outside the emulator in a layer', () => {
    expect(files.filter((f) => !f.startsWith('src/emulator/') && layerOf(f) === undefined)).toEqual([]);
  });

  it('has no wrong-way import', () => {
    expect(findLayerViolations(new Map(files.map((f) => [f, importsOf(f)])))).toEqual([]);
  });

  it('nothing outside src/cli/ imports src/cli/, but the demo that drives it', () => {
    expect(
      offenders(/(^|\/)cli\//, (f) => f.startsWith('src/cli/') || f.startsWith('src/demo/')).filter(
        (o) => !o.includes('/emulator/'),
      ),
    ).toEqual([]);
  });

  it('reports a wrong-way import (the check can fail)', () => {
    const planted = new Map<string, readonly string[]>([
      ['src/snapshot/read.ts', ['../api/http.js', '../model/connection.js']],
      ['src/schema/catalog.ts', ['../api/templates.js', '../snapshot/read.js']],
      ['src/config.ts', ['./cli/context.js']],
      ['src/model/connection.ts', ['../errors.js']],
      ['src/diff/compare.ts', ['../importer/plan.js']],
    ]);
    expect(findLayerViolations(planted)).toEqual([
      'src/config.ts -> ./cli/context.js (base must not import cli)',
      'src/diff/compare.ts -> ../importer/plan.js (core must not import workflow)',
      'src/model/connection.ts -> ../errors.js (model must not import base)',
      'src/schema/catalog.ts -> ../api/templates.js (src/schema/ must not import src/api/)',
      'src/snapshot/read.ts -> ../api/http.js (src/snapshot/ must not import src/api/)',
    ]);
  });
});
