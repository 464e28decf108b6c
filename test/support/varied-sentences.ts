/**
 * Varied English sentences, generated (no text corpus is reachable from the project's
 * machines) and the same on every run: statements, questions, one-word replies, facts,
 * text with accents, emoji, codes and odd spacing, and long multi-clause sentences of 30 to
 * 80 words. For checks that compare two runs of a model, not for judging its quality.
 */

const SUBJECTS = [
  'The engineer',
  'My grandmother',
  'A small dog',
  'The committee',
  'Our database server',
  'The new intern',
  'Every student',
  'The river',
  'A tired nurse',
  'The mayor of Lisbon',
  'Kubernetes',
  'The old lighthouse keeper',
  'Her cat',
  'The finance team',
  'A migrating flock of geese',
  'The compiler',
  'This recipe',
  'The orchestra',
  'An anonymous donor',
  'The spacecraft',
]
const VERBS = [
  'repaired',
  'ignored',
  'painted',
  'deployed',
  'questioned',
  'baked',
  'measured',
  'translated',
  'rejected',
  'celebrated',
  'debugged',
  'visited',
  'described',
  'forgot',
  'photographed',
  'negotiated',
  'sold',
  'rebuilt',
  'approved',
  'studied',
]
const OBJECTS = [
  'the broken bicycle',
  'a quarterly budget report',
  'the memory leak in the cache',
  'three loaves of sourdough bread',
  'the ancient Roman aqueduct',
  'a contract with the supplier',
  'the garden fence',
  'the failing integration tests',
  'a poem about autumn',
  'the tallest mountain in Japan',
  'the coffee machine',
  'an email from the landlord',
  'the vaccine trial data',
  'a recipe for lemon tart',
  'the train timetable',
  'the Eiffel Tower',
  'a jazz record from 1959',
  'the password reset flow',
  'the soccer match',
  'a map of the city',
]
/** Empty tails are more likely: many sentences end at the object. */
const TAILS = [
  'yesterday',
  'before lunch',
  'after a long argument',
  'in the pouring rain',
  'without telling anyone',
  'for the third time this week',
  'with great care',
  'while the kids were asleep',
  'despite the warnings',
  'on Tuesday morning',
  '',
  '',
  '',
]
const QUESTION_STARTS = [
  'How do I',
  'Why would anyone',
  'Where can I',
  'Is it safe to',
  'What is the best way to',
  'Can you explain how to',
  'When should we',
]
const QUESTION_ENDS = [
  'reset my router',
  'prune rose bushes in winter',
  'rotate TLS certificates',
  'cook rice without a rice cooker',
  'learn Portuguese quickly',
  'migrate a Postgres database',
  'train for a marathon',
  'fix a leaking tap',
  'invest in index funds',
  'write a cover letter',
  'adopt a rescue dog',
  'configure a firewall',
  'visit the Louvre museum',
  'store fresh basil',
  'debug a segmentation fault',
]
const SHORT = [
  'Hello world.',
  'Yes.',
  'No way!',
  'Thanks a lot.',
  'Good morning, everyone.',
  'It is raining.',
  'Call me later.',
  'Meeting cancelled.',
  'See you soon.',
  'Deadline moved to Friday.',
  'OK',
  'Why?',
  'Lunch is ready.',
  'Done.',
  'Server down again.',
]
const FACTS = [
  'Water boils at 100 degrees Celsius at sea level.',
  'The Pacific is the largest ocean on Earth.',
  'Photosynthesis converts sunlight into chemical energy.',
  'Paris is the capital of France.',
  'Bees communicate using a waggle dance.',
  'The heart pumps blood through the body.',
  'Shakespeare wrote Hamlet around 1600.',
  'Light travels faster than sound.',
  'Penguins cannot fly but swim very well.',
  'The Great Wall of China is visible from low orbit only under ideal conditions.',
]
const UNUSUAL = [
  'Naïve café owners in Zürich serve crème brûlée.',
  'Error 0x80070005: access denied (code=5).',
  'Version 2.3.1 fixes CVE-2023-1234 & improves perf by ~15%.',
  'I ❤ coffee ☕ and 🍕 on Fridays!',
  'e-mail: john.doe@example.com, tel. +1 (555) 010-9999',
  '    leading and trailing spaces    ',
  'ALL CAPS SENTENCE ABOUT THE WEATHER',
  'mixed CaSe tExT wItH NuMbErS 12345',
  'Tab\tseparated\tvalues',
  'The quick brown fox jumps over the lazy dog.',
]

/** A linear congruential generator (glibc's constants): the same sequence everywhere. */
function seededRandom(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff
    return state / 0x7fffffff
  }
}

/** Share of each kind of sentence, as cumulative thresholds of one random draw. */
const STATEMENT_BELOW = 0.45
const QUESTION_BELOW = 0.65
const SHORT_BELOW = 0.72
const FACT_BELOW = 0.8
const UNUSUAL_BELOW = 0.85
const MIN_CLAUSES = 2
const EXTRA_CLAUSES = 4
const SUFFIX_RANGE = 1000
const TAG_RANGE = 100

/** `count` distinct sentences, the same ones for the same seed. */
export function variedSentences(count: number, seed = 12345): string[] {
  const random = seededRandom(seed)
  const pick = (list: string[]) => list[Math.floor(random() * list.length)]!
  const clause = (subject = pick(SUBJECTS)) => `${subject} ${pick(VERBS)} ${pick(OBJECTS)} ${pick(TAILS)}`.trim()
  const sentences = new Set<string>()
  while (sentences.size < count) {
    const kind = random()
    if (kind < STATEMENT_BELOW) sentences.add(`${clause()}.`)
    else if (kind < QUESTION_BELOW) sentences.add(`${pick(QUESTION_STARTS)} ${pick(QUESTION_ENDS)}?`)
    // A repeated short reply gets a number, so that the set still grows.
    else if (kind < SHORT_BELOW) {
      const reply = pick(SHORT)
      sentences.add(sentences.has(reply) ? `${reply} (${Math.floor(random() * SUFFIX_RANGE)})` : reply)
    } else if (kind < FACT_BELOW) sentences.add(random() < 0.5 ? `${pick(FACTS)} ${pick(FACTS)}` : pick(FACTS))
    else if (kind < UNUSUAL_BELOW) sentences.add(`${pick(UNUSUAL)} #${Math.floor(random() * TAG_RANGE)}`)
    else {
      const clauses = Array.from({ length: MIN_CLAUSES + Math.floor(random() * EXTRA_CLAUSES) }, () =>
        clause(pick(SUBJECTS).toLowerCase()),
      )
      sentences.add(`Although ${clauses.join(', and then ')}.`)
    }
  }
  return [...sentences]
}
