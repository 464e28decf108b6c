// The files `memsvc memory create-batch` is given, and what it makes of each before sending
// anything: its content type from its extension (the server then checks the bytes), or the
// reason it is skipped (unknown extension, empty, unreadable, larger than --max-upload-mb).
import fs from 'node:fs/promises'
import path from 'node:path'
import { contentTypeOfFileName } from '../documents/document-types.js'
import { badInput } from './exit-codes.js'

const BYTES_PER_KB = 1024
const BYTES_PER_MB = 1024 * BYTES_PER_KB

/** The files found under the paths given, in name order. */
export interface FoundFiles {
  files: string[]
  /** Folders below a named directory that were not entered (no --recursive). */
  skippedFolders: string[]
}

/** A file that will be sent, as the type its extension (or --content-type) names. */
export interface SendableFile {
  file: string
  contentType: string
  bytes: number
}

export interface SkippedFile {
  file: string
  contentType?: string
  bytes?: number
  reason: string
}

export type ClassifiedFile = ({ skipped: false } & SendableFile) | ({ skipped: true } & SkippedFile)

/** What an unknown extension's reason says create-batch reads. */
const KNOWN_FILES = 'PDF, DOCX, PPTX, XLSX, HTML, PNG, JPEG, TIFF, BMP and WebP documents, .txt, .md and .json text'

/**
 * Every regular file named, and every regular file in a named directory (with `recursive`,
 * in its subfolders too), each directory's files in name order. A path that does not exist
 * is a bad command line: nothing is sent.
 */
export async function findFiles(paths: string[], recursive: boolean): Promise<FoundFiles> {
  const files: string[] = []
  const skippedFolders: string[] = []
  for (const entry of paths) {
    const stat = await fs.stat(entry).catch(() => undefined)
    if (!stat) throw badInput(`${entry}: no such file or directory`)
    if (stat.isFile()) {
      files.push(entry)
      continue
    }
    if (!stat.isDirectory()) continue
    const items = await fs.readdir(entry, { recursive, withFileTypes: true })
    const found = items.filter((item) => item.isFile()).map((item) => path.join(item.parentPath, item.name))
    files.push(...found.sort())
    if (!recursive)
      skippedFolders.push(...items.filter((item) => item.isDirectory()).map((item) => path.join(entry, item.name)))
  }
  return { files, skippedFolders }
}

export interface ClassifyOptions {
  /** --content-type: every file is sent as this, whatever its extension. */
  contentType?: string
  maxUploadBytes: number
}

/** What create-batch does with one file; never throws (a file it cannot read is skipped, with the reason). */
export async function classifyFile(file: string, options: ClassifyOptions): Promise<ClassifiedFile> {
  const contentType = options.contentType ?? contentTypeOfFileName(file)
  if (contentType === undefined) {
    const extension = path.extname(file)
    return {
      skipped: true,
      file,
      reason: `${extension ? `unknown extension ${extension}` : 'no extension'}: reads ${KNOWN_FILES} (or give --content-type)`,
    }
  }
  let bytes: number
  try {
    bytes = (await fs.stat(file)).size
    // Opening tells what stat does not: a file this user may not read.
    await (await fs.open(file, 'r')).close()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return { skipped: true, file, contentType, reason: `unreadable: ${code ?? (error as Error).message}` }
  }
  if (bytes === 0) return { skipped: true, file, contentType, bytes, reason: 'empty file' }
  if (bytes > options.maxUploadBytes)
    return {
      skipped: true,
      file,
      contentType,
      bytes,
      reason: `too large: ${formatMegabytes(bytes)} MB is over --max-upload-mb ${options.maxUploadBytes / BYTES_PER_MB}`,
    }
  // A --content-type the server does not read is still sent: its refusal (415) names what it reads.
  return { skipped: false, file, contentType, bytes }
}

/** 3.2, 10, 0.1: megabytes (MiB) with one decimal below 10. */
function formatMegabytes(bytes: number): string {
  const megabytes = bytes / BYTES_PER_MB
  if (megabytes >= 10) return String(Math.round(megabytes))
  return (Math.round(megabytes * 10) / 10).toFixed(1)
}

/** A size people read: "3.2 MB", or "12 KB" below a megabyte (where "0.0 MB" would say nothing). */
export function formatSize(bytes: number): string {
  return bytes < BYTES_PER_MB ? `${Math.ceil(bytes / BYTES_PER_KB)} KB` : `${formatMegabytes(bytes)} MB`
}

/** "3.2/10 MB" or "12/40 KB": the part done in the unit of the whole. */
export function formatSizeProgress(done: number, total: number): string {
  if (total >= BYTES_PER_MB) return `${formatMegabytes(done)}/${formatMegabytes(total)} MB`
  return `${Math.ceil(done / BYTES_PER_KB)}/${Math.ceil(total / BYTES_PER_KB)} KB`
}

export const megabytesToBytes = (megabytes: number): number => megabytes * BYTES_PER_MB
