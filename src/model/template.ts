/** A connector template field (`GET ds-connections-types/template/{type}`, api-notes). */
export interface TemplateField {
  readonly apiName: string;
  readonly name?: string;
  readonly type?: string;
  readonly mandatory?: boolean;
  readonly validation?: readonly { readonly regex?: string; readonly errorText?: string }[];
  readonly defaultValue?: unknown;
  readonly options?: readonly unknown[];
  readonly [k: string]: unknown;
}

export interface ConnectorTemplate {
  readonly name: string;
  readonly fields: readonly TemplateField[];
  readonly [k: string]: unknown;
}
