/**
 * The house rules of shared/style.md that a grep can check: one seam per third-party library, a pure
 * core, and an emulator that shares no code with the client. A violation names the file and the import.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
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
});

describe('a pure core', () => {
  const impure =
    /^(node:)?(fs|fs\/promises|http|https|net|child_process)$|^axios|^pino|\/log\.js$|\/api\/(?!types\.js$)/;
  it('src/diff/ and src/importer/plan.ts import no fs, HTTP or logger (types of src/api are fine)', () => {
    expect(offenders(impure, (f) => !(f.startsWith('src/diff/') || f === 'src/importer/plan.ts'))).toEqual(
      [],
    );
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
