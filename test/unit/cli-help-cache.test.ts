/**
 * The CLI turns off yargs' help cache (src/cli/run-cli.ts, skipHelpCache): these tests fail if the
 * installed yargs no longer renders the help after starting a handler in the way that is turned off,
 * and check that help and parse errors still show the help text.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { runCli, skipHelpCache } from '../../src/cli/run-cli.js';

/** A yargs parser with one command; how many times the handler ran, and whether help was cached after. */
async function runCommand(skip: boolean): Promise<{ ran: number; cached: boolean; skipped: boolean }> {
  let ran = 0;
  const parser = yargs(['go'])
    .exitProcess(false)
    .command('go', 'go somewhere', {}, async () => {
      ran += 1;
    });
  const skipped = skip ? skipHelpCache(parser) : false;
  await parser.parseAsync(['go'], {}, () => undefined);
  const usage = (
    parser as unknown as { getInternalMethods(): { getUsageInstance(): { hasCachedHelpMessage(): boolean } } }
  )
    .getInternalMethods()
    .getUsageInstance();
  return { ran, cached: usage.hasCachedHelpMessage(), skipped };
}

function collect(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

describe('yargs help cache', () => {
  it('is filled after a command handler starts, unless turned off', async () => {
    expect(await runCommand(false)).toEqual({ ran: 1, cached: true, skipped: false });
    expect(await runCommand(true)).toEqual({ ran: 1, cached: false, skipped: true });
  });

  it('turned off, --help and a parse error still show the help text', async () => {
    const out = collect();
    const err = collect();
    const io = { stdout: out.stream, stderr: err.stream, env: {}, cwd: process.cwd() };
    expect(await runCli(['validate', '--help'], io)).toBe(0);
    expect(out.text()).toMatch(/dds-migrate validate/);
    const err2 = collect();
    const code = await runCli(['nosuchcommand'], { ...io, stderr: err2.stream });
    expect(code).toBe(2);
    // The list of commands is read from the help text the .fail handler lays out.
    expect(err2.text()).toMatch(/expected one of connections, export, validate/);
  });
});
