import fs from 'node:fs'
import path from 'node:path'
import { OCR_LANGUAGE_CODE } from '../validation/limits.js'

/**
 * The OCR languages: English is bundled (the eng.traineddata.gz asset); any other comes from a
 * directory of tesseract models, `<lang>.traineddata` or `<lang>.traineddata.gz` (for example
 * from github.com/tesseract-ocr/tessdata_best or tessdata_fast, or the @tesseract.js-data
 * packages), which an operator fills. A model there named eng replaces the bundled one.
 */

export const BUNDLED_OCR_LANGUAGE = 'eng'

/** tesseract's language codes: "eng", "chi_sim", "deu_latf", "osd" (as the API accepts them). */
const LANGUAGE_CODE = OCR_LANGUAGE_CODE
const MODEL_SUFFIXES = ['.traineddata.gz', '.traineddata'] as const

/** The model file for `language` in `languagesDir`, if there is one (the gzipped one first). */
export function languageModelFile(languagesDir: string | undefined, language: string): string | undefined {
  if (!languagesDir || !LANGUAGE_CODE.test(language)) return undefined
  for (const suffix of MODEL_SUFFIXES) {
    const file = path.join(languagesDir, `${language}${suffix}`)
    if (fs.existsSync(file)) return file
  }
  return undefined
}

/** Every language OCR can read: the bundled one and those with a model in `languagesDir`, sorted. */
export function availableLanguages(languagesDir: string | undefined): string[] {
  const found = new Set([BUNDLED_OCR_LANGUAGE])
  let names: string[] = []
  try {
    names = languagesDir ? fs.readdirSync(languagesDir) : []
  } catch {
    // No languages directory (yet): English only.
  }
  for (const name of names) {
    const suffix = MODEL_SUFFIXES.find((candidate) => name.endsWith(candidate))
    const language = suffix && name.slice(0, -suffix.length)
    if (language && LANGUAGE_CODE.test(language)) found.add(language)
  }
  return [...found].sort()
}

/** The languages of `wanted` that OCR cannot read, in their order. */
export function missingLanguages(languagesDir: string | undefined, wanted: string[]): string[] {
  const available = new Set(availableLanguages(languagesDir))
  return wanted.filter((language) => !available.has(language))
}

/** `deu.traineddata.gz` → deu; undefined for a name that is not a tesseract model's. */
export function languageOfModelFile(fileName: string): string | undefined {
  const suffix = MODEL_SUFFIXES.find((candidate) => fileName.endsWith(candidate))
  const language = suffix && fileName.slice(0, -suffix.length)
  return language && LANGUAGE_CODE.test(language) ? language : undefined
}

/**
 * Copies a model into `languagesDir` as `<language><suffix>`, through a temporary name and a
 * rename, so that a server reading the directory never sees half a file. An existing model of
 * the language (either suffix) is replaced only when `replace` is set.
 */
export function installLanguageModel(source: string, languagesDir: string, language: string, replace: boolean): string {
  const suffix = MODEL_SUFFIXES.find((candidate) => source.endsWith(candidate)) ?? '.traineddata'
  const existing = languageModelFile(languagesDir, language)
  if (existing && !replace) throw new Error(`${existing} exists already; add --replace to replace it`)
  fs.mkdirSync(languagesDir, { recursive: true })
  const target = path.join(languagesDir, `${language}${suffix}`)
  const partial = `${target}.${process.pid}.tmp`
  fs.copyFileSync(source, partial)
  if (existing && existing !== target) fs.rmSync(existing)
  fs.renameSync(partial, target)
  return target
}
