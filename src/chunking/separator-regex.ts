import { RE2JS, RE2JSSyntaxException } from 're2js'
import { estimatedProgramSize } from './regex-size-estimate.js'
import { runWithinTimeBudget, TimeBudgetExceeded } from './time-budget.js'

/**
 * Regex separators are RE2 patterns, run by re2js (a pure-JavaScript port of RE2). JavaScript's
 * own engine backtracks: `(a+)+$` over 31 `a`s and a `b` held the event loop for 21.6 s. RE2
 * never backtracks, so one search costs at most the text's length times the pattern's size.
 * The price is RE2's syntax: no lookaround and no backreferences, which need backtracking.
 */

/**
 * A search steps through up to this many instructions for each character it reads, and
 * compiling costs about 2 µs each, so the limit bounds both. Separators need far less:
 * `\n#{1,6} ` compiles to 15, `(?:Chapter|Section|Part|Appendix) [0-9IVXLC]+` to 34.
 */
export const MAX_SEPARATOR_PROGRAM_SIZE = 100
/**
 * Patterns estimated past this are refused without compiling them (regex-size-estimate.ts);
 * the estimate runs high on alternations RE2 folds into a class, hence the room above the limit.
 */
const MAX_ESTIMATE_TO_COMPILE = 10 * MAX_SEPARATOR_PROGRAM_SIZE

/** The constructs RE2 refuses that a JavaScript pattern may use, told apart by where RE2 stopped. */
const UNSUPPORTED_CONSTRUCTS: Array<[startsWith: RegExp, why: string]> = [
  [/^\(\?[=!]/, 'lookahead ((?= and (?!) is not supported'],
  [/^\(\?<[=!]/, 'lookbehind ((?<= and (?<!) is not supported'],
  [/^\\(?:[1-9]|k)/, 'backreferences (\\1, \\k<name>) are not supported'],
]

function describeSyntaxError(error: RE2JSSyntaxException): string {
  const fragment = error.getPattern() ?? ''
  const unsupported = UNSUPPORTED_CONSTRUCTS.find(([startsWith]) => startsWith.test(fragment))
  if (unsupported) return `${unsupported[1]}: separators are RE2 regular expressions, which never backtrack`
  const where = fragment ? `: \`${fragment}\`` : ''
  return `is not an RE2 regular expression (${error.getDescription()}${where})`
}

/** RE2's metacharacters: a pattern without any matches exactly itself, and needs no regex engine. */
const REGEX_SYNTAX = /[\\.+*?()|[\]{}^$]/
export const isLiteralPattern = (pattern: string): boolean => !REGEX_SYNTAX.test(pattern)

const tooComplex = (size: string) =>
  `is too complex: it compiles to ${size} instructions, at most ${MAX_SEPARATOR_PROGRAM_SIZE}`

export class SeparatorRegexError extends Error {
  override name = 'SeparatorRegexError'
}

/** The compiled pattern, or a SeparatorRegexError whose message says why it is refused. */
export function compileSeparatorRegex(pattern: string): RE2JS {
  const estimate = estimatedProgramSize(pattern)
  if (estimate > MAX_ESTIMATE_TO_COMPILE) throw new SeparatorRegexError(tooComplex(`about ${estimate}`))
  let compiled: RE2JS
  try {
    compiled = RE2JS.compile(pattern)
  } catch (error) {
    if (error instanceof RE2JSSyntaxException) throw new SeparatorRegexError(describeSyntaxError(error))
    throw new SeparatorRegexError(`is not an RE2 regular expression (${(error as Error).message})`)
  }
  const size = compiled.programSize()
  if (size > MAX_SEPARATOR_PROGRAM_SIZE) throw new SeparatorRegexError(tooComplex(String(size)))
  return compiled
}

/**
 * Compiling one setting's separators may hold the event loop this long. Real separators
 * compile in under 0.1 ms; case-insensitive wide ranges do not: `(?i)[A-\x{FFFF}]` five times
 * over takes 24 ms (55 ms cold), as re2js folds the case of every character in the range.
 */
export const SEPARATORS_COMPILE_BUDGET_MS = 50

/** Batches repeat one chunking setting across their memories: each pattern is judged once. */
const KNOWN_PROBLEMS_LIMIT = 1_000
const knownProblems = new Map<string, string | undefined>()

function remember(pattern: string, problem: string | undefined): string | undefined {
  if (knownProblems.size >= KNOWN_PROBLEMS_LIMIT) knownProblems.clear()
  knownProblems.set(pattern, problem)
  return problem
}

function judge(pattern: string): string | undefined {
  if (knownProblems.has(pattern)) return knownProblems.get(pattern)
  try {
    compileSeparatorRegex(pattern)
    return remember(pattern, undefined)
  } catch (error) {
    if (!(error instanceof SeparatorRegexError)) throw error
    return remember(pattern, error.message)
  }
}

const needsCompiling = (pattern: string) => !isLiteralPattern(pattern) && !knownProblems.has(pattern)

/** The first separator that cannot be a regex separator, and why; undefined when all can. */
export function firstSeparatorRegexProblem(
  patterns: readonly string[],
): { index: number; problem: string } | undefined {
  let judging = 0
  let compiledBefore = false
  const judgeAll = () => {
    for (const [index, pattern] of patterns.entries()) {
      judging = index
      if (isLiteralPattern(pattern)) continue
      const compiles = needsCompiling(pattern)
      const problem = judge(pattern)
      compiledBefore ||= compiles
      if (problem) return { index, problem }
    }
    return undefined
  }
  // The budget's watchdog costs 0.4 ms: literals and patterns judged before go without. A run
  // stopped mid-compile leaves the memo whole: a pattern is written to it only once judged.
  if (!patterns.some(needsCompiling)) return judgeAll()
  try {
    return runWithinTimeBudget(SEPARATORS_COMPILE_BUDGET_MS, judgeAll)
  } catch (error) {
    if (!(error instanceof TimeBudgetExceeded)) throw error
    const problem =
      `the separators took longer than ${SEPARATORS_COMPILE_BUDGET_MS} ms to compile, stopped at this one ` +
      '(case-insensitive wide character ranges are the usual cause)'
    // Remembered only when this pattern had the whole budget to itself.
    if (!compiledBefore) remember(patterns[judging]!, problem)
    return { index: judging, problem }
  }
}

/** Why the pattern cannot be a regex separator, or undefined when it can. */
export const separatorRegexProblem = (pattern: string): string | undefined =>
  firstSeparatorRegexProblem([pattern])?.problem
