// The memory benchmark's corpus: deterministic synthetic prose, so every run (and the
// floor beside memsvc) stores exactly the same chunks. Words are drawn from a made-up
// vocabulary with Zipf frequencies, as in real text: a few words are in almost every
// chunk (what makes naive keyword search scan everything), most are rare; and each chunk
// is about one topic (see TOPICS).
import { seededRandom } from '../../test/support/seeded-random.js'

/** Words in the vocabulary; with Zipf's law the commonest dozen are in most chunks. */
const VOCABULARY_SIZE = 5_000
/** Words per chunk: about 300 characters, so each memory is exactly one chunk (default chunk size 512). */
const WORDS_PER_CHUNK = 42
/** A query: this many words from one stored chunk, plus QUERY_NOISE_WORDS drawn at random. */
const QUERY_WORDS_FROM_CHUNK = 6
const QUERY_NOISE_WORDS = 2
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'ti',
  'vo',
  'ze',
  'pa',
  'do',
  'gu',
  'fe',
  'hi',
  'jo',
  'ba',
  'ce',
  'wu',
  'xi',
  'yo',
  'qua',
  'ser',
  'lin',
  'mor',
]
const SEED = 0x6d656d
/**
 * Real text is about something: each chunk belongs to one of TOPICS topics and draws
 * TOPIC_SHARE of its words from that topic's own TOPIC_WORDS (Zipf within the topic), the
 * rest from the whole vocabulary. Without topics, a chunk is 42 independent Zipf draws and
 * its hashed vector is close to a random point in 384 dimensions: no nearest-neighbour
 * index finds neighbours among random points, which says nothing about a memory service.
 */
const TOPICS = 100
const TOPIC_WORDS = 40
const TOPIC_SHARE = 0.5
/** Topic words come from below the commonest ranks: function words belong to no topic. */
const TOPIC_WORD_MIN_RANK = 200

function vocabulary(): string[] {
  const words = new Set<string>()
  const random = seededRandom(SEED)
  while (words.size < VOCABULARY_SIZE) {
    const length = 2 + Math.floor(random() * 3)
    let word = ''
    for (let index = 0; index < length; index++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)]
    words.add(word)
  }
  return [...words]
}

export interface MemoryCorpus {
  /** Text of chunk `index` (0-based): the same for every run. */
  chunk(index: number): string
  /** `count` query messages, each close to one stored chunk among the first `stored`. */
  queries(count: number, stored: number): string[]
}

export function memoryCorpus(options: { topics?: boolean } = {}): MemoryCorpus {
  const words = vocabulary()
  // Zipf (s = 1): cumulative weights 1/1, 1/2, …, searched by bisection.
  const cumulative: number[] = []
  let total = 0
  for (let rank = 1; rank <= words.length; rank++) {
    total += 1 / rank
    cumulative.push(total)
  }
  const zipfWord = (random: () => number) => {
    const target = random() * total
    let low = 0
    let high = cumulative.length - 1
    while (low < high) {
      const middle = (low + high) >> 1
      if (cumulative[middle]! < target) low = middle + 1
      else high = middle
    }
    return words[low]!
  }
  const topicRandom = seededRandom(SEED + 2)
  const topics = Array.from({ length: TOPICS }, () =>
    Array.from(
      { length: TOPIC_WORDS },
      () => words[TOPIC_WORD_MIN_RANK + Math.floor(topicRandom() * (words.length - TOPIC_WORD_MIN_RANK))]!,
    ),
  )
  let topicTotal = 0
  const topicCumulative = Array.from({ length: TOPIC_WORDS }, (_, rank) => (topicTotal += 1 / (rank + 1)))
  const topicWord = (topic: string[], random: () => number) => {
    const target = random() * topicTotal
    return topic[
      Math.max(
        0,
        topicCumulative.findIndex((weight) => weight >= target),
      )
    ]!
  }
  const chunkWords = (index: number) => {
    const random = seededRandom(SEED + 1 + index)
    const topic = topics[Math.floor(random() * TOPICS)]!
    const share = options.topics === false ? 0 : TOPIC_SHARE
    return Array.from({ length: WORDS_PER_CHUNK }, () =>
      random() < share ? topicWord(topic, random) : zipfWord(random),
    )
  }
  return {
    chunk: (index) => {
      const text = chunkWords(index).join(' ')
      return `${text[0]!.toUpperCase()}${text.slice(1)}.`
    },
    queries(count, stored) {
      const random = seededRandom(SEED - 1)
      return Array.from({ length: count }, () => {
        const source = chunkWords(Math.floor(random() * stored))
        const picked = Array.from(
          { length: QUERY_WORDS_FROM_CHUNK },
          () => source[Math.floor(random() * source.length)]!,
        )
        for (let noise = 0; noise < QUERY_NOISE_WORDS; noise++) picked.push(zipfWord(random))
        return picked.join(' ')
      })
    },
  }
}
