/**
 * A local Data Discovery Service: a real HTTP server on loopback for tests, demos and rehearsals.
 * It is an independent reading of the spec and shares no code with `src/api/`.
 *
 * @example
 * const emu = await startEmulator({ data: 'fixtures/environments/prod.json' });
 * // ... talk to `${emu.url}/api/v1/...` with `Authorization: Bearer ${emu.token}`
 * await emu.close();
 */
export { parseFaults } from './faults.js';
export { type GenerateOptions, generateConnections } from './generate.js';
export { type GenerateCasesOptions, generateCases } from './generate-cases.js';
export { loadSeed } from './seed.js';
export { startEmulator } from './server.js';
export { DEFAULT_SCAN_TEMPLATES } from './store.js';
export {
  COMMON_FIELDS,
  CONNECTOR_TEMPLATES,
  type ConnectorTemplate,
  getTemplate,
  listTemplateTypes,
  type TemplateField,
  type TemplateFieldType,
} from './templates.js';
export type {
  CaseAuditEntry,
  ConnectionRecord,
  CredentialRecord,
  EmulatorOptions,
  EmulatorRecord,
  EmulatorSeed,
  EmulatorStore,
  FaultKind,
  FaultRule,
  RecordedChange,
  RecordedCreate,
  RecordedRequest,
  RunningEmulator,
  ScannerRecord,
  ScanProfileRecord,
  ScanSchedule,
  ScanTemplate,
  SecurityCaseRecord,
  SeedCase,
  SeedConnection,
  StartedScan,
} from './types.js';
