/**
 * The long texts a retrieval streams (memory contents, chunks longer than a search row
 * carries), loaded as the stream reaches them instead of all before it starts: a hundred
 * memories of 4 MiB are 400 MiB at once, but the stream writes one at a time, and to a
 * slow reader only as fast as it reads. The texts are asked for in the order the stream
 * gives them out, so each load takes the next few still to come, up to a number of bytes,
 * in one query; a text given out is forgotten.
 */

/** A text the stream will need, with its size in UTF-8 bytes (known from the rows found before streaming). */
export interface TextNeed {
  id: string
  bytes: number
}

/** Reads the texts of the given ids; ids whose row is gone are left out. */
export type TextLoader = (ids: string[]) => Promise<Array<{ id: string; text: string }>>

export class TextsOnDemand {
  readonly #needs: TextNeed[]
  readonly #positions = new Map<string, number>()
  readonly #loaded = new Map<string, string>()
  readonly #load: TextLoader
  readonly #batchBytes: number
  /** Needs before this position have been loaded (or found gone). */
  #loadedUpTo = 0

  /** `needs` in the order the stream will take them; a load reads up to `batchBytes` (always at least one text). */
  constructor(needs: TextNeed[], load: TextLoader, batchBytes: number) {
    this.#needs = needs
    for (const [position, need] of needs.entries()) this.#positions.set(need.id, position)
    this.#load = load
    this.#batchBytes = batchBytes
  }

  /** The bytes one load can hold: a batch, or the largest single text when that is larger. */
  static largestLoad(needs: TextNeed[], batchBytes: number): number {
    return needs.length === 0 ? 0 : Math.max(batchBytes, ...needs.map((need) => need.bytes))
  }

  /** The text of `id`, given out once; undefined when its row was deleted since the search found it. */
  async take(id: string): Promise<string | undefined> {
    const position = this.#positions.get(id)
    if (position === undefined) throw new Error(`text ${id} was not announced`)
    if (position >= this.#loadedUpTo) await this.#loadFrom(position)
    const text = this.#loaded.get(id)
    this.#loaded.delete(id)
    return text
  }

  async #loadFrom(position: number): Promise<void> {
    // Whatever was loaded before `position` and not taken is not going to be: the stream moved past it.
    this.#loaded.clear()
    const ids: string[] = []
    let bytes = 0
    let next = position
    while (next < this.#needs.length) {
      const need = this.#needs[next]!
      if (ids.length > 0 && bytes + need.bytes > this.#batchBytes) break
      ids.push(need.id)
      bytes += need.bytes
      next++
    }
    for (const row of await this.#load(ids)) this.#loaded.set(row.id, row.text)
    this.#loadedUpTo = next
  }
}
