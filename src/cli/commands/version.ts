// memsvc version: the client's version (system info shows the server's).
import type { Argv } from 'yargs'
import { RUNTIME, VERSION, VERSION_TEXT } from '../../runtime/environment.js'
import { plainHandler, withClientOptions } from '../command.js'
import { print } from '../output.js'

export function versionCommand(yargs: Argv): Argv {
  return yargs.command(
    'version',
    'Print the version of this executable',
    (command: Argv) =>
      withClientOptions(command, { connects: false })
        .example('$0 version', 'same as memsvc --version')
        .example('$0 system info', "the server's version"),
    plainHandler(async (argv) =>
      print(argv.output === 'json' ? 'json' : 'table', {
        json: { version: VERSION, runtime: RUNTIME },
        text: () => `${VERSION_TEXT}\n`,
      }),
    ) as (argv: unknown) => Promise<void>,
  )
}
