/**
 * Reads a ZIP's End Of Central Directory record and its central directory: the list of
 * entries with their sizes and where their data starts. Works on a whole archive and on
 * just its tail (for sniffing an upload), because the directory is found relative to the
 * record that follows it rather than by its absolute offset.
 */
import { ExtractionError } from './extracted-document.js'

const END_OF_CENTRAL_DIRECTORY_SIGNATURE = 0x06054b50
const ZIP64_END_OF_CENTRAL_DIRECTORY_SIGNATURE = 0x06064b50
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50
const CENTRAL_DIRECTORY_ENTRY_SIGNATURE = 0x02014b50
const END_OF_CENTRAL_DIRECTORY_SIZE = 22
const ZIP64_LOCATOR_SIZE = 20
const ZIP64_END_OF_CENTRAL_DIRECTORY_MIN_SIZE = 56
const CENTRAL_DIRECTORY_ENTRY_MIN_SIZE = 46
const MAX_COMMENT_LENGTH = 0xffff
const ZIP64_EXTRA_FIELD_ID = 0x0001
/** A 16- or 32-bit field holding its maximum means "the real value is in the ZIP64 record". */
const ZIP64_MARKER_32 = 0xffffffff
const UTF8_NAME_FLAG = 1 << 11

export interface ZipEntry {
  name: string
  /** 0 stored, 8 deflated; anything else is refused when read. */
  method: number
  /** General purpose flags; bit 0 means encrypted. */
  flags: number
  /** CRC-32 of the uncompressed data. */
  crc32: number
  compressedSize: number
  uncompressedSize: number
  /** Offset of the entry's local file header in the whole archive. */
  localHeaderOffset: number
}

export interface CentralDirectory {
  entries: ZipEntry[]
  /** Where the directory starts in the bytes given, which is not its recorded offset when data precedes the zip. */
  startInBytes: number
  /** Added to recorded offsets to find them in the bytes given (non-zero for a zip with data in front). */
  offsetShift: number
}

/**
 * The central directory of `bytes` (a whole zip, or its last bytes), or undefined when no End Of
 * Central Directory record is there. Throws ExtractionError when a record is there but damaged.
 */
export function readCentralDirectory(bytes: Uint8Array, describe = 'the archive'): CentralDirectory | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const endRecord = findEndOfCentralDirectory(view)
  if (endRecord === undefined) return undefined
  let entryCount = view.getUint16(endRecord + 10, true)
  let directorySize = view.getUint32(endRecord + 12, true)
  let directoryOffset = view.getUint32(endRecord + 16, true)
  // The directory ends where the record after it starts: the ZIP64 record when there is one.
  let directoryEnd = endRecord
  const locator = endRecord - ZIP64_LOCATOR_SIZE
  if (locator >= 0 && view.getUint32(locator, true) === ZIP64_LOCATOR_SIGNATURE) {
    const zip64RecordOffset = readUint64(view, locator + 8, describe)
    // Like the directory, the ZIP64 record sits right before what follows it: its locator.
    const zip64Record = findZip64Record(view, locator, zip64RecordOffset)
    if (zip64Record === undefined)
      throw new ExtractionError(`${describe} is damaged: its ZIP64 directory record is missing`)
    entryCount = readUint64(view, zip64Record + 32, describe)
    directorySize = readUint64(view, zip64Record + 40, describe)
    directoryOffset = readUint64(view, zip64Record + 48, describe)
    directoryEnd = zip64Record
  }
  const startInBytes = directoryEnd - directorySize
  // In a tail that does not reach back to the directory's start: not readable from these bytes.
  if (startInBytes < 0) return undefined
  const entries = readEntries(view, startInBytes, directoryEnd, entryCount, describe)
  return { entries, startInBytes, offsetShift: startInBytes - directoryOffset }
}

function findEndOfCentralDirectory(view: DataView): number | undefined {
  const lastPossible = view.byteLength - END_OF_CENTRAL_DIRECTORY_SIZE
  const firstPossible = Math.max(0, lastPossible - MAX_COMMENT_LENGTH)
  for (let at = lastPossible; at >= firstPossible; at--) {
    if (view.getUint32(at, true) !== END_OF_CENTRAL_DIRECTORY_SIGNATURE) continue
    // A comment can contain the signature; the real record's comment length reaches the end exactly.
    const commentLength = view.getUint16(at + 20, true)
    if (at + END_OF_CENTRAL_DIRECTORY_SIZE + commentLength === view.byteLength) return at
  }
  // Some writers leave junk after the record; take the last signature whose comment fits.
  for (let at = lastPossible; at >= firstPossible; at--) {
    if (view.getUint32(at, true) !== END_OF_CENTRAL_DIRECTORY_SIGNATURE) continue
    if (at + END_OF_CENTRAL_DIRECTORY_SIZE + view.getUint16(at + 20, true) <= view.byteLength) return at
  }
  return undefined
}

