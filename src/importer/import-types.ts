/**
 * The import's options, ports, events and result: what `cli/import.ts` hands to and gets back from
 * {@link importSnapshot} (`import-snapshot.ts`).
 */
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
  /** Delete target connections (and, when the snapshot includes them, scan profiles) the snapshot does not hold (within `only`). */
  readonly prune?: boolean;
  readonly overrides: string | undefined;
  /** `--only` and `--type`: the connections and scan profiles the import considers; undefined = all. */
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
  /** `--allow-run`: one-time scan profiles are created (each starts a scan); default skipped. */
  readonly allowRun?: boolean;
  /** How an existing scan profile is handled; default `onConflict` (`update` compares and PUTs). */
  readonly profileOnConflict?: OnConflict;
}

/** The outside world of {@link importSnapshot}. */
export interface ImportPorts {
  /** Resolves the target environment (config, token); called once the snapshot and overrides are read. */
  readonly resolveTarget: EnvironmentResolver;
  readonly createClient: ClientFactory;
  /** The variables `${env:NAME}` in the overrides reads. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: Logger;
  /** Ctrl-C: stop starting requests. */
  readonly signal: AbortSignal;
  /** The throttle's and the runner's clock; default the system clock. */
  readonly clock?: Clock;
}

/** What the overrides would remove from one entry (JSON pointers). */
export interface OverrideRemoval {
  readonly entry: string;
  readonly paths: readonly string[];
}

/** Progress and warnings of an import, in the order they happen. */
export type ImportEvent =
  /** An overrides rule that matches no entry of the snapshot (e.g. `byName.x`). */
  | { readonly kind: 'unused-override'; readonly rule: string }
  /** The overrides would remove these parts of these entries (JSON pointers): never silently. */
  | { readonly kind: 'override-removes'; readonly removals: readonly OverrideRemoval[] }
  /** Template warnings found while planning, one of each line (`formatWarning`), to group by message. */
  | { readonly kind: 'template-warnings'; readonly warnings: readonly Problem[] }
  /** References not checkable in the target, source-environment ids dropped: one line per kind. */
  | { readonly kind: 'reference-warnings'; readonly messages: readonly string[] }
  /**
   * The journal holds an interrupted run of this import, which this one finishes: `done` entries were
   * written by it, `inDoubt` were sent with no recorded outcome (looked up by name before anything is
   * sent again).
   */
  | {
      readonly kind: 'resuming';
      readonly run: number;
      readonly done: number;
      readonly inDoubt: number;
      readonly total: number;
    }
  /** The sends begin. */
  | {
      readonly kind: 'run-started';
      /** The run's number in the journal (`runs JOURNAL` lists them; `undo` takes them back). */
      readonly run: number;
      readonly target: string;
      readonly sends: number;
      readonly total: number;
      readonly concurrency: number;
      readonly rate: number | undefined;
      readonly journal: string;
    }
  /** One write settled (applied or failed). */
  | { readonly kind: 'write-settled'; readonly outcome: WriteOutcome }
  /** The sends ended, also when the run throws. */
  | { readonly kind: 'run-ended' }
  /** A later kind's writes begin (after the kinds before it): `label` names one of its objects. */
  | { readonly kind: 'kind-started'; readonly label: string; readonly target: string; readonly sends: number }
  /** An output file was written. */
  | { readonly kind: 'file-written'; readonly file: 'report' | 'id-map'; readonly path: string };

/** What an import did. */
export type ImportResult =
  | (KindPlans & {
      readonly kind: 'dry-run';
      readonly target: string;
      readonly entryCount: number;
      /** The pre-flight's problems; non-empty means a real run would be refused. */
      readonly problems: readonly Problem[];
      /**
       * The target is protected and the real run will need `--confirm <this name>` (undefined when it
       * needs none, or was given the right one). The dry run itself writes nothing, so it is not refused.
       */
      readonly confirmRequired: string | undefined;
    })
  | (KindRuns & {
      readonly kind: 'ran';
      readonly target: string;
      readonly rateLimited: number;
      readonly journal: string;
      /**
       * The run this import wrote (or finished); undefined when the target already matched the snapshot
       * and nothing was written (up to date).
       */
      readonly run: number | undefined;
      readonly reportPath: string | undefined;
      readonly idMapPath: string | undefined;
      /** Why the run stopped early (auth, Ctrl-C, a sick service); the caller throws it after rendering. */
      readonly stoppedBy: DdsError | undefined;
    });
