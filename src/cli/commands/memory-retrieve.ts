// memsvc memory retrieve "message" --space ID [--space ID…]: prints the stream as it arrives.
import type { Argv } from 'yargs'
import {
  RetrievalMode,
  type RetrieveMemoryEvent,
  type RetrieveMemoryRequest,
  type ScoreParts,
} from '../../generated/memsvc/v1/memories.js'
import { chunkSourceLabel } from '../chunk-source-label.js'
import { type Args, clientHandler, withOptions } from '../command.js'
import { repeatable } from '../common-options.js'
import { withConnection } from '../connection.js'
import { badInput, CliError, EXIT_FAILED } from '../exit-codes.js'
import { asList, lastValue, parseChoice, parseInteger, parseNumber } from '../option-parsing.js'
import { fitToWidth, terminalWidth } from '../table.js'
import { chunkingJson } from './space.js'

const MODES = [RetrievalMode.HYBRID, RetrievalMode.VECTOR, RetrievalMode.KEYWORD] as const
const MAX_SIZE = 100
/**
 * Rows are printed one by one as the items arrive, so the columns cannot be sized to the
 * rows: RANK, SCORE and the memory id have fixed widths and the chunk text gets the rest of
 * the terminal (CHUNK_WIDTH_WITHOUT_TERMINAL when the output is not a terminal).
 */
const RANK_WIDTH = 4
const SCORE_WIDTH = 6
const MEMORY_WIDTH = 36
const GAP = '  '
const MIN_CHUNK_WIDTH = 20
const CHUNK_WIDTH_WITHOUT_TERMINAL = 80
/** --score-parts: RELEVANCE and RECENCY as 0.000, AGE as its largest unit (12d, 5h, 30s). */
const PART_WIDTH = 9
const AGE_WIDTH = 6

const SECONDS_PER_UNIT: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 }
/** 30d, 12h, 90m, 3600s, 1w2d, or plain seconds (decimals allowed). */
const DURATION = /^(?:\d+(?:\.\d+)?[smhdw])+$/
const SECONDS = /^\d+(?:\.\d+)?$/

/** A half-life in seconds; its range (more than 0, at most 100 years) is the server's to check. */
export function parseHalfLife(text: string): number {
  const trimmed = text.trim().toLowerCase()
  if (SECONDS.test(trimmed)) return Number(trimmed)
  if (DURATION.test(trimmed)) {
    let total = 0
    for (const [, amount, unit] of trimmed.matchAll(/(\d+(?:\.\d+)?)([smhdw])/g))
      total += Number(amount) * SECONDS_PER_UNIT[unit!]!
    return total
  }
  throw badInput(`--recency-half-life "${text}": give a duration (30d, 12h, 90m, 3600s) or a number of seconds`)
}

/** An age as its largest whole unit: 3d, 5h, 12m, 40s. */
function shortAge(seconds: number): string {
  for (const unit of ['d', 'h', 'm'] as const)
    if (seconds >= SECONDS_PER_UNIT[unit]!) return `${Math.floor(seconds / SECONDS_PER_UNIT[unit]!)}${unit}`
  return `${Math.floor(seconds)}s`
}

function requestFrom(argv: Args): RetrieveMemoryRequest {
  const spaces = asList(argv.space)
  if (spaces.length === 0) throw badInput('--space is required (give it once per space)')
  const filter = lastValue(argv.filter)
  const size = lastValue(argv.size)
  const mode = lastValue(argv.mode)
  const halfLife = lastValue(argv['recency-half-life'])
  const weight = lastValue(argv['recency-weight'])
  if (weight !== undefined && halfLife === undefined)
    throw badInput('--recency-weight needs --recency-half-life (how fast a memory stops counting as recent)')
  return {
    message: String(argv.message),
    spaceKeys: spaces.map((spaceId) => ({ spaceId, embedderWeights: [], filter })),
    requestedSize: size === undefined ? undefined : parseInteger(size, 'size', { min: 1, max: MAX_SIZE }),
    fetchMemory: true,
    fetchMemoryContent: undefined,
    mode:
      mode === undefined ? RetrievalMode.RETRIEVAL_MODE_UNSPECIFIED : parseChoice(mode.toUpperCase(), '--mode', MODES),
    hnsw: undefined,
    postProcessor:
      argv.reranker === undefined && argv.llm === undefined
        ? undefined
        : { rerankerId: lastValue(argv.reranker), llmId: lastValue(argv.llm) },
    recency:
      halfLife === undefined
        ? undefined
        : {
            halfLifeSeconds: parseHalfLife(halfLife),
            weight: weight === undefined ? undefined : parseNumber(weight, 'recency-weight'),
          },
    includeExpired: argv['include-expired'] === true ? true : undefined,
  }
}

