import { type ClientFactory, type EnvironmentResolver, withClient } from '../api/client-factory.js';
import { exportConnections } from '../api/connections.js';
import { createRetryBudget } from '../api/retry-policy.js';
import { listScanProfiles } from '../api/scan-profiles.js';
import { nameDataSources } from '../diff/scan-profiles.js';
import { checkWritableOutput, writeFileAtomic } from '../files.js';
import { EMPTY_OVERRIDES, loadOverrides, resolveOverrides } from '../importer/overrides.js';
import type { Connection } from '../model/connection.js';
import { loadShippedCatalog } from '../schema/catalog.js';
import { registerSecretsOf, scrub } from '../secrets.js';
import { indexSnapshot } from '../snapshot/read.js';
import { type Clock, createRateLimiter } from '../sync/throttle.js';
import { createConnectionVerifier } from './connections.js';
import { applyVerifyOverrides } from './overrides.js';
import { type ProfileSide, verifyProfiles } from './profiles.js';
import { DEFAULT_TEST_CONCURRENCY, DEFAULT_TEST_RATE, runConnectionTests } from './test-connections.js';
import {
  countStates,
  countTests,
  isComplete,
  isVerified,
  type TestCounts,
  type TestVerdict,
  type VerifyCounts,
  type VerifyItem,
} from './verdict.js';

/** A connection test's idle timeout: the service reaches the data source. */
export const TEST_TIMEOUT_MS = 120_000;

/** The options of a verify, checked; paths absolute. */
export interface VerifyOptions {
  readonly snapshot: string;
  /** As typed. */
  readonly snapshotLabel: string;
  readonly testConnections: boolean;
  /** `--rate`; default the lower of the environment's rate and {@link DEFAULT_TEST_RATE}. */
  readonly rate: number | undefined;
  readonly report: string | undefined;
  readonly ignoreFields: readonly string[];
  /** Template schemas folder whose x-secret fields are masked; default the shipped one. */
  readonly schemas: string | undefined;
  /** The import's `--overrides` file: fields it sets are compared with its values. */
  readonly overrides?: string | undefined;
}

