/**
 * Exit codes of the client commands. Scripts branch on them, so each kind of failure
 * has its own code, and every --help epilog lists them (EXIT_CODES_HELP).
 */
export const EXIT_OK = 0
/** The server refused or failed the request, or the command could not do its job (e.g. a checksum mismatch). */
export const EXIT_FAILED = 1
/** The command line itself is wrong: unknown option, bad value, missing API key. Nothing was sent. */
export const EXIT_BAD_INPUT = 2
/** The server could not be reached, or its TLS certificate could not be trusted. */
export const EXIT_UNREACHABLE = 3

export const EXIT_CODES_HELP = [
  'Exit codes:',
  `  ${EXIT_OK}  success`,
  `  ${EXIT_FAILED}  the server returned an error, or the command failed (not serving, bad checksum)`,
  `  ${EXIT_BAD_INPUT}  bad command line: unknown option, invalid value, no API key`,
  `  ${EXIT_UNREACHABLE}  cannot connect to the server, or its TLS certificate is not trusted / has changed`,
].join('\n')

/** An expected failure: printed as one line ("error: ...") with no stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILED,
  ) {
    super(message)
    this.name = 'CliError'
  }
}

export const badInput = (message: string): CliError => new CliError(message, EXIT_BAD_INPUT)

export const unreachable = (message: string): CliError => new CliError(message, EXIT_UNREACHABLE)
