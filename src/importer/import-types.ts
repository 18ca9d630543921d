/** The import's options, ports, events and result (`import-snapshot.ts`). */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import type { DdsError, Problem } from '../errors.js';
import type { Logger } from '../log.js';
import type { WriteOutcome } from '../sync/execute.js';
import type { KindPlans, KindRuns } from '../sync/kind.js';
import type { OnConflict } from '../sync/plan.js';
import type { Clock } from '../sync/throttle.js';
import type { ImportSelection } from './selection.js';

/** Default concurrency when neither the options nor the environment's config set one. */
export const DEFAULT_IMPORT_CONCURRENCY = 4;

/** The import's options, checked once (by `cli/import.ts`); paths are absolute. */
export interface ImportOptions {
  readonly snapshot: string;
  readonly concurrency: number | undefined;
  readonly rate: number | undefined;
  readonly onConflict: OnConflict;
  readonly prune?: boolean;
  readonly overrides: string | undefined;
  /** `--only` and `--type`; undefined = all. */
  readonly only: ImportSelection | undefined;
  readonly maxChanges: number | undefined;
  readonly dryRun: boolean;
  readonly journal: string | undefined;
  readonly idMap: string | undefined;
  readonly report: string | undefined;
  readonly confirm: string | undefined;
  readonly allowSameSource: boolean;
  readonly schemas: string | undefined;
  readonly templatesFromTarget: boolean;
  /** `--allow-run`: one-time scan profiles are created (each starts a scan). */
  readonly allowRun?: boolean;
  /** How an existing scan profile is handled; default `onConflict`. */
  readonly profileOnConflict?: OnConflict;
}

/** The outside world of {@link importSnapshot}. */
export interface ImportPorts {
  /** Called once the snapshot and overrides are read. */
  readonly resolveTarget: EnvironmentResolver;
  readonly createClient: ClientFactory;
  /** What `${env:NAME}` in the overrides reads. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: Logger;
  /** Ctrl-C: stop starting requests. */
  readonly signal: AbortSignal;
  readonly clock?: Clock;
}

/** What the overrides would remove from one entry (JSON pointers). */
export interface OverrideRemoval {
  readonly entry: string;
  readonly paths: readonly string[];
}

/** Progress and warnings of an import, in the order they happen. */
export type ImportEvent =
  | { readonly kind: 'unused-override'; readonly rule: string }
  /** The overrides would remove these parts of these entries: never silently. */
  | { readonly kind: 'override-removes'; readonly removals: readonly OverrideRemoval[] }
  /** Template warnings found while planning, one of each line (`formatWarning`). */
  | { readonly kind: 'template-warnings'; readonly warnings: readonly Problem[] }
  /** References not checkable in the target, source-environment ids dropped: one line per kind. */
  | { readonly kind: 'reference-warnings'; readonly messages: readonly string[] }
  /** This import finishes an interrupted run: `inDoubt` writes are looked up by name first. */
  | {
      readonly kind: 'resuming';
      readonly run: number;
      readonly done: number;
      readonly inDoubt: number;
      readonly total: number;
    }
  | {
      readonly kind: 'run-started';
      readonly run: number;
      readonly target: string;
      readonly sends: number;
      readonly total: number;
      readonly concurrency: number;
      readonly rate: number | undefined;
      readonly journal: string;
    }
  | { readonly kind: 'write-settled'; readonly outcome: WriteOutcome }
  /** The sends ended, also when the run throws. */
  | { readonly kind: 'run-ended' }
  /** A later kind's writes begin: `label` names one of its objects. */
  | { readonly kind: 'kind-started'; readonly label: string; readonly target: string; readonly sends: number }
  | { readonly kind: 'file-written'; readonly file: 'report' | 'id-map'; readonly path: string };

/** What an import did. */
export type ImportResult =
  | (KindPlans & {
      readonly kind: 'dry-run';
      readonly target: string;
      readonly entryCount: number;
      /** Non-empty: a real run would be refused. */
      readonly problems: readonly Problem[];
      /** The name the real run needs with `--confirm` (undefined: none, or given). */
      readonly confirmRequired: string | undefined;
    })
  | (KindRuns & {
      readonly kind: 'ran';
      readonly target: string;
      readonly rateLimited: number;
      readonly journal: string;
      /** The run written or finished; undefined when nothing was written (up to date). */
      readonly run: number | undefined;
      readonly reportPath: string | undefined;
      readonly idMapPath: string | undefined;
      /** Why the run stopped early; the caller throws it after rendering. */
      readonly stoppedBy: DdsError | undefined;
    });