function findZip64Record(view: DataView, locator: number, recordedOffset: number): number | undefined {
  if (recordedOffset + ZIP64_END_OF_CENTRAL_DIRECTORY_MIN_SIZE <= view.byteLength) {
    if (view.getUint32(recordedOffset, true) === ZIP64_END_OF_CENTRAL_DIRECTORY_SIGNATURE) {
      const size = readUint64(view, recordedOffset + 4, 'the archive') + 12
      if (recordedOffset + size === locator) return recordedOffset
    }
  }
  const besideLocator = locator - ZIP64_END_OF_CENTRAL_DIRECTORY_MIN_SIZE
  if (besideLocator >= 0 && view.getUint32(besideLocator, true) === ZIP64_END_OF_CENTRAL_DIRECTORY_SIGNATURE) {
    return besideLocator
  }
  return undefined
}

function readEntries(view: DataView, start: number, end: number, count: number, describe: string): ZipEntry[] {
  const entries: ZipEntry[] = []
  let at = start
  while (at < end) {
    if (at + CENTRAL_DIRECTORY_ENTRY_MIN_SIZE > end || view.getUint32(at, true) !== CENTRAL_DIRECTORY_ENTRY_SIGNATURE) {
      throw new ExtractionError(`${describe} is damaged: its central directory is truncated or corrupt`)
    }
    const flags = view.getUint16(at + 8, true)
    const method = view.getUint16(at + 10, true)
    const crc32 = view.getUint32(at + 16, true)
    let compressedSize = view.getUint32(at + 20, true)
    let uncompressedSize = view.getUint32(at + 24, true)
    const nameLength = view.getUint16(at + 28, true)
    const extraLength = view.getUint16(at + 30, true)
    const commentLength = view.getUint16(at + 32, true)
    let localHeaderOffset = view.getUint32(at + 42, true)
    const nameStart = at + CENTRAL_DIRECTORY_ENTRY_MIN_SIZE
    const extraStart = nameStart + nameLength
    const next = extraStart + extraLength + commentLength
    if (next > end) throw new ExtractionError(`${describe} is damaged: its central directory is truncated or corrupt`)
    const nameBytes = new Uint8Array(view.buffer, view.byteOffset + nameStart, nameLength)
    const name = new TextDecoder(flags & UTF8_NAME_FLAG ? 'utf-8' : 'latin1').decode(nameBytes)
    const zip64 = findExtraField(view, extraStart, extraStart + extraLength, ZIP64_EXTRA_FIELD_ID)
    if (zip64 !== undefined) {
      // The ZIP64 field holds, in this order, only the values whose 32-bit fields are markers.
      let field = zip64.start
      const take = () => {
        if (field + 8 > zip64.end) throw new ExtractionError(`${describe} is damaged: ${name} has a short ZIP64 field`)
        const value = readUint64(view, field, describe)
        field += 8
        return value
      }
      if (uncompressedSize === ZIP64_MARKER_32) uncompressedSize = take()
      if (compressedSize === ZIP64_MARKER_32) compressedSize = take()
      if (localHeaderOffset === ZIP64_MARKER_32) localHeaderOffset = take()
    }
    entries.push({ name, method, flags, crc32, compressedSize, uncompressedSize, localHeaderOffset })
    at = next
  }
  // The 16-bit count wraps for 65,536 entries or more without ZIP64; a smaller mismatch means a damaged directory.
  if (entries.length % 0x10000 !== count % 0x10000) {
    throw new ExtractionError(`${describe} is damaged: its directory lists ${entries.length} entries, it says ${count}`)
  }
  return entries
}

function findExtraField(
  view: DataView,
  start: number,
  end: number,
  id: number,
): { start: number; end: number } | undefined {
  let at = start
  while (at + 4 <= end) {
    const fieldId = view.getUint16(at, true)
    const size = view.getUint16(at + 2, true)
    if (fieldId === id) return { start: at + 4, end: Math.min(end, at + 4 + size) }
    at += 4 + size
  }
  return undefined
}

function readUint64(view: DataView, at: number, describe: string): number {
  if (at + 8 > view.byteLength) throw new ExtractionError(`${describe} is damaged: a ZIP64 record is truncated`)
  const value = view.getBigUint64(at, true)
  if (value > BigInt(Number.MAX_SAFE_INTEGER))
    throw new ExtractionError(`${describe} is damaged: a ZIP64 size is impossible`)
  return Number(value)
}
