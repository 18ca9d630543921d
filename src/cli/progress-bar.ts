/** A progress bar on stderr (cli-progress) counting settled items, the failed ones and their rate. */
import { createRequire } from 'node:module';
import type cliProgress from 'cli-progress';
import type { CliContext } from './context.js';

// Loaded when a bar is shown: a run without one does not pay its memory.
const requireModule = createRequire(import.meta.url);

/** A started bar: `tick` counts one settled item; `stop` is idempotent. */
export interface CountingBar {
  tick(failed: boolean): void;
  stop(): void;
}

/** Start a bar of `total` items, or undefined when none is shown (not a TTY, nothing to do, aborted). */
export function startCountingBar(
  ctx: CliContext,
  total: number,
  format: string,
  etaBuffer: number,
): CountingBar | undefined {
  if (!ctx.out.showProgress || total === 0 || ctx.signal.aborted) return undefined;
  const { SingleBar, Presets } = requireModule('cli-progress') as typeof cliProgress;
  const bar = new SingleBar(
    {
      stream: ctx.io.stderr as NodeJS.WritableStream as never,
      format,
      hideCursor: true,
      clearOnComplete: true,
      etaBuffer,
    },
    Presets.shades_classic,
  );
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    ctx.signal.removeEventListener('abort', stop);
    bar.stop();
  };
  bar.start(total, 0, { speed: '0.0', failed: 0 });
  // Stopped at once on Ctrl-C (a redraw would overwrite lines below), after start: a stop before is a no-op.
  ctx.signal.addEventListener('abort', stop);
  const started = Date.now();
  let done = 0;
  let failed = 0;
  return {
    tick(failure) {
      if (stopped) return;
      done += 1;
      if (failure) failed += 1;
      const speed = (done / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(1);
      bar.update(done, { speed, failed });
    },
    stop,
  };
}
