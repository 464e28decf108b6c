// The frame every client command runs in: global options in its help, settings
// resolved (flag > env > config file), errors turned into one line and an exit code.
import type { Argv, Options } from 'yargs'
import type { MemsvcClient } from '../../sdk/src/index.js'
import {
  type ClientSettings,
  CONNECTION_OPTIONS,
  type GlobalArgs,
  OUTPUT_OPTION,
  resolveSettings,
} from './client-settings.js'
import { withConnection } from './connection.js'
import { reportError } from './error-report.js'
import { EXIT_CODES_HELP } from './exit-codes.js'

export type Args = GlobalArgs & Record<string, unknown>

/**
 * Adds the global options (all, or only --output for commands that talk to no
 * server) and the epilog: the command's own notes, then the exit codes.
 */
export function withClientOptions<T>(
  yargs: Argv<T>,
  { connects = true, epilog }: { connects?: boolean; epilog?: string } = {},
): Argv<T> {
  const options: Record<string, Options> = connects ? { ...CONNECTION_OPTIONS, ...OUTPUT_OPTION } : { ...OUTPUT_OPTION }
  return yargs.options(options).epilog(epilog ? `${epilog}\n\n${EXIT_CODES_HELP}` : EXIT_CODES_HELP) as Argv<T>
}

/**
 * Node deprecation warnings are for developers, not for people running a CLI; one
 * (DEP0123) is raised inside grpc-js whenever the server is given as an IP address.
 */
function quietDeprecations(): void {
  process.noDeprecation = true
}

/** Wraps a command body: any error becomes "error: …" on stderr and the matching exit code. */
export function clientHandler(
  run: (argv: Args, settings: ClientSettings) => Promise<void>,
): (argv: Args) => Promise<void> {
  return async (argv) => {
    quietDeprecations()
    try {
      await run(argv, resolveSettings(argv))
    } catch (error) {
      // exitCode, not exit(): stdout may still be draining into a pipe.
      process.exitCode = reportError(error)
    }
  }
}

/** Same frame for commands that need no settings (upgrade reads no config file). */
export function plainHandler(run: (argv: Args) => Promise<void>): (argv: Args) => Promise<void> {
  return async (argv) => {
    quietDeprecations()
    try {
      await run(argv)
    } catch (error) {
      process.exitCode = reportError(error)
    }
  }
}

export interface Subcommand {
  /** yargs command string, e.g. "update <id>". */
  command: string
  describe: string
  /** Notes for its --help, printed above the exit codes. */
  epilog?: string
  /** Options, positionals and examples. */
  builder: (command: Argv) => Argv
  handler: (argv: Args) => Promise<void>
}

/**
 * `memsvc <name> <subcommand>`: the group takes the global options, and every
 * subcommand's help ends with the exit codes (yargs does not inherit epilogs).
 */
export function commandGroup(yargs: Argv, name: string, describe: string, subcommands: Subcommand[]): Argv {
  const names = subcommands.map((subcommand) => subcommand.command.split(' ')[0])
  return yargs.command(`${name} <command>`, describe, (group: Argv) =>
    subcommands
      .reduce(
        (built, subcommand) =>
          built.command(
            subcommand.command,
            subcommand.describe,
            (command: Argv) =>
              subcommand
                .builder(command)
                .epilog(subcommand.epilog ? `${subcommand.epilog}\n\n${EXIT_CODES_HELP}` : EXIT_CODES_HELP),
            subcommand.handler as (argv: unknown) => Promise<void>,
          ),
        withClientOptions(group),
      )
      .demandCommand(1, `Name a ${name} command: ${names.join(', ')}.`),
  )
}

/** The `<id>` positional of a command about one item; its help says "<what> id (UUID)". */
export function idPositional(command: Argv, what: string): Argv {
  return command.positional('id', { type: 'string', describe: `${what} id (UUID)` })
}

/** Registers option tables (name → yargs options) on a command. */
export function withOptions<T>(yargs: Argv<T>, ...tables: Array<Record<string, Options>>): Argv<T> {
  let configured = yargs
  for (const table of tables) configured = configured.options(table) as Argv<T>
  return configured
}

export interface Page<Item> {
  items: Item[]
  nextToken?: string
}

/** One page, or with `all` every page, following nextToken until the server has no more. */
export async function collectPages<Item>(
  fetch: (nextToken: string | undefined) => Promise<Page<Item>>,
  start: string | undefined,
  all: boolean,
): Promise<Page<Item>> {
  const first = await fetch(start)
  if (!all) return first
  const items = [...first.items]
  let token = first.nextToken
  while (token) {
    const page = await fetch(token)
    items.push(...page.items)
    token = page.nextToken
  }
  return { items }
}

/**
 * What a `list` command shows: the page at `start` (--next-token), or with `all` (--all) every
 * page, all over one authenticated connection. `fetchPage` makes the call for one page token.
 */
export function fetchPages<Item>(
  settings: ClientSettings,
  start: string | undefined,
  all: boolean,
  fetchPage: (api: MemsvcClient, nextToken: string | undefined) => Promise<Page<Item>>,
): Promise<Page<Item>> {
  return withConnection(settings, { authenticated: true }, (connection) =>
    collectPages((token) => connection.run((api) => fetchPage(api, token)), start, all),
  )
}