/** The outside world of {@link verifyEnvironment}. */
export interface VerifyPorts {
  readonly resolveEnvironment: EnvironmentResolver;
  readonly createClient: ClientFactory;
  readonly signal: AbortSignal;
  /** The tests' throttle clock; default the system clock. */
  readonly clock?: Clock;
  /** Where `${env:NAME}` placeholders of `--overrides` are read; default none (left as written). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export type VerifyEvent =
  | {
      readonly kind: 'sides-read';
      readonly snapshot: { readonly label: string; readonly connections: number };
      readonly environment: { readonly label: string; readonly connections: number };
    }
  | {
      readonly kind: 'tests-started';
      readonly total: number;
      readonly concurrency: number;
      readonly rate: number | undefined;
    }
  | { readonly kind: 'test-settled'; readonly name: string; readonly verdict: TestVerdict }
  /** The tests ended, also when the run throws. */
  | { readonly kind: 'tests-ended' }
  | { readonly kind: 'file-written'; readonly file: 'report'; readonly path: string };

export interface VerifyResult {
  readonly snapshot: string;
  readonly environment: string;
  /** Connections, then scan profiles, each in name order. */
  readonly items: readonly VerifyItem[];
  readonly connections: VerifyCounts;
  /** Undefined when the snapshot holds no scan profiles. */
  readonly scanProfiles: VerifyCounts | undefined;
  /** Undefined without `--test-connections`. */
  readonly tests: TestCounts | undefined;
  readonly complete: boolean;
  /** Complete and no regression: exit 0. */
  readonly verified: boolean;
  readonly reportPath: string | undefined;
}

/** Is the environment a working restore of the snapshot? Read-only but for tests; the snapshot read first. */
export async function verifyEnvironment(
  options: VerifyOptions,
  ports: VerifyPorts,
  onEvent: (event: VerifyEvent) => void,
): Promise<VerifyResult> {
  const catalog = await loadShippedCatalog(options.schemas);
  const secretFields = (type: string) => catalog.secretFields(type);
  const verifier = createConnectionVerifier(
    { ignoreFields: options.ignoreFields, secretFields },
    options.testConnections,
  );
  // Placeholders resolved as the import resolved them; an unset one only matters for a field compared.
  const overrides =
    options.overrides === undefined
      ? EMPTY_OVERRIDES
      : resolveOverrides(await loadOverrides(options.overrides), ports.env ?? {});
  // A snapshot connection is reread when its twin arrives; its clear text is registered for scrubbing first.
  const asCompared = (entry: Connection): Connection => {
    const secrets = secretFields(entry.type);
    registerSecretsOf(entry, secrets);
    return applyVerifyOverrides(entry, overrides, secrets);
  };
  const snapshot = await indexSnapshot(
    options.snapshot,
    ({ entry, place }, file) => verifier.expect(entry, () => asCompared(file.reread(place))),
    { signal: ports.signal, label: options.snapshotLabel },
  );
  try {
    if (options.report !== undefined)
      await checkWritableOutput(options.report, '--report', [options.snapshot]);

    // None for a version 1 snapshot (migrated to `include: ["connections"]`) or an export unable to read them.
    const holdsProfiles = snapshot.verified.header.include.includes('scanProfiles');
    const expectedProfiles: ProfileSide[] | undefined = holdsProfiles
      ? snapshot.profiles.map((p) => ({ profile: p.scanProfile, dataSourceNames: p.dataSourceNames }))
      : undefined;
    const { environment, liveProfiles } = await withClient(ports, async (client, environment) => {
      for await (const actual of exportConnections(client, { signal: ports.signal })) {
        registerSecretsOf(actual, secretFields(actual.type));
        verifier.add(actual);
      }
      const liveProfiles =
        expectedProfiles === undefined
          ? []
          : await listScanProfiles(client, { signal: ports.signal, ifServed: true });
      return { environment, liveProfiles };
    });
    const { items: connectionItems, present, nameById, counts } = verifier.finish();
    onEvent({
      kind: 'sides-read',
      snapshot: { label: options.snapshotLabel, connections: counts.snapshot },
      environment: { label: environment.label, connections: counts.environment },
    });

    let verdicts: Map<string, TestVerdict> | undefined;
    if (options.testConnections) {
      const rate = options.rate ?? Math.min(DEFAULT_TEST_RATE, environment.rate ?? DEFAULT_TEST_RATE);
      const concurrency = Math.min(
        DEFAULT_TEST_CONCURRENCY,
        environment.concurrency ?? DEFAULT_TEST_CONCURRENCY,
      );
      const limiter = createRateLimiter({ rate, ...(ports.clock ? { clock: ports.clock } : {}) });
      // Their own retry budget: a sick test endpoint ends the tests, not the reads.
      const budget = createRetryBudget(Math.max(10, Math.ceil(present.length / 10)));
      const testClient = ports.createClient(environment, {
        retryBudget: budget,
        onRateLimited: (ms) => limiter.onRateLimited(ms),
        timeoutMs: TEST_TIMEOUT_MS,
      });
      onEvent({ kind: 'tests-started', total: present.length, concurrency, rate: limiter.currentRate() });
      try {
        verdicts = await runConnectionTests(present, {
          client: testClient,
          limiter,
          concurrency,
          signal: ports.signal,
          onSettled: (name, verdict) => onEvent({ kind: 'test-settled', name, verdict }),
        });
      } finally {
        onEvent({ kind: 'tests-ended' });
        testClient.close();
      }
    }

    const profileItems =
      expectedProfiles === undefined
        ? undefined
        : verifyProfiles(
            expectedProfiles,
            liveProfiles.map((profile) => ({ profile, dataSourceNames: nameDataSources(profile, nameById) })),
          );
    const items: VerifyItem[] = [
      ...connectionItems.map((item) => {
        const test = verdicts?.get(item.name);
        return test === undefined ? item : { ...item, test };
      }),
      ...(profileItems ?? []),
    ];
    if (options.report !== undefined) {
      const lines = items.map((item) => `${JSON.stringify(item)}\n`).join('');
      await writeFileAtomic(options.report, scrub(lines), { what: 'report' });
      onEvent({ kind: 'file-written', file: 'report', path: options.report });
    }
    return {
      snapshot: options.snapshotLabel,
      environment: environment.label,
      items,
      connections: countStates(items.filter((i) => i.object === 'connection')),
      scanProfiles: profileItems === undefined ? undefined : countStates(profileItems),
      tests: verdicts === undefined ? undefined : countTests(items),
      complete: isComplete(items),
      verified: isVerified(items),
      reportPath: options.report,
    };
  } finally {
    snapshot.file.close();
  }
}
