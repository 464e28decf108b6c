import { parentPort } from 'node:worker_threads'
import type { InferenceReply, InferenceRequest } from './inference-messages.js'
import { LocalModelError } from './model-directory.js'
import { SentenceEncoder } from './sentence-encoder.js'

/**
 * An inference thread: loads local embedding models on first use, keeps them, and embeds
 * what the server's thread sends, one request at a time (inference-pool.ts hands each
 * thread one request at a time). Inference is CPU work of hundreds of milliseconds per
 * batch; here it never holds the event loop that answers API calls.
 *
 * In the standalone executable this file is bundled on its own (scripts/build/bundle.ts,
 * bundleInferenceWorker) and started from that text; from source, tsx runs it.
 */

const port = parentPort
if (!port) throw new Error('inference-worker.ts runs as a worker thread')

/** Loaded models by revision; a load in progress is shared, a failed one is forgotten. */
const encoders = new Map<string, Promise<SentenceEncoder>>()

function encoderFor(request: Extract<InferenceRequest, { kind: 'embed' }>): Promise<SentenceEncoder> {
  const { revision } = request.model
  let encoder = encoders.get(revision)
  if (!encoder) {
    encoder = SentenceEncoder.load(request.model)
    encoders.set(revision, encoder)
    encoder.catch(() => encoders.delete(revision))
  }
  return encoder
}

async function release(revision: string): Promise<void> {
  const encoder = encoders.get(revision)
  encoders.delete(revision)
  await encoder?.then((loaded) => loaded.release()).catch(() => {})
}

async function answer(request: InferenceRequest): Promise<InferenceReply | undefined> {
  switch (request.kind) {
    case 'embed': {
      try {
        const encoded = await (await encoderFor(request)).encode(request.texts, request.maxTokens)
        return { kind: 'embedded', id: request.id, ...encoded }
      } catch (error) {
        return {
          kind: 'failed',
          id: request.id,
          message: (error as Error)?.message ?? String(error),
          modelProblem: error instanceof LocalModelError,
        }
      }
    }
    case 'unload':
      await release(request.revision)
      return undefined
    case 'close':
      await Promise.all([...encoders.keys()].map(release))
      return { kind: 'closed' }
  }
}

/** What went wrong in answering, for the request that asked: an embed fails; the others have no one waiting. */
function failure(request: InferenceRequest, error: unknown): InferenceReply | undefined {
  if (request.kind !== 'embed') return undefined
  return { kind: 'failed', id: request.id, message: (error as Error)?.message ?? String(error), modelProblem: false }
}

function send(reply: InferenceReply): void {
  const transfer =
    reply.kind === 'embedded' ? [reply.vectors.buffer, reply.tokenCounts.buffer, reply.keptTokenCounts.buffer] : []
  port!.postMessage(reply, transfer as ArrayBuffer[])
  if (reply.kind === 'closed') port!.close()
}

/**
 * Requests are answered in the order they came (an unload sent before an embed happens
 * before it), and the chain never breaks: whatever one request throws is its own answer.
 */
let queue = Promise.resolve()
port.on('message', (request: InferenceRequest) => {
  queue = queue.then(async () => {
    let reply: InferenceReply | undefined
    try {
      reply = await answer(request)
    } catch (error) {
      reply = failure(request, error)
    }
    if (reply) send(reply)
  })
})
