/**
 * About how many instructions RE2 compiles a pattern to, read from its text alone. Compiling
 * takes time in proportion to the program: `.{1000}` twelve times over is 12,002 instructions
 * and 4 ms (35 ms cold), so a batch of 500 memories with 20 such separators each held the
 * event loop for 41 s while it was validated. Counting first refuses those for the price of
 * reading 100 characters. The count follows RE2's compiler closely (a rune or class is one
 * instruction, a capture two, an optional copy two); it only decides whether to compile, and
 * the compiled program's own size has the last word.
 */

interface Sequence {
  /** Instructions of everything read so far in this group. */
  total: number
  /** Instructions of the last item, which a following quantifier repeats. */
  last: number
}

/** RE2's counted repetition: {n}, {n,} or {n,m}. Anything else starting with { is a literal. */
const COUNTED_REPEAT = /\{(\d+)(?:,(\d*))?\}/y
/** RE2 refuses counts above 1000; anything larger only needs to stay larger. */
const MAX_COUNT = 1_001
const CAPTURE_INSTRUCTIONS = 2
const ALTERNATIVE_INSTRUCTIONS = 2

/** The index after the escape that starts at `index` (\x{…}, \p{…}, \P{…} run to their brace). */
function afterEscape(pattern: string, index: number): number {
  const kind = pattern[index + 1]
  if ((kind === 'x' || kind === 'p' || kind === 'P') && pattern[index + 2] === '{') {
    const close = pattern.indexOf('}', index + 3)
    return close === -1 ? pattern.length : close + 1
  }
  return index + 2
}

/** The index after the character class that starts at `index`. */
function afterClass(pattern: string, index: number): number {
  let cursor = index + 1
  if (pattern[cursor] === '^') cursor++
  if (pattern[cursor] === ']') cursor++ // a ] first in the class is a literal
  while (cursor < pattern.length && pattern[cursor] !== ']') {
    if (pattern[cursor] === '\\') cursor = afterEscape(pattern, cursor)
    else if (pattern.startsWith('[:', cursor)) {
      const close = pattern.indexOf(':]', cursor + 2)
      cursor = close === -1 ? cursor + 1 : close + 2
    } else cursor++
  }
  return cursor + 1
}

export function estimatedProgramSize(pattern: string): number {
  const groups: Sequence[] = [{ total: 0, last: 0 }]
  const current = () => groups[groups.length - 1]!
  const item = (size: number) => {
    current().total += size
    current().last = size
  }
  const closeGroup = () => {
    const group = groups.pop()!
    item(group.total + CAPTURE_INSTRUCTIONS)
  }
  let index = 0
  while (index < pattern.length) {
    const char = pattern[index]!
    if (char === '\\' && pattern[index + 1] === 'Q') {
      // \Q…\E quotes a literal: one instruction per character.
      const end = pattern.indexOf('\\E', index + 2)
      const quoted = (end === -1 ? pattern.length : end) - (index + 2)
      item(Math.max(quoted, 0))
      index = end === -1 ? pattern.length : end + 2
    } else if (char === '\\') {
      index = afterEscape(pattern, index)
      item(1)
    } else if (char === '[') {
      index = afterClass(pattern, index)
      item(1)
    } else if (char === '(') {
      groups.push({ total: 0, last: 0 })
      index++
    } else if (char === ')') {
      if (groups.length > 1) closeGroup()
      index++
    } else if (char === '|') {
      current().total += ALTERNATIVE_INSTRUCTIONS
      current().last = 0
      index++
    } else if (char === '*' || char === '+' || char === '?') {
      current().total += 1
      current().last += 1
      index++
    } else if (char === '{') {
      COUNTED_REPEAT.lastIndex = index
      const repeat = COUNTED_REPEAT.exec(pattern)
      if (!repeat) {
        item(1)
        index++
        continue
      }
      const min = Math.min(Number(repeat[1]), MAX_COUNT)
      const max = repeat[2] === undefined ? min : repeat[2] === '' ? min + 1 : Math.min(Number(repeat[2]), MAX_COUNT)
      // n required copies, then each optional copy with the split that skips it.
      const copies = min + 2 * Math.max(max - min, 0)
      const sequence = current()
      sequence.total += sequence.last * (copies - 1)
      sequence.last *= copies
      index = COUNTED_REPEAT.lastIndex
    } else {
      item(1)
      index++
    }
  }
  while (groups.length > 1) closeGroup()
  return current().total
}
