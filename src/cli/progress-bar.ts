/**
 * A progress bar on stderr (cli-progress), for a TTY only. Its line is cleared when it stops (what
 * follows starts on a clean line), and it stops at once on Ctrl-C, before anything else is printed: a
 * bar still redrawing would overwrite the lines below it.
 */
import cliProgress from 'cli-progress';
import type { CliContext } from './context.js';

/** A started bar: `update` moves it (a no-op once stopped); `stop` is idempotent. */
export interface StderrBar {
  update(value: number, payload: Record<string, unknown>): void;
  stop(): void;
}

/**
 * Start a bar of `total` steps with `format` (cli-progress tokens) and the initial `payload`, or
 * undefined when no bar is shown (not a TTY, `--no-progress`, nothing to do, already interrupted).
 */
export function startStderrBar(
  ctx: CliContext,
  total: number,
  format: string,
  payload: Record<string, unknown>,
  etaBuffer: number,
): StderrBar | undefined {
  if (!ctx.out.showProgress || total === 0 || ctx.signal.aborted) return undefined;
  const bar = new cliProgress.SingleBar(
    {
      stream: ctx.io.stderr as NodeJS.WritableStream as never,
      format,
      hideCursor: true,
      clearOnComplete: true,
      etaBuffer,
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
  bar.start(total, 0, payload);
  // After start: a stop before the bar's first frame is done would be a no-op and leave it drawing.
  // An abort that came while it started is handled by the run's own end.
  ctx.signal.addEventListener('abort', stop);
  return {
    update(value, next) {
      if (!stopped) bar.update(value, next);
    },
    stop,
  };
}
