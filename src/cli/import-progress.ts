/** The progress bar of `import` (and of the changes it makes) on stderr. */
import cliProgress from 'cli-progress';
import type { ChangeOutcome } from '../importer/converge-run.js';
import type { EntryOutcome } from '../importer/run.js';
import type { CliContext } from './context.js';

/**
 * A progress bar on stderr, on a TTY only. Its line is cleared when it stops (the summary or the error
 * line follows on a clean line), and it stops at once on Ctrl-C, before anything else is printed: a bar
 * still redrawing would overwrite the lines below it.
 */
export function createProgress(ctx: CliContext, total: number) {
  if (!ctx.out.showProgress || total === 0 || ctx.signal.aborted) return undefined;
  const bar = new cliProgress.SingleBar(
    {
      stream: ctx.io.stderr as NodeJS.WritableStream as never,
      format: 'import |{bar}| {value}/{total} | {speed} req/s | ETA {eta_formatted} | failed {failed}',
      hideCursor: true,
      clearOnComplete: true,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    ctx.signal.removeEventListener('abort', stop);
    bar.stop();
  };
  const started = Date.now();
  let failed = 0;
  bar.start(total, 0, { speed: '0.0', failed: 0 });
  // After start: a stop before the bar's first frame is done would be a no-op and leave it drawing.
  // An abort that came while it started is handled by the run's own end ('run-ended').
  ctx.signal.addEventListener('abort', stop);
  return {
    tick(outcome: EntryOutcome | ChangeOutcome) {
      if (outcome.kind === 'failed') failed += 1;
      if (stopped) return;
      const done = bar.getProgress() * total + 1;
      const speed = (done / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(1);
      bar.increment(1, { speed, failed });
    },
    stop,
  };
}
