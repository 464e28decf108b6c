// The CLI's --help is its contract. This walks every command's help, reads back its
// options, positionals and examples, and runs each example through the CLI's own yargs
// commands: a new example is tested without touching this file. Parsing stops just before
// a command would run, so no server is needed.
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import yargs, { type Arguments, type Argv } from 'yargs'
import { registerClientCommands } from '../../src/cli/commands/index.js'
import { asList } from '../../src/cli/option-parsing.js'
import { describeServeOptions } from '../../src/cli/serve-command.js'

/** Thrown by the last middleware: the command line parsed and passed validation, and the handler would run next. */
class ParsedBeforeRunning extends Error {
  constructor(readonly argv: Arguments) {
    super('parsed; the command was not run')
  }
}

/** The commands src/main.ts registers (serve, then every client command), as strict as its parser. */
function memsvcParser(): Argv {
  return (
    registerClientCommands(yargs().scriptName('memsvc').command('serve', 'Run the server', describeServeOptions))
      .demandCommand(1, 'Name a command; see --help.')
      .strict()
      .help()
      .alias('h', 'help')
      .version('0.0.0-test')
      // One line per option, command and example, so the help can be read back.
      .wrap(null)
  )
}

/** What the CLI makes of a command line; rejects with yargs' own message when it refuses it. */
async function parseCommandLine(args: string[]): Promise<Arguments> {
  const parser = memsvcParser()
    .middleware((argv) => {
      throw new ParsedBeforeRunning(argv)
    }, false)
    .fail((message, error) => {
      throw error ?? new Error(message)
    })
  try {
    await parser.parseAsync(args)
  } catch (error) {
    if (error instanceof ParsedBeforeRunning) return error.argv
    throw new Error(`memsvc ${args.join(' ')}: ${(error as Error).message}`)
  }
  throw new Error(`memsvc ${args.join(' ')}: parsed, but no command was reached`)
}

async function helpText(commandPath: string[]): Promise<string> {
  let help = ''
  await memsvcParser().parseAsync([...commandPath, '--help'], {}, (_error, _argv, output) => {
    help = output
  })
  return help
}

interface OptionHelp {
  flag: string
  type: 'boolean' | 'string' | 'array' | 'number' | 'count'
  required: boolean
  line: string
}

interface CommandHelp {
  path: string[]
  /** From the usage line: `<id>` and `[content]` take one word, `<paths..>` the rest. */
  positionals: Array<{ name: string; variadic: boolean }>
  /** By flag and by alias (`-o` → output). */
  options: Map<string, OptionHelp>
  examples: string[]
  subcommands: string[][]
}

// With wrap(null) yargs lays out `  -o, --output  describe  [string] [choices: …]` on one line.
const OPTION_LINE =
  /^ {2}(?:-(?<alias>\w), | {4})--(?<flag>[\w-]+) .*?\[(?<type>boolean|string|array|number|count)\](?<tags>.*)$/
/** Columns of the Commands and Examples sections are at least two spaces apart. */
const COLUMN_GAP = /\s{2,}/

/** The lines of a section (`Examples:`), up to the blank line that ends it. */
function section(lines: string[], heading: string): string[] {
  const start = lines.indexOf(heading)
  if (start < 0) return []
  const end = lines.indexOf('', start)
  return lines.slice(start + 1, end < 0 ? undefined : end).map((line) => line.trim())
}

