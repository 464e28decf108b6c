/**
 * A ZIP reader for OOXML packages that bounds what it inflates. A zip bomb declares small
 * sizes and expands a thousandfold, so the bounds apply to the bytes inflation actually
 * produces, not to the sizes the archive records.
 */
import zlib from 'node:zlib'
import { ExtractionError, type ExtractionLimits } from './extracted-document.js'
import { readCentralDirectory, type ZipEntry } from './zip-central-directory.js'

const LOCAL_HEADER_SIGNATURE = 0x04034b50
const LOCAL_HEADER_SIZE = 30
const LOCAL_HEADER_NAME_LENGTH_OFFSET = 26
const LOCAL_HEADER_EXTRA_LENGTH_OFFSET = 28
const METHOD_STORED = 0
const METHOD_DEFLATED = 8
const ENCRYPTED_FLAG = 1
/** A tiny entry (an empty relationships part) may expand more than the ratio allows and still be harmless. */
export const MIN_ENTRY_EXPANSION_BYTES = 1024 * 1024
const BYTES_PER_MIB = 1024 * 1024

export type ZipLimits = Pick<ExtractionLimits, 'maxDecompressedBytes' | 'maxCompressionRatio'>

export class ZipArchive {
  readonly #bytes: Uint8Array
  readonly #entries: Map<string, ZipEntry>
  readonly #offsetShift: number
  readonly #limits: ZipLimits
  readonly #describe: string
  #decompressedBytes = 0

  private constructor(
    bytes: Uint8Array,
    entries: ZipEntry[],
    offsetShift: number,
    limits: ZipLimits,
    describe: string,
  ) {
    this.#bytes = bytes
    this.#entries = new Map(entries.map((entry) => [entry.name, entry]))
    this.#offsetShift = offsetShift
    this.#limits = limits
    this.#describe = describe
  }

  /** Reads the archive's directory; ExtractionError when `bytes` is no zip or a damaged one. `describe` names it in errors. */
  static open(bytes: Uint8Array, limits: ZipLimits, describe = 'the document'): ZipArchive {
    const directory = readCentralDirectory(bytes, describe)
    if (directory === undefined) {
      throw new ExtractionError(`${describe} is damaged or truncated: its ZIP directory is missing`)
    }
    return new ZipArchive(bytes, directory.entries, directory.offsetShift, limits, describe)
  }

  entryNames(): string[] {
    return [...this.#entries.keys()]
  }

  has(name: string): boolean {
    return this.#entries.has(name)
  }

  /** Bytes inflated so far, counted against limits.maxDecompressedBytes. */
  get decompressedBytes(): number {
    return this.#decompressedBytes
  }

  /** The entry's bytes; ExtractionError when it is missing, damaged, encrypted, or expands past a limit. */
  read(name: string): Uint8Array {
    const entry = this.#entries.get(name)
    if (entry === undefined) throw new ExtractionError(`${this.#describe} is damaged: it has no ${name}`)
    if (entry.flags & ENCRYPTED_FLAG) {
      throw new ExtractionError(`${this.#describe} is encrypted (${name} is password-protected); memsvc cannot read it`)
    }
    const data = this.#compressedData(entry)
    const remainingBudget = this.#limits.maxDecompressedBytes - this.#decompressedBytes
    if (entry.uncompressedSize > remainingBudget) throw this.#budgetExceeded(name)
    let content: Uint8Array
    if (entry.method === METHOD_STORED) {
      content = data
    } else if (entry.method === METHOD_DEFLATED) {
      content = this.#inflate(entry, data, remainingBudget)
    } else {
      throw new ExtractionError(
        `${this.#describe} uses compression method ${entry.method} for ${name}; memsvc reads only stored and deflated entries`,
      )
    }
    if (content.length !== entry.uncompressedSize) {
      throw new ExtractionError(
        `${this.#describe} is damaged: ${name} holds ${content.length} bytes, its directory says ${entry.uncompressedSize}`,
      )
    }
    if (zlib.crc32(content) !== entry.crc32) {
      throw new ExtractionError(`${this.#describe} is damaged: ${name} fails its checksum`)
    }
    this.#decompressedBytes += content.length
    return content
  }

  /** The entry as text (UTF-8, or UTF-16 when it starts with that byte order mark). */
  readText(name: string): string {
    const bytes = this.read(name)
    const bigEndianBom = bytes[0] === 0xfe && bytes[1] === 0xff
    const littleEndianBom = bytes[0] === 0xff && bytes[1] === 0xfe
    const encoding = littleEndianBom ? 'utf-16le' : bigEndianBom ? 'utf-16be' : 'utf-8'
    return new TextDecoder(encoding).decode(bytes)
  }

  #compressedData(entry: ZipEntry): Uint8Array {
    const header = entry.localHeaderOffset + this.#offsetShift
    const view = new DataView(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength)
    if (
      header < 0 ||
      header + LOCAL_HEADER_SIZE > view.byteLength ||
      view.getUint32(header, true) !== LOCAL_HEADER_SIGNATURE
    ) {
      throw new ExtractionError(`${this.#describe} is damaged: the data of ${entry.name} is missing`)
    }
    const dataStart =
      header +
      LOCAL_HEADER_SIZE +
      view.getUint16(header + LOCAL_HEADER_NAME_LENGTH_OFFSET, true) +
      view.getUint16(header + LOCAL_HEADER_EXTRA_LENGTH_OFFSET, true)
    const dataEnd = dataStart + entry.compressedSize
    if (dataEnd > view.byteLength) {
      throw new ExtractionError(`${this.#describe} is damaged or truncated: the data of ${entry.name} is cut off`)
    }
    return this.#bytes.subarray(dataStart, dataEnd)
  }

  #inflate(entry: ZipEntry, data: Uint8Array, remainingBudget: number): Uint8Array {
    const ratioBound = Math.max(entry.compressedSize * this.#limits.maxCompressionRatio, MIN_ENTRY_EXPANSION_BYTES)
    if (entry.uncompressedSize > ratioBound) throw this.#ratioExceeded(entry.name)
    // One byte more than the recorded size shows a lying size without inflating the rest of a bomb.
    const maxOutputLength = Math.min(remainingBudget, ratioBound, entry.uncompressedSize + 1)
    try {
      return zlib.inflateRawSync(data, { maxOutputLength: Math.max(1, maxOutputLength) })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE') {
        throw new ExtractionError(
          `${this.#describe} is damaged: ${entry.name} does not inflate (${(error as Error).message})`,
        )
      }
      if (maxOutputLength === ratioBound) throw this.#ratioExceeded(entry.name)
      if (maxOutputLength === remainingBudget) throw this.#budgetExceeded(entry.name)
      throw new ExtractionError(
        `${entry.name} expands beyond the ${entry.uncompressedSize} bytes its ZIP directory records; refused as a possible zip bomb`,
      )
    }
  }

  #ratioExceeded(name: string): ExtractionError {
    return new ExtractionError(
      `${name} expands more than ${this.#limits.maxCompressionRatio} times its compressed size; refused as a possible zip bomb`,
    )
  }

  #budgetExceeded(name: string): ExtractionError {
    const limitMib = Math.round(this.#limits.maxDecompressedBytes / BYTES_PER_MIB)
    return new ExtractionError(
      `${this.#describe} expands to more than ${limitMib} MiB (the limit) by ${name}; refused as a possible zip bomb`,
    )
  }
}
