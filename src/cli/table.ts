// Plain-text tables sized to the terminal. When the rows are wider than the screen,
// the widest columns give up characters first (ellipsis), so narrow columns such as
// STATUS stay readable. Without a terminal (a pipe) nothing is cut.

export interface Column<Row> {
  header: string
  value: (row: Row) => string
  /** Never narrower than this when shrinking (the header is always kept whole up to it). */
  minWidth?: number
  /**
   * May be left out on a narrow terminal when even the minimum widths do not fit;
   * the highest number goes first. A column that is left out beats one cut unreadable.
   */
  dropOrder?: number
}

const GAP = '  '
const ELLIPSIS = '…'
const DEFAULT_MIN_WIDTH = 6
/** A UUID: ids are copied from tables, so they are never cut. */
export const ID_WIDTH = 36
/** 2026-01-01T12:00:00Z: cut, a time is useless. */
export const TIME_WIDTH = 20

/** Width available: the terminal's, else $COLUMNS, else unlimited (piped output is never cut). */
export function terminalWidth(stream: NodeJS.WriteStream = process.stdout): number {
  if (stream.isTTY && stream.columns) return stream.columns
  const fromEnv = Number(process.env.COLUMNS)
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Number.POSITIVE_INFINITY
}

/** Characters as the terminal shows them (code points, not UTF-16 units). */
const displayLength = (text: string) => [...text].length

/** Pads or cuts (with an ellipsis) to exactly `width` characters as the terminal counts them. */
export function fitToWidth(text: string, width: number): string {
  if (!Number.isFinite(width)) return text
  const chars = [...text]
  if (chars.length <= width) return text + ' '.repeat(width - chars.length)
  return width <= 1 ? ELLIPSIS.slice(0, width) : chars.slice(0, width - 1).join('') + ELLIPSIS
}

/** One line per row; control characters in values are shown as spaces so rows stay rows. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
const clean = (text: string) => text.replace(/[\u0000-\u001f\u007f]/g, ' ')

/** Shrinks the widest column one character at a time until the total fits or nothing can give. */
function shrinkToFit(widths: number[], minimums: number[], available: number): number[] {
  const result = [...widths]
  const total = () => result.reduce((sum, width) => sum + width, 0) + GAP.length * (result.length - 1)
  while (total() > available) {
    let widest = -1
    for (let index = 0; index < result.length; index += 1) {
      if (result[index]! > minimums[index]! && (widest < 0 || result[index]! > result[widest]!)) widest = index
    }
    if (widest < 0) break
    result[widest]! -= 1
  }
  return result
}

/** Drops droppable columns, highest dropOrder first, until the minimum widths fit. */
function columnsThatFit<Row>(columns: Column<Row>[], width: number): Column<Row>[] {
  const kept = [...columns]
  const minimumTotal = () =>
    kept.reduce((sum, column) => sum + Math.max(column.minWidth ?? DEFAULT_MIN_WIDTH, column.header.length), 0) +
    GAP.length * (kept.length - 1)
  while (minimumTotal() > width) {
    const droppable = kept.filter((column) => column.dropOrder !== undefined)
    if (droppable.length === 0) break
    const next = droppable.reduce((a, b) => (b.dropOrder! > a.dropOrder! ? b : a))
    kept.splice(kept.indexOf(next), 1)
  }
  return kept
}

export function renderTable<Row>(rows: Row[], allColumns: Column<Row>[], width = terminalWidth()): string {
  const naturalTotal = allColumns.reduce(
    (sum, column) =>
      sum + Math.max(displayLength(column.header), ...rows.map((row) => displayLength(column.value(row)))),
    0,
  )
  // When space is short, a droppable column with nothing in it is the first to go.
  const worthShowing =
    naturalTotal + GAP.length * (allColumns.length - 1) <= width
      ? allColumns
      : allColumns.filter((column) => column.dropOrder === undefined || rows.some((row) => column.value(row) !== ''))
  const columns = columnsThatFit(worthShowing, width)
  const cells = rows.map((row) => columns.map((column) => clean(column.value(row))))
  const natural = columns.map((column, index) =>
    Math.max(displayLength(column.header), ...cells.map((line) => displayLength(line[index]!))),
  )
  const minimums = columns.map((column, index) =>
    Math.min(natural[index]!, Math.max(column.minWidth ?? DEFAULT_MIN_WIDTH, 1)),
  )
  const widths = shrinkToFit(natural, minimums, width)
  const line = (values: string[]) =>
    values
      .map((value, index) =>
        index === values.length - 1 ? fitToWidth(value, widths[index]!).trimEnd() : fitToWidth(value, widths[index]!),
      )
      .join(GAP)
  return `${[line(columns.map((column) => column.header)), ...cells.map(line)].join('\n')}\n`
}

/** Splits text into lines of at most `width` characters, at spaces where possible. */
function wrap(text: string, width: number): string[] {
  if (!Number.isFinite(width) || displayLength(text) <= width) return [text]
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    let rest = word
    while (displayLength(rest) > width) {
      // A word longer than a line (an id, a fingerprint) is split hard.
      if (line) lines.push(line)
      line = ''
      lines.push([...rest].slice(0, width).join(''))
      rest = [...rest].slice(width).join('')
    }
    if (!line) line = rest
    else if (displayLength(line) + 1 + displayLength(rest) <= width) line += ` ${rest}`
    else {
      lines.push(line)
      line = rest
    }
  }
  if (line) lines.push(line)
  return lines
}

/**
 * A single resource as "name  value" lines. Values are the point of this view, so a
 * long one wraps onto indented lines instead of being cut.
 */
export function renderFields(fields: Array<[string, string | undefined]>, width = terminalWidth()): string {
  const shown = fields.filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '')
  const nameWidth = Math.max(0, ...shown.map(([name]) => displayLength(name)))
  const valueWidth = Math.max(DEFAULT_MIN_WIDTH * 2, width - nameWidth - GAP.length)
  const indent = ' '.repeat(nameWidth + GAP.length)
  return `${shown
    .map(([name, value]) =>
      wrap(clean(value), valueWidth)
        .map((line, index) => `${index === 0 ? fitToWidth(name, nameWidth) + GAP : indent}${line}`)
        .join('\n'),
    )
    .join('\n')}\n`
}
