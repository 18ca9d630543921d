/** `dds-migrate profiles get ID --env E`: one scan profile as JSON on stdout. */
import { getScanProfile } from '../api/scan-profiles.js';
import { ApiError, ExitCode, UsageError } from '../errors.js';
import type { CommandSpec } from './command.js';
import { openEnvironment, withEnvironmentOptions } from './environment.js';

/** `profiles get`. */
export const profilesGetCommand: CommandSpec = {
  command: 'get <id>',
  describe: 'Print one scan profile as JSON',
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['env'])
      .positional('id', { type: 'string', describe: 'The profile _id (as printed by profiles create)' })
      .example(
        '$0 profiles get 65a1f0c2a1d3e4f5a6b7c8d9 --env prod > weekly-pii.json',
        'Save a profile (edit it, then profiles create --file)',
      ),
  async run(args, ctx) {
    const id = typeof args.id === 'string' ? args.id.trim() : '';
    if (id === '') throw new UsageError('Expected a scan profile id, got an empty one');
    const { client } = await openEnvironment(ctx, args, 'env');
    try {
      const profile = await getScanProfile(client, id);
      ctx.out.json(profile);
      return ExitCode.ok;
    } catch (error) {
      // 400 (malformed id) and 404 (unknown id) stay exit 1 with the service's words, plus what to do.
      if (error instanceof ApiError && (error.status === 400 || error.status === 404)) {
        throw new ApiError(error.http, {
          hint: `Check the profile id ${id} and the environment (--env)`,
          cause: error,
        });
      }
      throw error;
    } finally {
      client.close();
    }
  },
};
