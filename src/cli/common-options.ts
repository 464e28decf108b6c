// Option tables shared by several command groups, so that e.g. paging and labels
// read the same everywhere.
import type { Options } from 'yargs'
import type { MemsvcClient } from '../../sdk/src/index.js'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../validation/limits.js'
import type { ClientSettings } from './client-settings.js'
import { type Args, fetchPages } from './command.js'
import { parseInteger, parseLabels } from './option-parsing.js'
import { type Listing, printPage } from './output.js'

/**
 * A repeatable option: `--label a=1 --label b=2`, one value per occurrence. A yargs array
 * otherwise takes every word up to the next flag, so `--space S "a question"` would swallow
 * the positional after it. Say "repeatable" in `describe`: the help's [array] alone does not
 * tell people to repeat the flag.
 */
export function repeatable(options: Omit<Options, 'type' | 'array' | 'nargs'> & { describe: string }): Options {
  return { ...options, type: 'string', array: true, nargs: 1 }
}

export const PAGING_OPTIONS = {
  'max-results': {
    type: 'string',
    describe: `Page size, 1-${MAX_PAGE_SIZE} (server default ${DEFAULT_PAGE_SIZE})`,
    requiresArg: true,
  },
  'next-token': { type: 'string', describe: 'Continue from the token a previous page printed', requiresArg: true },
  all: { type: 'boolean', describe: 'Follow every page and print them as one list' },
} as const satisfies Record<string, Options>

export const OWNER_FILTER_OPTION = {
  'owner-id': { type: 'string', describe: "Only this user's (admins)", requiresArg: true },
} as const satisfies Record<string, Options>

export const LABEL_FILTER_OPTION = {
  label: repeatable({ describe: 'Only those with this label, key=value (repeatable; all must match)' }),
} as const satisfies Record<string, Options>

export const LABEL_OPTION = {
  label: repeatable({ describe: 'A label, key=value (repeatable)' }),
} as const satisfies Record<string, Options>

/** --replace-label / --merge-label / --clear-labels: one way to change labels per update. */
export const LABEL_UPDATE_OPTIONS = {
  'replace-label': repeatable({
    describe: 'Replace ALL labels with these, key=value (repeatable)',
    conflicts: ['merge-label', 'clear-labels'],
  }),
  'merge-label': repeatable({
    describe: 'Add or change these labels, keeping the others, key=value (repeatable)',
    conflicts: ['clear-labels'],
  }),
  'clear-labels': { type: 'boolean', describe: 'Remove every label' },
} as const satisfies Record<string, Options>

export const OWNER_OPTION = {
  'owner-id': {
    type: 'string',
    describe: 'Create it for this user (needs the _ANY permission, i.e. an admin)',
    requiresArg: true,
  },
} as const satisfies Record<string, Options>

/** The paging fields of a list request. */
export interface Paging {
  maxResults?: number
  nextToken?: string
}

export function pagingRequest(argv: Args): Paging {
  return {
    maxResults:
      argv.maxResults === undefined
        ? undefined
        : parseInteger(argv.maxResults, 'max-results', { min: 1, max: MAX_PAGE_SIZE }),
    nextToken: argv.nextToken === undefined ? undefined : String(argv.nextToken),
  }
}

/**
 * What a `list` command prints: the page at `paging.nextToken`, or with --all every page, each
 * fetched by `list` (the command's own call and filters) and its items read from `listing.field`.
 */
export async function printListedPages<Field extends string, Item>(
  argv: Args,
  settings: ClientSettings,
  paging: Paging,
  list: (api: MemsvcClient, paging: Paging) => Promise<{ [Key in Field]: Item[] } & { nextToken?: string }>,
  listing: Listing<Item> & { field: Field },
): Promise<void> {
  const page = await fetchPages(settings, paging.nextToken, argv.all === true, async (api, nextToken) => {
    const response = await list(api, { maxResults: paging.maxResults, nextToken })
    return { items: response[listing.field], nextToken: response.nextToken }
  })
  printPage(settings.output, page, listing)
}

/** The update request's label fields from --replace-label / --merge-label / --clear-labels. */
export function labelUpdate(argv: Args): {
  replaceLabels?: { items: Record<string, string> }
  mergeLabels?: { items: Record<string, string> }
} {
  if (argv.clearLabels) return { replaceLabels: { items: {} } }
  const replace = parseLabels(argv.replaceLabel, 'replace-label')
  const merge = parseLabels(argv.mergeLabel, 'merge-label')
  return { replaceLabels: replace && { items: replace }, mergeLabels: merge && { items: merge } }
}
