/**
 * Connector templates served by `GET /api/v1/ds-connections-types/template/{type}`, in the real shape
 * of api-notes: `{ name, fields: [{ apiName, name, type, mandatory, validation, defaultValue, options }] }`.
 * The connection key is `apiName`; `type: "password"` marks a credential. Field names are the real
 * connectors' own (api-notes; the recorded sandbox in fixtures/recorded/): `smbServer`, `sharedResource`,
 * `salesforce_custom_url`, `mongo_url`, `rdb_sample_type`, ... A field is `mandatory` only where every
 * recorded connection of the type has it; a username or password never is (a source using a stored
 * credential has `credential_id`, `is_credential: true` and no username). No invented enums or patterns:
 * real values break them (`rdb_sample_type: "size"`, `mongo_url` as a bare host). snowflake and
 * gcp-big-query have no public evidence: their field names are guesses.
 */

/** Field types a template uses. `password` fields are credentials (masked on the way out). */
export type TemplateFieldType =
  | 'string'
  | 'password'
  | 'boolean'
  | 'number'
  | 'enum'
  | 'stringList'
  | 'objectList'
  | 'tags';

/** A validation rule of a template field; applied to non-empty string values. */
export interface TemplateFieldValidation {
  readonly regex: string;
  readonly errorText: string;
}

/** An allowed value of an `enum` field. */
export interface TemplateFieldOption {
  readonly value: string;
  readonly label: string;
}

/** One field of a connector template. */
export interface TemplateField {
  /** Key in the connection object. */
  readonly apiName: string;
  /** UI name (not the connection key). */
  readonly name: string;
  readonly displayName: string;
  readonly type: TemplateFieldType;
  /** A create without a non-empty value for a mandatory field is refused. */
  readonly mandatory: boolean;
  readonly validation?: readonly TemplateFieldValidation[];
  readonly defaultValue?: unknown;
  readonly options?: readonly TemplateFieldOption[];
  readonly description?: string;
}

/** A connector template. */
export interface ConnectorTemplate {
  /** The connection `type` it describes. */
  readonly name: string;
  readonly displayName: string;
  readonly fields: readonly TemplateField[];
}

/** Regex every connection name must match (api-notes). */
export const CONNECTION_NAME_PATTERN = '^[\\w\\-\\s\\(\\):]+$';

const yesNo: readonly TemplateFieldOption[] = [
  { value: 'yes', label: 'Yes' },
  { value: 'no', label: 'No' },
];

/** Fields every template starts with (the common fields of api-notes). `enabled` is "yes"/"no" in real data. */
export const COMMON_FIELDS: readonly TemplateField[] = [
  {
    apiName: 'name',
    name: 'name',
    displayName: 'Data Source Name',
    type: 'string',
    mandatory: true,
    validation: [
      {
        regex: CONNECTION_NAME_PATTERN,
        errorText: 'Name may contain letters, digits, spaces, _ - ( ) : only',
      },
    ],
  },
  { apiName: 'type', name: 'type', displayName: 'Type', type: 'string', mandatory: true },
  {
    apiName: 'enabled',
    name: 'enabled',
    displayName: 'Enabled',
    type: 'enum',
    mandatory: false,
    defaultValue: 'yes',
    options: yesNo,
  },
  {
    apiName: 'description',
    name: 'description',
    displayName: 'Description',
    type: 'string',
    mandatory: false,
  },
  {
    apiName: 'scanner_group',
    name: 'scannerGroup',
    displayName: 'Scanner Group',
    type: 'string',
    mandatory: false,
    defaultValue: 'default',
  },
  // "1" in real data; the allowed range is not known, so no options.
  {
    apiName: 'security_tier',
    name: 'securityTier',
    displayName: 'Security Tier',
    type: 'string',
    mandatory: false,
  },
  {
    apiName: 'owners_v2',
    name: 'owners',
    displayName: 'Owners',
    type: 'objectList',
    mandatory: false,
    description: 'Array of { id, email, origin, type, isNotified }',
  },
  {
    apiName: 'custom_fields',
    name: 'customFields',
    displayName: 'Custom Fields',
    type: 'objectList',
    mandatory: false,
    description: 'Array of { field_name, field_value, field_type: "clear" | "encrypted" }',
  },
  { apiName: 'tags', name: 'tags', displayName: 'Tags', type: 'tags', mandatory: false },
  {
    apiName: 'credential_id',
    name: 'credentialId',
    displayName: 'Credential',
    type: 'string',
    mandatory: false,
  },
  {
    apiName: 'is_credential',
    name: 'isCredential',
    displayName: 'Use a stored credential',
    type: 'boolean',
    mandatory: false,
  },
  {
    apiName: 'certificate_id',
    name: 'certificateId',
    displayName: 'Certificate',
    type: 'string',
    mandatory: false,
  },
];

