import { AppError } from '../errors/app-error.js'

/** One line of an NDJSON stream, numbered as the import counts lines: blank lines are not counted. */
export interface StreamLine {
  number: number
  /** Without its line break (and a carriage return before it). */
  bytes: Buffer
  /** The stream ended in the middle of this line (no line break after it): perhaps cut. */
  unterminated: boolean
}

const NEWLINE = 0x0a
const CARRIAGE_RETURN = 0x0d

/** Only spaces, tabs and carriage returns: a heartbeat of a streamed export, or an empty line. */
function isBlank(bytes: Buffer): boolean {
  for (const byte of bytes) if (byte !== 0x20 && byte !== 0x09 && byte !== CARRIAGE_RETURN) return false
  return true
}

/**
 * The lines of a byte stream, as they arrive: a line is held whole (an import applies a memory
 * whole or not at all), up to `maxLineBytes`; a longer one is refused with 413, naming it.
 */
export async function* streamLines(body: AsyncIterable<Uint8Array>, maxLineBytes: number): AsyncGenerator<StreamLine> {
  let held: Buffer[] = []
  let heldBytes = 0
  let number = 0
  const finish = (bytes: Buffer, unterminated: boolean): StreamLine | undefined => {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN ? bytes.length - 1 : bytes.length
    const line = bytes.subarray(0, end)
    if (isBlank(line)) return undefined
    return { number: ++number, bytes: line, unterminated }
  }
  const tooLong = () =>
    new AppError(
      'PAYLOAD_TOO_LARGE',
      `line ${number + 1}: line: longer than ${maxLineBytes} bytes, the most an import holds for one memory`,
      [{ field: `line ${number + 1}: line`, description: `longer than ${maxLineBytes} bytes` }],
    )
  for await (const piece of body) {
    const chunk = Buffer.isBuffer(piece) ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength)
    let start = 0
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, start)
      if (newline < 0) break
      if (heldBytes + newline - start > maxLineBytes) throw tooLong()
      const bytes =
        held.length === 0 ? chunk.subarray(start, newline) : Buffer.concat([...held, chunk.subarray(start, newline)])
      held = []
      heldBytes = 0
      start = newline + 1
      const line = finish(bytes, false)
      if (line) yield line
    }
    if (start < chunk.length) {
      heldBytes += chunk.length - start
      if (heldBytes > maxLineBytes) throw tooLong()
      held.push(chunk.subarray(start))
    }
  }
  if (held.length > 0) {
    const line = finish(Buffer.concat(held), true)
    if (line) yield line
  }
}
