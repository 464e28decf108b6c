// Retrieve: a message against one or more spaces, with the results shown as they stream
// from POST /v1/memories:retrieve (NDJSON, one event per line): each chunk with its
// score and the memory it belongs to, then the LLM's answer if one was asked for. A
// `status` event (an error after the stream began) shows after the results.
import { DEFAULT_REQUESTED_SIZE, MAX_MESSAGE_LENGTH, MAX_REQUESTED_SIZE } from '../../validation/limits.js'
import { type ApiError, streamCall } from '../api.js'
import { describeChunkSource } from '../chunk-source.js'
import { h, replace } from '../dom.js'
import { checkedForm, FormErrors, field, groupField, input, select, textarea } from '../forms.js'
import { listAll } from '../list-all.js'
import type { Memory, PageContext, Registration, RetrievalEvent, RetrievedChunk, Space } from '../types.js'
import { announce, errorNotice, loading, notice, pageHeading, section, setBusy } from '../ui.js'
import { pageImage } from './spaces/memory-detail.js'

const MODES: Array<[string, string]> = [
  ['HYBRID', 'Hybrid (vectors and keywords)'],
  ['VECTOR', 'Vector'],
  ['KEYWORD', 'Keyword'],
]
/** How often a running stream checks that its page is still shown. */
const LEAVE_CHECK_MS = 500
/** Characters of metadata shown beside a result before it is cut. */
const METADATA_PREVIEW = 160

/** The page whose stored image belongs beside the chunk: its (first) page, when the memory kept that page's image. */
function storedImagePage(memory: Memory | undefined, chunk: RetrievedChunk): number | undefined {
  const page = chunk.source?.page
  if (page === undefined || !memory?.documentOptions?.extractPageImages) return undefined
  return memory.extraction?.pages.find((item) => item.pageNumber === page)?.imageStored ? page : undefined
}

type ChosenModel = { control: HTMLInputElement | HTMLSelectElement; note?: string }

/** A select of the registered models, or a free-text id when the list cannot be read (e.g. no such API yet). */
async function modelChooser(action: string, path: string, listField: string, idField: string): Promise<ChosenModel> {
  const all = await listAll<Registration>(action, path, listField)
  if (all.unavailable || all.error) {
    return {
      control: input({ spellcheck: 'false', placeholder: 'ID (optional)', autocomplete: 'off' }),
      note: all.unavailable ? `${path} is not available on this server; type an ID.` : undefined,
    }
  }
  return {
    control: select([
      ['', 'None'],
      ...all.items.map((item): [string, string] => [
        String(item[idField]),
        `${item.displayName} (${item.modelIdentifier})`,
      ]),
    ]),
  }
}

/** Moves errors about a space's filter (spaceKeys.N.filter) to the one filter field the form has. */
function withFilterField(error: ApiError): ApiError {
  return {
    ...error,
    details: error.details.map((detail) => ({
      ...detail,
      field: detail.field.replace(/^spaceKeys\.\d+\.filter/, 'filter'),
    })),
  }
}

interface ResultsView {
  element: HTMLElement
  onEvent(event: RetrievalEvent): void
  finish(outcome: { error?: ApiError; brokenOff?: string }): void
}

