// First: the embedded server may replace itself with memory settings read at process start.
import './runtime/small-host-process.js'
import { inspect } from 'node:util'
import yargs from 'yargs'
import { hideBin } from 'yargs/helpers'
import { CLIENT_EPILOG, registerClientCommands } from './cli/commands/index.js'
import { EXIT_BAD_INPUT, EXIT_CODES_HELP } from './cli/exit-codes.js'
import { describeServeOptions, runServe } from './cli/serve-command.js'
import { extractSystemProperties } from './config/server-config.js'
import { createEmbeddedDatabase } from './db/create-embedded-database.js'
import { CREATE_EMBEDDED_DATABASE_COMMAND } from './db/embedded.js'
import { VERSION_TEXT } from './runtime/environment.js'

const MAX_HELP_WIDTH = 120
const DEFAULT_HELP_WIDTH = 100

async function main(): Promise<void> {
  const mainStartMs = performance.now()
  // -Dkey=value system properties are not yargs flags; take them out first.
  const rawArgs = hideBin(process.argv)
  const { args } = extractSystemProperties(rawArgs)
  // Not a user's command: `memsvc serve` runs it to create its embedded database apart (src/db/embedded.ts).
  if (args[0] === CREATE_EMBEDDED_DATABASE_COMMAND && args[1]) return createEmbeddedDatabase(args[1])
  // `memsvc … | head` closes the pipe early; that is not an error worth a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0)
    throw error
  })
  const parser = yargs(args)
    .scriptName('memsvc')
    .usage('memsvc — memory service for AI applications\n\nUsage: $0 <command> [options]')
    .command('serve', 'Run the server (REST on 8080, gRPC on 9090)', describeServeOptions, (flags) =>
      runServe(flags as Record<string, unknown>, rawArgs, mainStartMs),
    )
  await registerClientCommands(parser)
    .example('$0 serve', 'start a server (embedded database, self-signed TLS)')
    .example('$0 init', 'initialise it and save the root API key')
    .example('$0 apikey create --label app=search', 'create a key for an application')
    .epilog(`${CLIENT_EPILOG}\n\n${EXIT_CODES_HELP}`)
    .demandCommand(1, 'Name a command; see --help.')
    .strict()
    .version(VERSION_TEXT)
    .help()
    .alias('h', 'help')
    .wrap(Math.min(MAX_HELP_WIDTH, process.stdout.columns || DEFAULT_HELP_WIDTH))
    .fail((message, error) => {
      // yargs raises its own parse errors (a flag without its value) as a YError: still a wrong command line.
      if (error && error.name !== 'YError') throw error
      // A wrong command line: one line, then where to look, exit 2 (nothing was sent).
      const command = args
        .filter((arg) => !arg.startsWith('-'))
        .slice(0, 2)
        .join(' ')
      process.stderr.write(
        `error: ${(message ?? error?.message ?? '').replace(/\s*\n\s*/g, ' ')}\n` +
          `Run "memsvc ${command ? `${command} ` : ''}--help" for usage.\n`,
      )
      process.exit(EXIT_BAD_INPUT)
    })
    .parseAsync()
}

main().catch((error: unknown) => {
  // PGlite's file system throws plain objects (errno, code) rather than Errors.
  const message = error instanceof Error ? error.message : inspect(error, { breakLength: Number.POSITIVE_INFINITY })
  process.stderr.write(`memsvc: ${message}\n`)
  process.exit(1)
})
