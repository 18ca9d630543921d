import nock from 'nock';

// No test may reach beyond loopback: a request without a mock or a local server fails loudly.
nock.disableNetConnect();
nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