function resultsView(spaceNames: Map<string, string>, expectAnswer: boolean): ResultsView {
  const memories: Array<Memory & { originalContent?: string }> = []
  const list = h('ol', { class: 'results', 'aria-label': 'Retrieved chunks' })
  const progress = h(
    'p',
    { class: 'muted', role: 'status', 'data-testid': 'retrieve-progress' },
    'Waiting for the first result…',
  )
  const answerSlot = h(
    'div',
    { 'data-testid': 'llm-answer-slot' },
    expectAnswer ? h('p', { class: 'muted' }, 'The LLM answers once the results are in.') : null,
  )
  const tail = h('div', { 'data-testid': 'retrieve-tail' })
  let expected: number | undefined
  let received = 0
  let answered = false

  const updateProgress = (done: boolean) => {
    const counted = `${received} result${received === 1 ? '' : 's'}`
    progress.textContent = done
      ? `${counted}${answered ? ' and an answer' : ''}.`
      : expected !== undefined
        ? `Streaming… ${received} of ${expected} results`
        : `Streaming… ${counted}`
  }

  const item = (chunk: RetrievedChunk): HTMLElement => {
    const memory = memories[chunk.memoryIndex]
    const memoryId = memory?.memoryId ?? chunk.memoryId
    const spaceId = memory?.spaceId
    const score = Math.max(0, Math.min(1, chunk.relevanceScore))
    const metadata = memory && Object.keys(memory.metadata).length ? JSON.stringify(memory.metadata) : undefined
    const source = describeChunkSource(chunk.source)
    const imagePage = storedImagePage(memory, chunk)
    const imageSlot = imagePage === undefined ? null : h('div', { class: 'result-image' }, loading(`page ${imagePage}`))
    if (imageSlot && imagePage !== undefined)
      void pageImage(memoryId, imagePage).then((image) => replace(imageSlot, image))
    return h(
      'li',
      {
        class: imageSlot ? 'result with-image' : 'result',
        'data-chunk-id': chunk.chunkId,
        'data-memory-id': memoryId,
      },
      h(
        'div',
        { class: 'result-head' },
        h('span', { class: 'rank' }, `#${received}`),
        h(
          'span',
          { class: 'score', 'data-testid': 'score', title: String(chunk.relevanceScore) },
          chunk.relevanceScore.toFixed(3),
        ),
        h('meter', { min: 0, max: 1, value: score, 'aria-label': 'relevance score' }),
        source
          ? h(
              'span',
              { class: 'chunk-source', 'data-testid': 'chunk-source' },
              memory?.fileName ? `${memory.fileName}, ${source}` : source,
            )
          : null,
        h('span', { class: 'muted small' }, `characters ${chunk.startOffset}–${chunk.endOffset}`),
      ),
      imageSlot,
      h('p', { class: 'chunk-text', 'data-testid': 'chunk-text' }, chunk.chunkText),
      h(
        'p',
        { class: 'result-memory small' },
        'Memory ',
        spaceId
          ? h(
              'a',
              {
                href: `#/spaces/${encodeURIComponent(spaceId)}/memories/${encodeURIComponent(memoryId)}`,
                'data-testid': 'memory-link',
              },
              h('code', null, memoryId),
            )
          : h('code', null, memoryId),
        spaceId
          ? [' in ', h('a', { href: `#/spaces/${encodeURIComponent(spaceId)}` }, spaceNames.get(spaceId) ?? 'a space')]
          : null,
        metadata
          ? [
              ' · ',
              h(
                'code',
                { class: 'metadata' },
                metadata.length > METADATA_PREVIEW ? `${metadata.slice(0, METADATA_PREVIEW)}…` : metadata,
              ),
            ]
          : null,
      ),
    )
  }

  const element = h(
    'div',
    { class: 'retrieve-results' },
    section('Answer', answerSlot),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'results-title' },
      h('h3', { id: 'results-title' }, 'Results'),
      progress,
      list,
      tail,
    ),
  )
  if (!expectAnswer) element.firstElementChild!.remove()

  return {
    element,
    onEvent(event) {
      if ('resultSetBoundary' in event) {
        if (event.resultSetBoundary.kind === 'BEGIN') {
          expected = event.resultSetBoundary.expectedItems
          for (const said of event.resultSetBoundary.notices ?? [])
            progress.after(h('p', { class: 'notice info', 'data-testid': 'retrieve-notice' }, said.message))
        } else if (expectAnswer && !answered)
          replace(answerSlot, h('p', { class: 'muted' }, 'Waiting for the LLM answer…'))
        updateProgress(false)
      } else if ('memoryDefinition' in event) {
        memories.push(event.memoryDefinition.memory)
      } else if ('retrievedItem' in event) {
        received++
        list.appendChild(item(event.retrievedItem.chunk))
        updateProgress(false)
      } else if ('abstractReply' in event) {
        answered = true
        replace(answerSlot, h('p', { class: 'answer', 'data-testid': 'llm-answer' }, event.abstractReply.text))
      } else if ('status' in event) {
        tail.appendChild(
          h(
            'div',
            { class: 'notice error', role: 'alert', 'data-testid': 'stream-status' },
            h('strong', null, 'The stream ended with an error: '),
            `${event.status.code}: ${event.status.message}`,
          ),
        )
        if (expectAnswer && !answered)
          replace(answerSlot, h('p', { class: 'muted' }, 'No answer (see the error below the results).'))
      }
    },
    finish(outcome) {
      updateProgress(true)
      if (outcome.brokenOff) tail.appendChild(notice('error', h('strong', null, 'Incomplete: '), outcome.brokenOff))
      if (received === 0 && !outcome.brokenOff) list.replaceWith(notice('info', 'Nothing matched.'))
      if (expectAnswer && !answered && !tail.querySelector('[data-testid="stream-status"]'))
        replace(answerSlot, h('p', { class: 'muted' }, 'No answer came.'))
    },
  }
}