function str(
  apiName: string,
  name: string,
  displayName: string,
  mandatory: boolean,
  extra: Partial<TemplateField> = {},
): TemplateField {
  return { apiName, name, displayName, type: 'string', mandatory, ...extra };
}

/** A credential: never mandatory (a stored credential can stand in for it). */
function secret(apiName: string, name: string, displayName: string): TemplateField {
  return { apiName, name, displayName, type: 'password', mandatory: false };
}

function bool(apiName: string, name: string, displayName: string, defaultValue: boolean): TemplateField {
  return { apiName, name, displayName, type: 'boolean', mandatory: false, defaultValue };
}

/** Username and password of a connector that may use a stored credential instead. */
const LOGIN: readonly TemplateField[] = [
  str('username', 'username', 'Username', false),
  secret('password', 'password', 'Password'),
];

/** The fields an rdb-* template shares (api-notes, recorded rdb-mysql sources). */
function rdbFields(urlHint: string): TemplateField[] {
  return [
    str('rdb_url', 'dbUrl', 'Database URL', true, { description: urlHint }),
    str('rdb_name', 'dbName', 'Database Name', true),
    ...LOGIN,
    str('rdb_comma_sep_table_list', 'tableList', 'Tables (comma separated)', false),
    bool('rdb_is_sample_data', 'isSampleData', 'Sample Data', false),
    // "size" in recorded data; other values are not known, so no options.
    str('rdb_sample_type', 'sampleType', 'Sample Type', false),
  ];
}

function template(name: string, displayName: string, fields: readonly TemplateField[]): ConnectorTemplate {
  return { name, displayName, fields: [...COMMON_FIELDS, ...fields] };
}

