/**
 * The sizes and ranges the server's validation accepts that the web console names too: as a form
 * control's max, a hint, or the page size it asks for, so that a form says them before it sends.
 * No imports: the server's validation reads them from here, and the browser console bundles this
 * file as it is (test/unit/import-structure.test.ts).
 */

// ---- paging

/** The page a listing answers when the request names no size. */
export const DEFAULT_PAGE_SIZE = 100
/** The largest page a listing answers (spaces, registrations, API keys, users). */
export const MAX_PAGE_SIZE = 1000
/** The largest page of a space's memories: each memory carries up to 64 KiB of metadata. */
export const MAX_MEMORY_PAGE_SIZE = 500

// ---- labels

export const MAX_LABELS = 20
/** Label keys are 1 to this many characters of a-z, 0-9, ".", "_" and "-". */
export const MAX_LABEL_KEY_LENGTH = 63
export const MAX_LABEL_VALUE_LENGTH = 255

// ---- spaces and chunking

export const MAX_SPACE_NAME_LENGTH = 200
/** An embedder's share in a space's retrieval, from 0 to this; an embedder added without one gets the default. */
export const MAX_RETRIEVAL_WEIGHT = 1_000
export const DEFAULT_RETRIEVAL_WEIGHT = 1
/** The bound of every chunking size (chunk size, overlap, the sentence strategy's sizes), in characters. */
export const MAX_CHUNK_SIZE = 100_000
/** The chunk size (recursive) and the largest chunk (sentence) when a request names none. */
export const DEFAULT_CHUNK_SIZE = 512
/** A space's keyword search language (a PostgreSQL text search configuration) when a request names none. */
export const DEFAULT_TEXT_SEARCH_LANGUAGE = 'english'
/** PostgreSQL's longest identifier (NAMEDATALEN - 1): a text search configuration's name is one. */
export const MAX_TEXT_SEARCH_LANGUAGE_LENGTH = 63

// ---- documents

/** Page images (extractPageImages) are rendered at this resolution when the request names none, and within these bounds. */
export const DEFAULT_PAGE_IMAGE_DPI = 110
export const MIN_PAGE_IMAGE_DPI = 36
export const MAX_PAGE_IMAGE_DPI = 300
/** A tesseract language code: eng, deu, chi_sim, deu_latf; what names an OCR model file too. */
export const OCR_LANGUAGE_CODE = /^[a-z][a-z0-9_]{1,31}$/

// ---- retrieval

/** How many chunks a retrieval answers when the request does not say. */
export const DEFAULT_REQUESTED_SIZE = 10
export const MAX_REQUESTED_SIZE = 100
/** A message is a question or a passage to match, not a document. */
export const MAX_MESSAGE_LENGTH = 10_000

// ---- registrations (embedders, LLMs, rerankers)

export const MAX_DISPLAY_NAME_LENGTH = 200
export const MAX_DESCRIPTION_LENGTH = 2000
export const MAX_MODEL_IDENTIFIER_LENGTH = 256
export const MAX_VERSION_LENGTH = 128
export const MAX_STOP_SEQUENCES = 16
/** Sampling ranges as the chat-completions APIs take them: temperature 0 to 2, top-p 0 to 1. */
export const MAX_TEMPERATURE = 2
export const MAX_TOP_P = 1
/** Frequency and presence penalties run from -MAX_PENALTY to MAX_PENALTY. */
export const MAX_PENALTY = 2

// ---- users

export const MAX_USERNAME_LENGTH = 64
export const MAX_USER_DISPLAY_NAME_LENGTH = 200

// ---- drain

/** Seconds in-flight work may take to finish when a drain request names none. */
export const DEFAULT_DRAIN_TIMEOUT_SEC = 30
export const MAX_DRAIN_TIMEOUT_SEC = 3600
export const MAX_DRAIN_REASON_LENGTH = 500
