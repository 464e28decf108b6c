import { invalidArgument } from '../../errors/app-error.js'

/** A message of a client stream that sends a header first, then the bytes in data messages (UploadMemory, ImportSpace). */
interface HeaderOrData<Header> {
  part?: { $case: 'header'; value: Header } | { $case: 'data'; value: Uint8Array } | undefined
}

/**
 * The stream's header, read now, and its bytes, read as they are consumed. Each message in the
 * wrong place is an INVALID_ARGUMENT with the text the call gives for it.
 */
export async function headerThenData<Header>(
  messages: AsyncIterable<HeaderOrData<Header>>,
  misplaced: { header: string; data: string },
): Promise<{ header: Header; data: AsyncGenerator<Uint8Array> }> {
  const iterator = messages[Symbol.asyncIterator]()
  const first = await iterator.next()
  if (first.done || first.value.part?.$case !== 'header') throw invalidArgument('header', misplaced.header)
  return { header: first.value.part.value, data: dataAfterHeader(iterator, misplaced.data) }
}

async function* dataAfterHeader<Header>(
  messages: AsyncIterator<HeaderOrData<Header>>,
  misplaced: string,
): AsyncGenerator<Uint8Array> {
  for (;;) {
    const next = await messages.next()
    if (next.done) return
    if (next.value.part?.$case !== 'data') throw invalidArgument('part', misplaced)
    yield next.value.part.value
  }
}
