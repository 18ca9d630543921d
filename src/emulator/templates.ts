/**
 * Connector templates served by `GET /api/v1/ds-connections-types/template/{type}`, in the real shape
 * of api-notes: `{ name, fields: [{ apiName, name, type, mandatory, validation, defaultValue, options }] }`.
 * The connection key is `apiName`; `type: "password"` marks a credential. Kept as plain data so the
 * JSON Schemas in `schemas/templates/` can mirror it field by field.
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

/** Fields every template starts with. `enabled` and `security_tier` are strings in real data ("yes", "1"). */
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
  {
    apiName: 'security_tier',
    name: 'securityTier',
    displayName: 'Security Tier',
    type: 'enum',
    mandatory: false,
    defaultValue: '2',
    options: ['1', '2', '3', '4', '5'].map((v) => ({ value: v, label: `Tier ${v}` })),
  },
  {
    apiName: 'owners_v2',
    name: 'owners',
    displayName: 'Owners',
    type: 'objectList',
    mandatory: false,
    description: 'Array of { id, type: "businessOwner" | "itOwner", origin }',
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

function secret(apiName: string, name: string, displayName: string, mandatory: boolean): TemplateField {
  return { apiName, name, displayName, type: 'password', mandatory };
}

function bool(apiName: string, name: string, displayName: string, defaultValue: boolean): TemplateField {
  return { apiName, name, displayName, type: 'boolean', mandatory: false, defaultValue };
}

function num(apiName: string, name: string, displayName: string, defaultValue: number): TemplateField {
  return { apiName, name, displayName, type: 'number', mandatory: false, defaultValue };
}

function enumField(
  apiName: string,
  name: string,
  displayName: string,
  mandatory: boolean,
  values: readonly string[],
  defaultValue: string,
): TemplateField {
  return {
    apiName,
    name,
    displayName,
    type: 'enum',
    mandatory,
    defaultValue,
    options: values.map((v) => ({ value: v, label: v })),
  };
}

const noSpaces: TemplateFieldValidation = { regex: '^\\S+$', errorText: 'Must not contain spaces' };

/** The fields an rdb-* template shares; `urlHint` only changes the description. */
function rdbFields(urlHint: string, extra: readonly TemplateField[]): TemplateField[] {
  return [
    str('rdb_url', 'dbUrl', 'Database URL', true, { validation: [noSpaces], description: urlHint }),
    str('rdb_name', 'dbName', 'Database Name', true),
    str('username', 'username', 'Username', true),
    secret('password', 'password', 'Password', true),
    ...extra,
    bool('rdb_is_sample_data', 'isSampleData', 'Sample Data', false),
    num('rdb_sample_data_max_size', 'sampleDataMaxSize', 'Sample Size (rows)', 1000),
    enumField('rdb_sample_type', 'sampleType', 'Sample Type', false, ['RANDOM', 'TOP'], 'RANDOM'),
    num('query_timeout_in_seconds', 'queryTimeoutInSeconds', 'Query Timeout (s)', 3600),
  ];
}

function template(name: string, displayName: string, fields: readonly TemplateField[]): ConnectorTemplate {
  return { name, displayName, fields: [...COMMON_FIELDS, ...fields] };
}

/** Every template the emulator knows, keyed by connection type. */
export const CONNECTOR_TEMPLATES: Readonly<Record<string, ConnectorTemplate>> = {
  s3: template('s3', 'Amazon S3', [
    str('bucket_name', 'bucketName', 'Bucket Name', true, {
      validation: [
        {
          regex: '^[a-z0-9][a-z0-9.\\-]{1,61}[a-z0-9]$',
          errorText: 'Bucket names are 3-63 lower-case letters, digits, dots and hyphens',
        },
      ],
    }),
    str('aws_region', 'awsRegion', 'AWS Region', true, {
      defaultValue: 'us-east-1',
      validation: [{ regex: '^[a-z]{2}(-gov)?-[a-z]+-\\d$', errorText: 'Not an AWS region, e.g. us-east-1' }],
    }),
    bool('isCredentialsAuth', 'isCredentialsAuth', 'Authenticate with access keys', false),
    bool('isIamRoleAuth', 'isIamRoleAuth', 'Authenticate with the scanner IAM role', false),
    bool('isCrossAccountAuth', 'isCrossAccountAuth', 'Authenticate by assuming a cross-account role', false),
    str('aws_role_arn', 'awsRoleArn', 'Role ARN', false),
    str('aws_role_session_name', 'awsRoleSessionName', 'Role Session Name', false),
    // Not mandatory: role-based connections keep both keys empty.
    secret('aws_access_key', 'awsAccessKey', 'AWS Access Key', false),
    secret('aws_secret_key', 'awsSecretKey', 'AWS Secret Key', false),
    str('folder_to_scan', 'folderToScan', 'Folder to Scan', false),
    str('file_types_to_exclude', 'fileTypesToExclude', 'File Types to Exclude', false),
    bool('is_ocr_enabled', 'isOcrEnabled', 'OCR', false),
    bool('differential', 'differential', 'Differential Scan', true),
  ]),
  snowflake: template('snowflake', 'Snowflake', [
    // Field names are the api-notes guess: no public evidence of the real ones.
    str('account', 'account', 'Account Identifier', true, {
      validation: [{ regex: '^[A-Za-z0-9_.\\-]+$', errorText: 'Account identifier, e.g. xy12345.eu-west-1' }],
    }),
    str('warehouse', 'warehouse', 'Warehouse', true),
    str('database', 'database', 'Database', true),
    str('schema', 'schema', 'Schema', false),
    str('role', 'role', 'Role', false),
    str('username', 'username', 'Username', true),
    secret('password', 'password', 'Password', true),
    bool('rdb_is_sample_data', 'isSampleData', 'Sample Data', false),
  ]),
  'rdb-mysql': template('rdb-mysql', 'MySQL', rdbFields('host:port, e.g. mysql.internal:3306', [])),
  'rdb-postgresql': template(
    'rdb-postgresql',
    'PostgreSQL',
    rdbFields('host:port, e.g. pg.internal:5432', [
      str('rdb_schema', 'schemaName', 'Schema', false, { defaultValue: 'public' }),
      enumField('ssl_mode', 'sslMode', 'SSL Mode', false, ['disable', 'require', 'verify-full'], 'require'),
    ]),
  ),
  'rdb-mssql': template(
    'rdb-mssql',
    'Microsoft SQL Server',
    rdbFields('host:port or host\\instance, e.g. sql01.corp:1433', [
      str('domain', 'domain', 'Windows Domain', false),
      bool('is_windows_auth', 'isWindowsAuth', 'Windows Authentication', false),
    ]),
  ),
  'rdb-oracle': template(
    'rdb-oracle',
    'Oracle',
    rdbFields('host:port, e.g. ora-fin.corp:1521', [
      enumField(
        'oracle_connection_type',
        'oracleConnectionType',
        'Connect By',
        false,
        ['service_name', 'sid'],
        'service_name',
      ),
    ]),
  ),
  mongodb: template('mongodb', 'MongoDB', [
    str('mongo_url', 'mongoUrl', 'Connection URL', true, {
      validation: [
        { regex: '^mongodb(\\+srv)?://\\S+$', errorText: 'Must start with mongodb:// or mongodb+srv://' },
      ],
    }),
    str('mongo_database', 'mongoDatabase', 'Database', false),
    str('username', 'username', 'Username', false),
    // Optional: MongoDB without authentication exists in real estates.
    secret('password', 'password', 'Password', false),
    str('auth_db', 'authDb', 'Authentication Database', false, { defaultValue: 'admin' }),
    bool('mongo_is_ssl', 'isSsl', 'TLS', true),
  ]),
  smb: template('smb', 'SMB / CIFS File Share', [
    str('smb_server', 'smbServer', 'Server', true, { validation: [noSpaces] }),
    str('share_name', 'shareName', 'Share Name', true),
    str('domain', 'domain', 'Domain', false),
    str('username', 'username', 'Username', true),
    secret('password', 'password', 'Password', true),
    str('folder_to_scan', 'folderToScan', 'Folder to Scan', false),
    bool('is_ocr_enabled', 'isOcrEnabled', 'OCR', false),
    bool('differential', 'differential', 'Differential Scan', true),
  ]),
  salesforce: template('salesforce', 'Salesforce', [
    str('instance_url', 'instanceUrl', 'Instance URL', true, {
      validation: [{ regex: '^https://\\S+$', errorText: 'Must be an https:// URL' }],
    }),
    enumField(
      'salesforce_auth_type',
      'authType',
      'Authentication',
      false,
      ['usernamePassword', 'oauth'],
      'usernamePassword',
    ),
    str('username', 'username', 'Username', true),
    secret('password', 'password', 'Password', true),
    secret('security_token', 'securityToken', 'Security Token', false),
    str('client_id', 'clientId', 'Connected App Client Id', false),
    secret('client_secret', 'clientSecret', 'Connected App Client Secret', false),
    str('api_version', 'apiVersion', 'API Version', false, { defaultValue: '59.0' }),
  ]),
  'gcp-big-query': template('gcp-big-query', 'Google BigQuery', [
    str('gcp_project_id', 'projectId', 'Project Id', true, {
      validation: [{ regex: '^[a-z][a-z0-9\\-]{4,28}[a-z0-9]$', errorText: 'Not a GCP project id' }],
    }),
    str('gcp_client_email', 'clientEmail', 'Service Account Email', true),
    secret('gcp_private_key', 'privateKey', 'Service Account Private Key', true),
    str('gcp_dataset_filter', 'datasetFilter', 'Datasets to Scan', false),
    str('gcp_location', 'location', 'Location', false, { defaultValue: 'US' }),
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
