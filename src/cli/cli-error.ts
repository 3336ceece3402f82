/** An error of an offline CLI tool that the user can fix: printed as its message, exit code 2. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
