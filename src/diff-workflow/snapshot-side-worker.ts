/**
 * The worker thread of a diff's snapshot side (`snapshot-side.ts`): serves it on the parent port.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type ServedSnapshotSideRequest, serveSnapshotSide } from './snapshot-side.js';

if (parentPort === null) throw new Error('snapshot-side-worker runs only as a worker thread');
serveSnapshotSide(parentPort, workerData as ServedSnapshotSideRequest);