/** Every template the emulator knows, keyed by connection type. */
export const CONNECTOR_TEMPLATES: Readonly<Record<string, ConnectorTemplate>> = {
  s3: template('s3', 'Amazon S3', [
    str('bucket_name', 'bucketName', 'Bucket Name', true),
    str('aws_region', 'awsRegion', 'AWS Region', false),
    bool('isCredentialsAuth', 'isCredentialsAuth', 'Authenticate with access keys', false),
    bool('isIamRoleAuth', 'isIamRoleAuth', 'Authenticate with the scanner IAM role', false),
    bool('isCrossAccountAuth', 'isCrossAccountAuth', 'Authenticate by assuming a cross-account role', false),
    bool('isSTSAuth', 'isSTSAuth', 'Authenticate with a session token', false),
    bool('isAnonymousAuth', 'isAnonymousAuth', 'Anonymous access', false),
    str('aws_role_arn', 'awsRoleArn', 'Role ARN', false),
    str('aws_role_session_name', 'awsRoleSessionName', 'Role Session Name', false),
    // Role-based connections keep the keys empty.
    secret('aws_access_key', 'awsAccessKey', 'AWS Access Key'),
    secret('aws_secret_key', 'awsSecretKey', 'AWS Secret Key'),
    secret('aws_session_token', 'awsSessionToken', 'AWS Session Token'),
    str('folder_to_scan', 'folderToScan', 'Folder to Scan', false),
    bool('is_ocr_enabled', 'isOcrEnabled', 'OCR', false),
    bool('differential', 'differential', 'Differential Scan', false),
  ]),
  snowflake: template('snowflake', 'Snowflake', [
    // Field names are the api-notes guess: no public evidence of the real ones. Nothing mandatory.
    str('account', 'account', 'Account Identifier', false),
    str('warehouse', 'warehouse', 'Warehouse', false),
    str('database', 'database', 'Database', false),
    str('schema', 'schema', 'Schema', false),
    str('role', 'role', 'Role', false),
    ...LOGIN,
  ]),
  'rdb-mysql': template('rdb-mysql', 'MySQL', rdbFields('host or host:port, e.g. sql.internal')),
  'rdb-postgresql': template(
    'rdb-postgresql',
    'PostgreSQL',
    rdbFields('host or host:port, e.g. pg.internal:5432'),
  ),
  'rdb-mssql': template(
    'rdb-mssql',
    'Microsoft SQL Server',
    rdbFields('host or host:port, e.g. sql01.corp:1433'),
  ),
  'rdb-oracle': template('rdb-oracle', 'Oracle', rdbFields('host or host:port, e.g. ora-fin.corp:1521')),
  mongodb: template('mongodb', 'MongoDB', [
    // A host, often with no scheme, in recorded data: no pattern.
    str('mongo_url', 'mongoUrl', 'Connection URL', true),
    str('mongo_db_name', 'mongoDbName', 'Database', false),
    str('mongo_collection_name', 'mongoCollectionName', 'Collection', false),
    str('authentication_db', 'authenticationDb', 'Authentication Database', false, { defaultValue: 'admin' }),
    ...LOGIN,
  ]),
  smb: template('smb', 'SMB / CIFS File Share', [
    str('smbServer', 'smbServer', 'Server', true),
    str('sharedResource', 'sharedResource', 'Shared Resource', true),
    str('domain', 'domain', 'Domain', false),
    ...LOGIN,
    bool('is_ocr_enabled', 'isOcrEnabled', 'OCR', false),
    bool('differential', 'differential', 'Differential Scan', false),
  ]),
  salesforce: template('salesforce', 'Salesforce', [
    bool('is_salesforce_custom_url', 'isSalesforceCustomUrl', 'Custom URL', false),
    str('salesforce_custom_url', 'salesforceCustomUrl', 'Custom URL', false),
    ...LOGIN,
  ]),
  googledrive: template('googledrive', 'Google Drive', [
    secret('google_service_account_json', 'googleServiceAccountJson', 'Service Account JSON'),
    str('google_service_account_user', 'googleServiceAccountUser', 'Impersonated User', false),
    bool('isGoogleServiceAccount', 'isGoogleServiceAccount', 'Service Account', false),
    str('drives_to_scan', 'drivesToScan', 'Drives to Scan', false),
    // "myDrive" in recorded data; other values are not known, so no options.
    str('scan_scope', 'scanScope', 'Scan Scope', false),
    bool('is_exclusion_drives_enabled', 'isExclusionDrivesEnabled', 'Exclude Drives', false),
    str('folder_to_scan', 'folderToScan', 'Folder to Scan', false),
  ]),
  'generic-rest-api': template('generic-rest-api', 'Generic REST API', [
    str('generic_server_url', 'genericServerUrl', 'Server URL', true),
    ...LOGIN,
  ]),
  'gcp-big-query': template('gcp-big-query', 'Google BigQuery', [
    // No public evidence of these names: a guess, nothing mandatory.
    str('gcp_project_id', 'projectId', 'Project Id', false),
    str('gcp_client_email', 'clientEmail', 'Service Account Email', false),
    secret('gcp_private_key', 'privateKey', 'Service Account Private Key'),
    str('gcp_dataset_filter', 'datasetFilter', 'Datasets to Scan', false),
  ]),
};

/** The template of `type`, or undefined when the emulator has none. */
export function getTemplate(type: string): ConnectorTemplate | undefined {
  return Object.hasOwn(CONNECTOR_TEMPLATES, type) ? CONNECTOR_TEMPLATES[type] : undefined;
}

/** Types the emulator has templates for, sorted. */
export function listTemplateTypes(): string[] {
  return Object.keys(CONNECTOR_TEMPLATES).sort();
}