export async function retrievePage(context: PageContext): Promise<void> {
  const { root } = context
  const holder = h('div', null, loading('your spaces'))
  root.append(pageHeading('Retrieve'), holder)
  const [spaces, reranker, llm] = await Promise.all([
    listAll<Space>('List spaces', '/v1/spaces', 'spaces'),
    modelChooser('List rerankers', '/v1/rerankers', 'rerankers', 'rerankerId'),
    modelChooser('List LLMs', '/v1/llms', 'llms', 'llmId'),
  ])
  if (!context.isCurrent()) return
  if (spaces.unavailable)
    return replace(holder, notice('info', 'The spaces API is not available on this server (/v1/spaces answered 404).'))
  if (spaces.error) return replace(holder, errorNotice(spaces.error, 'Could not list the spaces'))
  if (spaces.items.length === 0)
    return replace(
      holder,
      notice(
        'info',
        'There is nothing to retrieve from yet. ',
        h('a', { href: '#/spaces/new' }, 'Create a space'),
        ' and add memories to it.',
      ),
    )

  const spaceNames = new Map(spaces.items.map((space) => [space.spaceId, space.name]))
  const preselected = new Set(context.query.getAll('space'))
  const errors = new FormErrors()
  const message = field(
    errors,
    { name: 'message', label: 'Message', required: true, hint: 'A question or a passage to match.' },
    textarea({ rows: 3, maxlength: MAX_MESSAGE_LENGTH }),
  )
  const boxes = spaces.items.map((space, index) =>
    h('input', {
      type: 'checkbox',
      value: space.spaceId,
      checked: preselected.size ? preselected.has(space.spaceId) : index === 0,
    }),
  )
  const spaceGroup = groupField(
    errors,
    { name: 'spaceKeys', label: 'Spaces', hint: 'One or more.' },
    boxes,
    spaces.items.map((space) => `${space.name}${space.ownerId === context.me.userId ? '' : ' (shared)'}`),
  )
  const filter = field(
    errors,
    {
      name: 'filter',
      label: 'Filter',
      hint: "Optional, over the metadata, e.g. val('$.source') = 'notes' AND CAST(val('$.year') AS NUMBER) >= 2024",
    },
    input({ class: 'mono', spellcheck: 'false', autocomplete: 'off' }),
  )
  const requestedSize = field(
    errors,
    { name: 'requestedSize', label: 'Number of results', hint: `1 to ${MAX_REQUESTED_SIZE}.` },
    input({
      type: 'number',
      min: 1,
      max: MAX_REQUESTED_SIZE,
      step: '1',
      value: String(DEFAULT_REQUESTED_SIZE),
      inputmode: 'numeric',
    }),
  )
  const mode = field(errors, { name: 'mode', label: 'Mode' }, select(MODES))
  const rerankerField = field(
    errors,
    { name: 'postProcessor.rerankerId', label: 'Reranker', hint: reranker.note ?? 'Optional: reorders the results.' },
    reranker.control,
  )
  const llmField = field(
    errors,
    { name: 'postProcessor.llmId', label: 'LLM', hint: llm.note ?? 'Optional: answers the message from the results.' },
    llm.control,
  )
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Retrieve')
  const stop = h('button', { type: 'button', class: 'button', hidden: true }, 'Stop')
  const resultsSlot = h('div', { 'aria-live': 'off' })

  const form = checkedForm(
    'form',
    {
      errors,
      attrs: { 'aria-label': 'Retrieve memories' },
      check: (violations) => {
        const spaceIds = boxes.filter((box) => box.checked).map((box) => box.value)
        if (spaceIds.length === 0) violations.push({ field: 'spaceKeys', description: 'choose at least one space' })
        return spaceIds
      },
      send: async (spaceIds) => {
        const filterText = filter.control.value.trim()
        const body: Record<string, unknown> = {
          message: message.control.value,
          spaceKeys: spaceIds.map((spaceId) => (filterText ? { spaceId, filter: filterText } : { spaceId })),
          requestedSize: Number(requestedSize.control.value || DEFAULT_REQUESTED_SIZE),
          mode: mode.control.value,
        }
        const postProcessor: Record<string, string> = {}
        if (rerankerField.control.value.trim()) postProcessor.rerankerId = rerankerField.control.value.trim()
        if (llmField.control.value.trim()) postProcessor.llmId = llmField.control.value.trim()
        if (Object.keys(postProcessor).length) body.postProcessor = postProcessor

        const results = resultsView(spaceNames, postProcessor.llmId !== undefined)
        replace(resultsSlot)
        setBusy(submit, true, 'Retrieving…')
        const stopper = new AbortController()
        stop.hidden = false
        stop.onclick = () => stopper.abort()
        // Leaving the page ends the stream too (the server then stops its work, e.g. the LLM call).
        const leaveCheck = window.setInterval(() => context.isCurrent() || stopper.abort(), LEAVE_CHECK_MS)
        const outcome = await streamCall(
          'Retrieve memories',
          'POST',
          '/v1/memories:retrieve',
          body,
          (line) => {
            if (!context.isCurrent()) return
            // The first line shows the results panel: nothing appears for an answer refused before it began.
            if (!results.element.isConnected) replace(resultsSlot, results.element)
            results.onEvent(line as RetrievalEvent)
          },
          stopper.signal,
        )
        window.clearInterval(leaveCheck)
        stop.hidden = true
        setBusy(submit, false, 'Retrieving…')
        if (!context.isCurrent()) return
        if (outcome.error) return void errors.show(withFilterField(outcome.error), 'Not retrieved')
        if (!results.element.isConnected) replace(resultsSlot, results.element)
        results.finish(outcome)
        announce(outcome.brokenOff ? 'The results are incomplete' : 'Retrieval finished')
      },
    },
    message.wrapper,
    spaceGroup,
    h('div', { class: 'row' }, filter.wrapper),
    h('div', { class: 'grid3' }, requestedSize.wrapper, mode.wrapper),
    h('div', { class: 'row' }, rerankerField.wrapper, llmField.wrapper),
    h('div', { class: 'actions' }, submit, stop),
  )
  replace(holder, section('Ask', form), resultsSlot)
}
