import nock from 'nock';
import { afterAll } from 'vitest';
import { removeTempDirs } from './temp-dir.js';

// No test may reach beyond loopback: a request without a mock or a local server fails loudly.
nock.disableNetConnect();
nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);

// Every folder made with makeTempDir goes when its test file ends, whether its tests passed or not.
afterAll(removeTempDirs);
