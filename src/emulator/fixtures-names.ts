/**
 * The connection names of the production-like fixture environment (`fixtures-gen.ts`).
 */

/** Connection names of the production-like environment, per type (department first). */
export const PROD_NAMES: ReadonlyArray<readonly [type: string, names: readonly string[]]> = [
  [
    's3',
    [
      'finance-invoices-s3',
      'finance-ap-archive-s3',
      'hr-documents-s3',
      'marketing-assets-s3',
      'legal-contracts-s3',
      'eng-build-artifacts-s3',
      'support-attachments-s3',
      'data-lake-raw-s3',
      'data-lake-curated-s3',
      'risk-reports-s3',
      'ops-logs (eu)-s3',
      'sales-exports-s3',
    ],
  ],
  [
    'snowflake',
    ['finance-sf', 'sales-sf', 'marketing-sf', 'data-warehouse-sf', 'risk-models-sf', 'hr-analytics-sf'],
  ],
  [
    'rdb-mysql',
    [
      'eng-app-mysql',
      'support-ticketing-mysql',
      'marketing-cms-mysql',
      'sales-crm-legacy-mysql',
      'ops-inventory-mysql',
      'hr-recruiting-mysql',
      'eng-feature-flags-mysql',
    ],
  ],
  [
    'rdb-postgresql',
    [
      'hr-payroll-pg',
      'finance-ledger-pg',
      'eng-billing-pg',
      'data-dwh-staging-pg',
      'legal-matters-pg',
      'support-kb-pg',
      'risk-fraud-pg',
      'ops-scheduler-pg',
    ],
  ],
  [
    'rdb-mssql',
    [
      'finance-erp-mssql',
      'hr-timesheets-mssql',
      'sales-orders-mssql',
      'ops-warehouse-mssql',
      'legal-dms-mssql',
      'risk-aml-mssql',
    ],
  ],
  [
    'rdb-oracle',
    [
      'finance-gl-oracle',
      'hr-peoplesoft-oracle',
      'ops-supply-oracle',
      'risk-core-oracle',
      'sales-billing-oracle',
    ],
  ],
  [
    'mongodb',
    [
      'eng-events-mongo',
      'marketing-profiles-mongo',
      'support-chat-mongo',
      'data-features-mongo',
      'ops-telemetry-mongo',
      'sales-leads-mongo',
    ],
  ],
  [
    'smb',
    [
      'hr-shared-drive',
      'finance-shared-drive',
      'legal-shared-drive',
      'marketing-shared-drive',
      'eng-shared-drive',
      'ops-scans: archive',
    ],
  ],
  [
    'salesforce',
    ['sales-salesforce-prod', 'support-service-cloud', 'marketing-cloud-sf', 'finance-cpq-salesforce'],
  ],
  ['gcp-big-query', ['data-bq-analytics', 'marketing-bq-attribution', 'eng-bq-telemetry', 'risk-bq-scoring']],
  ['googledrive', ['sales-drive', 'hr-drive']],
  ['generic-rest-api', ['support-rest-store', 'eng-rest-inventory']],
];
