import fs from 'node:fs'
import path from 'node:path'

/**
 * The OCR languages: English is bundled (the eng.traineddata.gz asset); any other comes from a
 * directory of tesseract models, `<lang>.traineddata` or `<lang>.traineddata.gz` (for example
 * from github.com/tesseract-ocr/tessdata_best or tessdata_fast, or the @tesseract.js-data
 * packages), which an operator fills. A model there named eng replaces the bundled one.
 */

export const BUNDLED_OCR_LANGUAGE = 'eng'

/** tesseract's language codes: "eng", "chi_sim", "deu_latf", "osd". */
const LANGUAGE_CODE = /^[a-z][a-z0-9_]{1,31}$/i
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