/** `memsvc apikey update <id>  Activate…` → the words before the first placeholder. */
function commandWords(usage: string): { words: string[]; placeholders: string[] } {
  const [, ...words] = usage.split(COLUMN_GAP)[0]!.split(' ')
  const first = words.findIndex((word) => /^[<[]/.test(word))
  return first < 0 ? { words, placeholders: [] } : { words: words.slice(0, first), placeholders: words.slice(first) }
}

function readHelp(commandPath: string[], text: string): CommandHelp {
  const lines = text.split('\n')
  const options = new Map<string, OptionHelp>()
  for (const line of lines) {
    const match = OPTION_LINE.exec(line)
    if (!match?.groups) continue
    const { alias, flag, type, tags } = match.groups as Record<string, string>
    const option = { flag: flag!, type: type as OptionHelp['type'], required: tags!.includes('[required]'), line }
    options.set(option.flag, option)
    if (alias) options.set(alias, option)
  }
  return {
    path: commandPath,
    positionals: commandWords(lines[0]!).placeholders.map((placeholder) => ({
      name: placeholder.replace(/[<>[\]]|\.\./g, ''),
      variadic: placeholder.includes('..'),
    })),
    options,
    examples: section(lines, 'Examples:').map((line) => line.split(COLUMN_GAP)[0]!),
    subcommands: section(lines, 'Commands:').map((line) => commandWords(line).words),
  }
}

async function walkCommands(commandPath: string[] = []): Promise<CommandHelp[]> {
  const help = readHelp(commandPath, await helpText(commandPath))
  const below = await Promise.all(help.subcommands.map((subcommand) => walkCommands(subcommand)))
  return [help, ...below.flat()]
}

/** The words of a shell line, one list per command of a pipeline; quotes group words and are dropped. */
function shellWords(line: string): string[][] {
  const pipeline: string[][] = [[]]
  let word: string | undefined
  let quote: string | undefined
  const endWord = () => {
    if (word !== undefined) pipeline.at(-1)!.push(word)
    word = undefined
  }
  for (const char of line) {
    if (quote) {
      if (char === quote) quote = undefined
      else word += char
    } else if (char === '"' || char === "'") {
      quote = char
      word ??= ''
    } else if (char === ' ') endWord()
    else if (char === '|') {
      endWord()
      pipeline.push([])
    } else word = (word ?? '') + char
  }
  if (quote) throw new Error(`unbalanced ${quote} in the example: ${line}`)
  endWord()
  return pipeline
}

/** The arguments memsvc gets from an example (`sudo ./memsvc system install`, `cat f | memsvc …`). */
function memsvcArgs(line: string): string[] {
  for (const words of shellWords(line)) {
    const program = words.findIndex((word) => path.basename(word) === 'memsvc')
    if (program >= 0) return words.slice(program + 1)
  }
  throw new Error(`the example does not run memsvc: ${line}`)
}

const COMMANDS = await walkCommands()
/** The commands that run (the others only group subcommands). */
const RUNNABLE = COMMANDS.filter((command) => command.subcommands.length === 0)
const EXAMPLES = [...new Set(COMMANDS.flatMap((command) => command.examples))]

/** The command an argument list names: the longest command path it starts with. */
function commandOf(args: string[]): CommandHelp {
  const matches = RUNNABLE.filter((command) => command.path.every((word, index) => args[index] === word))
  const longest = matches.sort((a, b) => b.path.length - a.path.length)[0]
  if (!longest) throw new Error(`no command of memsvc --help is "${args.join(' ')}"`)
  return longest
}

interface Reading {
  command: string[]
  positionals: Record<string, string | string[] | undefined>
  options: Record<string, string[] | boolean>
}

/**
 * How the help says the arguments read: a boolean flag (or its --no- form) takes no
 * value, every other flag exactly the next word, and the words left over fill the
 * positionals of the usage line in order.
 */
function readingByHelp(command: CommandHelp, args: string[]): Reading {
  const options: Record<string, string[] | boolean> = {}
  const words: string[] = []
  const rest = args.slice(command.path.length)
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index]!
    if (!arg.startsWith('-')) {
      words.push(arg)
      continue
    }
    const [name, inlineValue] = arg.replace(/^--?/, '').split(/=(.*)/s) as [string, string | undefined]
    // yargs reads --no-X as X=false, also when the help lists --no-X itself (X hidden, as for --no-credentials).
    if (
      name.startsWith('no-') &&
      (command.options.get(name.slice(3)) ?? command.options.get(name))?.type === 'boolean'
    ) {
      options[name.slice(3)] = false
      continue
    }
    const option = command.options.get(name)
    if (!option) throw new Error(`${arg} is not an option of memsvc ${command.path.join(' ')} --help`)
    if (option.type === 'boolean') options[option.flag] = true
    else {
      const value = inlineValue ?? rest[++index]
      if (value === undefined) throw new Error(`${arg} needs a value in: memsvc ${args.join(' ')}`)
      options[option.flag] = [...((options[option.flag] as string[] | undefined) ?? []), value]
    }
  }
  const positionals: Reading['positionals'] = {}
  for (const positional of command.positionals)
    positionals[positional.name] = positional.variadic ? words.splice(0) : words.shift()
  if (words.length > 0) throw new Error(`${words.join(' ')}: more words than memsvc ${command.path.join(' ')} takes`)
  return { command: command.path, positionals, options }
}

