/**
 * The sources of a plan's send and update steps: each prepares its body from the snapshot entry when
 * it is loaded (sent), so a plan of many steps holds no bodies.
 */
import type { WritePayload } from '../sync/execute.js';
import type { ConvergeHelpers } from '../sync/kinds/connection/converge.js';
import type { PlanEntry, PreparedEntry } from '../sync/kinds/connection/kind.js';
import type { Source } from './source.js';

/**
 * A body prepared from its snapshot entry when loaded. A class, not a closure in the step: V8 gives an
 * object holding a distinct function value a shape of its own, and 100 000 shapes cost more memory
 * than the steps themselves.
 */
export class PreparedSource implements Source<WritePayload> {
  constructor(
    private readonly prepare: (entry: PlanEntry) => PreparedEntry,
    private readonly entry: PlanEntry,
    private readonly targetName: string,
  ) {}

  load(): WritePayload {
    const entry = this.prepare(this.entry);
    if (this.targetName === entry.name)
      return entry.image === undefined ? { body: entry.body } : { body: entry.body, image: entry.image };
    // Renamed: the body and its image under the new name.
    return {
      body: { ...entry.body, name: this.targetName },
      ...(entry.image === undefined ? {} : { image: { ...entry.image, name: this.targetName } }),
    };
  }
}

/** An update body prepared from its snapshot entry when loaded (a class, as {@link PreparedSource}). */
export class PreparedUpdate implements Source<WritePayload> {
  constructor(
    private readonly prepare: () => PreparedEntry,
    private readonly converge: Pick<ConvergeHelpers, 'updateBody' | 'imageOf'>,
  ) {}

  load(): WritePayload {
    const { body, secretsSent } = this.converge.updateBody(this.prepare());
    return { body, image: this.converge.imageOf(body), secretsSent };
  }
}
