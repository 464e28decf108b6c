import type { SamplingParams } from '../validation/registry.js'
import type { ProviderAccess } from './credentials.js'
import { postJson } from './http.js'
import { type ChatMessage, type ChatTarget, chatAnswerText, chatRequest } from './protocol.js'

/**
 * Asks a registered LLM to answer a message from retrieved chunks, through its chat
 * completions API with its stored sampling defaults (the request's temperature and system
 * prompt win). Throws ProviderCallError (or an Error) when the provider fails.
 */

export const DEFAULT_SYSTEM_PROMPT =
  'Answer the question using only the numbered context passages. If they do not contain the answer, say that you do not know. Be concise.'
const MAX_ANSWER_RESPONSE_BYTES = 4 * 1024 * 1024

/** What the client needs to know of a registered LLM. */
export interface LlmProfile extends ChatTarget {
  /** As registered; a capability the registration does not name counts as supported. */
  capabilities: { supportsSystemMessages?: boolean; supportsSamplingParameters?: boolean }
  defaultSamplingParams?: SamplingParams
}

/** A retrieved chunk as the LLM reads it, with where it came from when that is known ("report.pdf, page 12"). */
export interface Passage {
  text: string
  citation?: string
}

export interface AnswerRequest {
  llm: LlmProfile
  access: ProviderAccess
  message: string
  passages: Passage[]
  temperature?: number
  systemPrompt?: string
  timeoutMs: number
  /** Cancels the provider call (the client that asked went away). */
  signal?: AbortSignal
}

/** The stored sampling defaults in the OpenAI field names, which vLLM, llama.cpp and the others accept. */
function samplingOptions(llm: LlmProfile, temperature: number | undefined): Record<string, unknown> {
  const stored = llm.capabilities.supportsSamplingParameters === false ? {} : (llm.defaultSamplingParams ?? {})
  const options: Record<string, unknown> = {
    max_tokens: stored.maxTokens,
    temperature: temperature ?? stored.temperature,
    top_p: stored.topP,
    top_k: stored.topK,
    frequency_penalty: stored.frequencyPenalty,
    presence_penalty: stored.presencePenalty,
    stop: stored.stopSequences && stored.stopSequences.length > 0 ? stored.stopSequences : undefined,
  }
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined))
}

export function answerMessages(
  request: Pick<AnswerRequest, 'llm' | 'message' | 'passages' | 'systemPrompt'>,
): ChatMessage[] {
  const context = request.passages
    .map(({ text, citation }, index) => `[${index + 1}]${citation ? ` (${citation})` : ''} ${text}`)
    .join('\n\n')
  const user = `Context:\n${context || '(no passages were found)'}\n\nQuestion: ${request.message}`
  const system = request.systemPrompt ?? DEFAULT_SYSTEM_PROMPT
  // A model without a system role gets the instructions at the top of the user message.
  if (request.llm.capabilities.supportsSystemMessages === false)
    return [{ role: 'user', content: `${system}\n\n${user}` }]
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ]
}

export async function answerFromPassages(request: AnswerRequest): Promise<string> {
  const http = chatRequest(
    request.llm,
    request.access.credential,
    answerMessages(request),
    samplingOptions(request.llm, request.temperature),
  )
  const body = await postJson(http, {
    timeoutMs: request.timeoutMs,
    maxResponseBytes: MAX_ANSWER_RESPONSE_BYTES,
    redact: request.access.redact,
    signal: request.signal,
  })
  const text = chatAnswerText(body)
  if (text === undefined) throw new Error('the LLM answered without a message')
  return text
}