/** The parsed arguments in the shape of `expected`, so that one comparison shows every difference. */
function readingByParser(command: CommandHelp, argv: Arguments, expected: Reading): Reading {
  const positionals: Reading['positionals'] = {}
  for (const { name, variadic } of command.positionals) {
    const value = argv[name]
    positionals[name] = variadic ? asList(value) : (value as string | undefined)
  }
  const options: Reading['options'] = {}
  for (const [flag, value] of Object.entries(expected.options))
    options[flag] = typeof value === 'boolean' ? (argv[flag] as boolean) : asList(argv[flag])
  return { command: argv._.map(String), positionals, options }
}

async function expectParsedAsHelpSays(args: string[]): Promise<void> {
  const command = commandOf(args)
  const expected = readingByHelp(command, args)
  expect(readingByParser(command, await parseCommandLine(args), expected)).toEqual(expected)
}

describe('memsvc --help examples', () => {
  it('reads the help of every command, serve and the client commands alike', () => {
    const paths = RUNNABLE.map((command) => command.path.join(' '))
    for (const expected of ['serve', 'init', 'apikey update', 'embedder update', 'memory retrieve', 'space update'])
      expect(paths).toContain(expected)
    expect(EXAMPLES.length).toBeGreaterThan(RUNNABLE.length)
  })

  it.each(EXAMPLES)('parses into the command, positionals and options its help describes: %s', async (line) => {
    await expectParsedAsHelpSays(memsvcArgs(line))
  })
})

/** Every repeatable option of a command that also takes positionals: where a greedy option would swallow them. */
const REPEATABLE_BEFORE_POSITIONALS = RUNNABLE.filter((command) => command.positionals.length > 0).flatMap((command) =>
  [...new Set(command.options.values())]
    .filter((option) => option.type === 'array')
    .map((option) => ({ command, flag: option.flag, name: `${command.path.join(' ')} --${option.flag}` })),
)

describe('repeatable options', () => {
  it('memory retrieve --space S "what moon has an ocean": both the space and the message arrive', async () => {
    const argv = await parseCommandLine(['memory', 'retrieve', '--space', 'S', 'what moon has an ocean'])
    expect({ space: argv.space, message: argv.message }).toEqual({ space: ['S'], message: 'what moon has an ocean' })
  })

  it('memory retrieve takes --space once per space, before or after the message', async () => {
    for (const args of [
      ['memory', 'retrieve', '--space', 'A', '--space', 'B', 'what moon has an ocean'],
      ['memory', 'retrieve', 'what moon has an ocean', '--space', 'A', '--space', 'B'],
      ['memory', 'retrieve', '--space', 'A', 'what moon has an ocean', '--space', 'B'],
    ]) {
      const argv = await parseCommandLine(args)
      expect({ space: argv.space, message: argv.message }, args.join(' ')).toEqual({
        space: ['A', 'B'],
        message: 'what moon has an ocean',
      })
    }
  })

  it('a second word after --space is not a second space: memory retrieve refuses the extra word', async () => {
    await expect(parseCommandLine(['memory', 'retrieve', '--space', 'A', 'B', 'what moon'])).rejects.toThrow(
      /Unknown argument: what moon/,
    )
  })

  it('a repeatable option without a value is refused, naming the flag', async () => {
    await expect(parseCommandLine(['memory', 'retrieve', 'what moon', '--space'])).rejects.toThrow(
      /Not enough arguments following: space/,
    )
  })

  it('every repeatable option says "repeatable" in its help', () => {
    const silent = RUNNABLE.flatMap((command) =>
      [...new Set(command.options.values())]
        .filter((option) => option.type === 'array' && !option.line.includes('repeatable'))
        .map((option) => `${command.path.join(' ')} --${option.flag}`),
    )
    expect(silent).toEqual([])
  })

  it('finds the repeatable options of commands with positionals, memory retrieve --space among them', () => {
    expect(REPEATABLE_BEFORE_POSITIONALS.map(({ name }) => name)).toContain('memory retrieve --space')
  })

  it.each(REPEATABLE_BEFORE_POSITIONALS)(
    '$name takes one value and leaves the positionals after it to the command',
    async ({ command, flag }) => {
      const positionalWords = command.positionals.flatMap(({ name, variadic }) =>
        variadic ? [`${name}-1`, `${name}-2`] : [`${name}-value`],
      )
      const requiredOptions = [...new Set(command.options.values())]
        .filter((option) => option.required && option.flag !== flag)
        .flatMap((option) => [`--${option.flag}`, `${option.flag}-value`])
      await expectParsedAsHelpSays([
        ...command.path,
        `--${flag}`,
        `${flag}-value`,
        ...positionalWords,
        ...requiredOptions,
      ])
    },
  )
})
