/** The environment options (`--env`, `--from`, `--to`, their token files, TLS) and the run's environments. */
import type { Argv } from 'yargs';
import { type EnvironmentRole, type ResolvedEnvironment, TOKEN_VARIABLES } from '../config.js';
import { openRunEnvironments, type RunEnvironments } from '../environments/run-environments.js';
import { UsageError } from '../errors.js';
import type { ParsedArgs } from './command.js';
import type { CliContext } from './context.js';
import { booleanOption, readStringOption, stringOption } from './options.js';

type EnvironmentSide = 'env' | 'from' | 'to';

const ROLE_OF: Readonly<Record<EnvironmentSide, EnvironmentRole>> = {
  env: 'single',
  from: 'source',
  to: 'target',
};

const SIDE_DESCRIPTION: Readonly<Record<EnvironmentSide, string>> = {
  env: 'Environment: a name from the config file or a base URL https://host[:port]',
  from: 'Source environment: a config name or a base URL',
  to: 'Target environment: a config name or a base URL',
};

const tokenFileOption = (side: EnvironmentSide) => (side === 'env' ? 'token-file' : `${side}-token-file`);

/** Add the environment options of `sides` (each required unless `optional`). */
export function withEnvironmentOptions(
  yargs: Argv,
  sides: readonly EnvironmentSide[],
  options: { readonly optional?: boolean; readonly describe?: Partial<Record<EnvironmentSide, string>> } = {},
): Argv {
  let y = yargs;
  for (const side of sides) {
    const variable = TOKEN_VARIABLES[ROLE_OF[side]][0];
    y = y.options({
      [side]: stringOption(options.describe?.[side] ?? SIDE_DESCRIPTION[side], {
        demandOption: options.optional !== true,
      }),
      [tokenFileOption(side)]: stringOption(
        `Read the token of --${side} from this file (instead of ${variable} or tokenEnv)`,
      ),
    });
  }
  return y.options(CONNECTION_OPTIONS);
}

/** How to reach a service at all (`validate --templates-from` declares them too). */
export const CONNECTION_OPTIONS = {
  'insecure-http': booleanOption('Allow plain http to a non-loopback host (the token travels unencrypted)'),
  'ca-file': stringOption('Extra trusted CA certificate (PEM)'),
};

const runs = new WeakMap<CliContext, RunEnvironments>();

/** The environments of the run of `ctx` (one per run: config read once, one retry budget). */
export function runEnvironments(ctx: CliContext): RunEnvironments {
  let environments = runs.get(ctx);
  if (!environments) {
    environments = openRunEnvironments({
      configPath: ctx.globals.config,
      io: ctx.io,
      log: ctx.log,
      signal: ctx.signal,
    });
    runs.set(ctx, environments);
  }
  return environments;
}

/** Resolve the environment of `--env`, `--from` or `--to`. */
export async function resolveSide(
  ctx: CliContext,
  args: ParsedArgs,
  side: EnvironmentSide,
): Promise<ResolvedEnvironment> {
  const ref = readStringOption(args, side);
  if (ref === undefined) throw new UsageError(`Missing --${side}`, { hint: 'See --help' });
  const tokenFile = readStringOption(args, tokenFileOption(side));
  const caFile = readStringOption(args, 'ca-file');
  const environment = await runEnvironments(ctx).resolve({
    ref,
    role: ROLE_OF[side],
    ...(tokenFile === undefined ? {} : { tokenFile }),
    ...(caFile === undefined ? {} : { caFile }),
    insecureHttp: args.insecureHttp === true,
  });
  if (environment.insecureHttp) {
    ctx.out.warn(
      `--insecure-http: talking to ${environment.label} over plain http; the token travels unencrypted`,
    );
  }
  return environment;
}

/** What every workflow is handed: the run's HTTP clients, its variables, logger and Ctrl-C signal. */
export function runPorts(ctx: CliContext) {
  const { createClient } = runEnvironments(ctx);
  return { createClient, env: ctx.io.env, log: ctx.log, signal: ctx.signal };
}

/** The ports of a workflow on the environment of `--env`. */
export function envPorts(ctx: CliContext, args: ParsedArgs) {
  return { resolveEnvironment: () => resolveSide(ctx, args, 'env'), ...runPorts(ctx) };
}
