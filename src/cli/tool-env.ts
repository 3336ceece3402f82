/** What an offline tool gets from the CLI besides its arguments. */
export interface ToolEnv {
  /** the config `eventloom start` would load */
  defaultConfigFile(): string;
}