/** The event as the REST API writes it: `{<kind>: value}`, enums as names. */
function eventJson(message: RetrieveMemoryEvent): Record<string, unknown> {
  const event = message.event
  if (!event) return {}
  if (event.$case === 'memoryDefinition') {
    const memory = event.value.memory
    return {
      memoryDefinition: { memory: memory && { ...memory, chunkingConfig: chunkingJson(memory.chunkingConfig) } },
    }
  }
  // REST leaves notices out when there are none; a repeated field is always there.
  if (event.$case === 'resultSetBoundary' && event.value.notices.length === 0) {
    const { notices: _none, ...boundary } = event.value
    return { resultSetBoundary: boundary }
  }
  return { [event.$case]: event.value }
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim()

/** Prints the table rows and the answer as events arrive; remembers a status for the end. */
class TablePrinter {
  readonly #chunkWidth: number
  /** --score-parts: each row also shows the relevance, the recency and the memory's age recency was counted from. */
  readonly #scoreParts: boolean
  /** Documents' file names from the memory definitions, for the source of their chunks ("report.pdf p.12"). */
  readonly #fileNames = new Map<string, string>()
  #rank = 0
  status: { code: string; message: string } | undefined

  constructor(scoreParts: boolean) {
    this.#scoreParts = scoreParts
    const width = terminalWidth()
    const parts = scoreParts ? PART_WIDTH * 2 + AGE_WIDTH + GAP.length * 3 : 0
    const fixed = RANK_WIDTH + SCORE_WIDTH + MEMORY_WIDTH + GAP.length * 3 + parts
    this.#chunkWidth = Number.isFinite(width) ? Math.max(MIN_CHUNK_WIDTH, width - fixed) : CHUNK_WIDTH_WITHOUT_TERMINAL
  }

  take(message: RetrieveMemoryEvent): void {
    const event = message.event
    if (event?.$case === 'resultSetBoundary' && event.value.kind === 'BEGIN') {
      // On stderr, as the command's other remarks: the table on stdout stays rows only.
      for (const notice of event.value.notices) process.stderr.write(`note: ${notice.message}\n`)
      if (event.value.expectedItems === 0) process.stdout.write('no results\n')
      else
        process.stdout.write(
          `${[
            'RANK'.padEnd(RANK_WIDTH),
            'SCORE'.padEnd(SCORE_WIDTH),
            ...(this.#scoreParts
              ? ['RELEVANCE'.padEnd(PART_WIDTH), 'RECENCY'.padEnd(PART_WIDTH), 'AGE'.padEnd(AGE_WIDTH)]
              : []),
            'MEMORY'.padEnd(MEMORY_WIDTH),
            'CHUNK',
          ].join(GAP)}\n`,
        )
    } else if (event?.$case === 'memoryDefinition' && event.value.memory?.fileName) {
      this.#fileNames.set(event.value.memory.memoryId, event.value.memory.fileName)
    } else if (event?.$case === 'retrievedItem' && event.value.chunk) {
      const chunk = event.value.chunk
      const source = chunkSourceLabel(chunk.source, this.#fileNames.get(chunk.memoryId))
      this.#rank++
      const row = [
        String(this.#rank).padEnd(RANK_WIDTH),
        chunk.relevanceScore.toFixed(3).padEnd(SCORE_WIDTH),
        ...(this.#scoreParts ? this.#partsColumns(chunk.scoreParts) : []),
        chunk.memoryId.padEnd(MEMORY_WIDTH),
        fitToWidth(oneLine(source ? `[${source}] ${chunk.chunkText}` : chunk.chunkText), this.#chunkWidth).trimEnd(),
      ]
      process.stdout.write(`${row.join(GAP)}\n`)
    } else if (event?.$case === 'abstractReply') {
      process.stdout.write(`\nanswer:\n${event.value.text.trimEnd()}\n`)
    } else if (event?.$case === 'status') {
      this.status = event.value
    }
  }

  /** Without recency the score is all relevance: the other columns say "-". */
  #partsColumns(parts: ScoreParts | undefined): string[] {
    if (!parts) return ['-'.padEnd(PART_WIDTH), '-'.padEnd(PART_WIDTH), '-'.padEnd(AGE_WIDTH)]
    return [
      parts.relevance.toFixed(3).padEnd(PART_WIDTH),
      parts.recency.toFixed(3).padEnd(PART_WIDTH),
      shortAge(parts.ageSeconds).padEnd(AGE_WIDTH),
    ]
  }
}

const retrieve = clientHandler(async (argv, settings) => {
  const request = requestFrom(argv)
  let status: { code: string; message: string } | undefined
  await withConnection(settings, { authenticated: true }, async (connection) => {
    const printer = new TablePrinter(argv['score-parts'] === true)
    for await (const message of connection.stream((api) => api.memories.retrieve(request))) {
      if (settings.output === 'json') {
        process.stdout.write(`${JSON.stringify(eventJson(message))}\n`)
        if (message.event?.$case === 'status') status = message.event.value
      } else printer.take(message)
    }
    status ??= printer.status
  })
  // The items went out but the stream ended with an error (the LLM failed): say so and fail.
  if (status) throw new CliError(`the answer is incomplete: ${status.code}: ${status.message}`, EXIT_FAILED)
})

export function retrieveSubcommand() {
  return {
    command: 'retrieve <message>',
    describe:
      'Find the chunks most relevant to a message in one or more spaces, printed as they arrive; ' +
      'optionally rerank them and have an LLM answer',
    builder: (command: Argv) =>
      withOptions(command.positional('message', { type: 'string', describe: 'The question or text to match' }), {
        space: repeatable({ describe: 'A space to search (required; repeatable: --space A --space B)' }),
        filter: {
          type: 'string',
          describe: "A metadata filter for every space, e.g. \"val('$.topic') = 'travel'\"",
          requiresArg: true,
        },
        reranker: { type: 'string', describe: 'Rerank the results with this reranker', requiresArg: true },
        llm: { type: 'string', describe: 'Have this LLM answer the message from the results', requiresArg: true },
        size: { type: 'string', describe: `Results wanted, 1 to ${MAX_SIZE} (default 10)`, requiresArg: true },
        mode: { type: 'string', describe: `${MODES.join(', ')} (default HYBRID)`, requiresArg: true },
        'recency-half-life': {
          type: 'string',
          describe:
            'Rank newer memories higher: after this long a memory counts half as recent (30d, 12h, 3600s, seconds)',
          requiresArg: true,
        },
        'recency-weight': {
          type: 'string',
          describe: 'How much recency weighs against relevance, 0 to 1 (default 0.3)',
          requiresArg: true,
        },
        'include-expired': { type: 'boolean', describe: 'Also answer memories whose validUntil has passed' },
        'score-parts': { type: 'boolean', describe: 'Show the relevance, recency and age each score was made of' },
      })
        .example('$0 memory retrieve "Which tower stands in Paris?" --space 7f3a… --space 9b1c…', 'search two spaces')
        .example(
          '$0 memory retrieve "tower" --space 7f3a… --filter "val(\'$.topic\') = \'travel\'" --reranker 41d2… --llm 0c9e…',
          'filtered, reranked, with an answer',
        )
        .example('$0 memory retrieve "tower" --space 7f3a… -o json', 'the events as NDJSON, one per line')
        .example(
          '$0 memory retrieve "tower" --space 7f3a… --recency-half-life 30d --score-parts',
          'newer memories first, with the parts of each score',
        )
        .example(
          '$0 memory retrieve --space 7f3a… --space 9b1c… "what moon has an ocean"',
          'options before the message: one space per --space',
        ),
    handler: retrieve,
  }
}
