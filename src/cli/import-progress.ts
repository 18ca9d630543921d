/** The progress bar of `import` (and of the changes it makes) on stderr. */
import type { WriteOutcome } from '../sync/execute.js';
import type { CliContext } from './context.js';
import { startStderrBar } from './progress-bar.js';

/** The import's bar (see {@link startStderrBar}): settled entries, their rate, the failures. */
export function createProgress(ctx: CliContext, total: number) {
  const bar = startStderrBar(
    ctx,
    total,
    'import |{bar}| {value}/{total} | {speed} req/s | ETA {eta_formatted} | failed {failed}',
    { speed: '0.0', failed: 0 },
    50,
  );
  if (bar === undefined) return undefined;
  const started = Date.now();
  let done = 0;
  let failed = 0;
  return {
    tick(outcome: WriteOutcome) {
      if (outcome.kind === 'failed') failed += 1;
      done += 1;
      const speed = (done / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(1);
      bar.update(done, { speed, failed });
    },
    stop: () => bar.stop(),
  };
}
