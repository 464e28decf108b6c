// A PDF written object by object straight to a file, so that the documents benchmark's
// 200 MB PDF never exists whole in the harness's memory. Object numbers are handed out
// first (a page tree names its pages before they are written) and each body is written
// when it is ready; the cross-reference table at the end records where each one starts.
import fs from 'node:fs'

/** `%PDF-1.4` and the binary-comment line that tells transfer tools the file is binary. */
const PDF_HEADER = Buffer.concat([
  Buffer.from('%PDF-1.4\n', 'latin1'),
  Buffer.from([0x25, 0xe2, 0xe3, 0xcf, 0xd3, 0x0a]),
])
/** Each cross-reference entry is exactly 20 bytes: a 10-digit offset, a 5-digit generation, a flag, an EOL. */
const XREF_OFFSET_DIGITS = 10

export class PdfFileWriter {
  readonly #fd: number
  /** Byte offset of each object's body, by object number (index 0 is the free head entry). */
  readonly #offsets: Array<number | undefined> = [0]
  #position = 0

  constructor(readonly file: string) {
    this.#fd = fs.openSync(file, 'w')
    this.#append(PDF_HEADER)
  }

  /** A number for an object whose body comes later (writeObject, writeStream). */
  reserve(): number {
    this.#offsets.push(undefined)
    return this.#offsets.length - 1
  }

  /** Writes `body` (a dictionary, an array…) as object `number`, or as a new object; returns its number. */
  writeObject(body: string, number = this.reserve()): number {
    this.#begin(number)
    this.#append(Buffer.from(`${number} 0 obj\n${body}\nendobj\n`, 'latin1'))
    return number
  }

  /** Writes a stream object: `dictionary` entries besides /Length, then the data as it is. */
  writeStream(data: Uint8Array | string, dictionary = '', number = this.reserve()): number {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data
    this.#begin(number)
    this.#append(Buffer.from(`${number} 0 obj\n<< /Length ${bytes.length} ${dictionary}>>\nstream\n`, 'latin1'))
    this.#append(bytes)
    this.#append(Buffer.from('\nendstream\nendobj\n', 'latin1'))
    return number
  }

  /** Writes the cross-reference table and trailer, closes the file and returns its size in bytes. */
  close(rootObject: number): number {
    const missing = this.#offsets.indexOf(undefined)
    if (missing !== -1) throw new Error(`${this.file}: object ${missing} was reserved and never written`)
    const xrefOffset = this.#position
    const entries = this.#offsets.map((offset, number) =>
      number === 0 ? '0000000000 65535 f \n' : `${String(offset).padStart(XREF_OFFSET_DIGITS, '0')} 00000 n \n`,
    )
    this.#append(
      Buffer.from(
        `xref\n0 ${this.#offsets.length}\n${entries.join('')}` +
          `trailer\n<< /Size ${this.#offsets.length} /Root ${rootObject} 0 R >>\nstartxref\n${xrefOffset}\n%%EOF\n`,
        'latin1',
      ),
    )
    fs.closeSync(this.#fd)
    return this.#position
  }

  #begin(number: number): void {
    if (!(number in this.#offsets) || this.#offsets[number] !== undefined)
      throw new Error(`${this.file}: object ${number} is not reserved, or is written already`)
    this.#offsets[number] = this.#position
  }

  #append(bytes: Uint8Array): void {
    let written = 0
    while (written < bytes.length) written += fs.writeSync(this.#fd, bytes, written, bytes.length - written)
    this.#position += bytes.length
  }
}
