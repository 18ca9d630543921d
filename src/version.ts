/** The tool's name and version: `--version`, snapshot headers, journals, bug reports. */
export const TOOL_NAME = 'dds-migrate';
export const TOOL_VERSION = '0.2.0';
