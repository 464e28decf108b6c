// The compiled uWS addon answers pipelined requests in order when responses are asynchronous
// (third_party/uWebSockets.js/NOTES.md, change 6). Upstream closes such a
// connection. These run the addon itself, over plain TCP and TLS, with handlers that answer
// after a timer, so the order the server sees and the order it answers in can differ.

import type { HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js'
import crypto from 'node:crypto'
import fs from 'node:fs'
import type { Socket } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { generate } from 'selfsigned'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadUws } from '../../src/runtime/uws.js'
import { bodiesIn, connectRaw, exchangeRaw, rawRequest } from '../support/raw-http.js'
import { waitFor } from '../support/wait.js'

const PIPELINE_LENGTH = 40
const ROUNDS = 5
/** Long enough that a pipelined request arrives while the response is pending. */
const SLOW_MS = 150
/** Change 6 holds at most 256 × the default 4 KiB header limit behind a pending response. */
const HELD_LIMIT_BYTES = 256 * 4096

interface Counters {
  started: Map<string, number>
  aborted: number
}

/** Routes: /delay/:ms/:tag answers `tag` after ms (0: at once, in the handler), /echo answers a digest of the body. */
function addRoutes(app: TemplatedApp, counters: Counters): void {
  const later = (res: HttpResponse, ms: number, body: string) => {
    let aborted = false
    res.onAborted(() => {
      aborted = true
      counters.aborted++
    })
    setTimeout(() => aborted || res.cork(() => res.end(body)), ms)
  }
  app.get('/delay/:ms/:tag', (res, req) => {
    const ms = Number(req.getParameter(0))
    const tag = req.getParameter(1)!
    counters.started.set(tag, (counters.started.get(tag) ?? 0) + 1)
    if (ms === 0) res.end(tag)
    else later(res, ms, tag)
  })
  // Chunked: write, then end (the other place a response ends in uWS).
  app.get('/chunked/:ms/:tag', (res, req) => {
    const tag = req.getParameter(1)!
    counters.started.set(tag, (counters.started.get(tag) ?? 0) + 1)
    let aborted = false
    res.onAborted(() => {
      aborted = true
      counters.aborted++
    })
    setTimeout(
      () =>
        aborted ||
        res.cork(() => {
          res.write(`${tag}:`)
          res.end('end')
        }),
      Number(req.getParameter(0)),
    )
  })
  app.post('/echo', (res) => {
    const hash = crypto.createHash('sha256')
    let length = 0
    let aborted = false
    res.onAborted(() => {
      aborted = true
      counters.aborted++
    })
    res.onData((chunk, isLast) => {
      hash.update(Buffer.from(chunk))
      length += chunk.byteLength
      // Answered a tick later, like a handler that writes to a database.
      if (isLast) setImmediate(() => aborted || res.cork(() => res.end(`${length}:${hash.digest('hex')}`)))
    })
  })
}

const get = (ms: number, tag: string) => rawRequest('GET', `/delay/${ms}/${tag}`)

describe.each([
  { transport: 'TCP', tls: false },
  { transport: 'TLS', tls: true },
])('uWS over $transport answers asynchronous pipelines in order', ({ tls }) => {
  const counters: Counters = { started: new Map(), aborted: 0 }
  let listenSocket: us_listen_socket
  let port: number
  let certDir: string | undefined

  beforeAll(async () => {
    const uws = loadUws()
    let app: TemplatedApp
    if (tls) {
      certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'uws-pipelining-'))
      const pair = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
        keyType: 'ec',
        curve: 'P-256',
        algorithm: 'sha256',
      })
      fs.writeFileSync(path.join(certDir, 'cert.pem'), pair.cert)
      fs.writeFileSync(path.join(certDir, 'key.pem'), pair.private)
      app = uws.SSLApp({ cert_file_name: path.join(certDir, 'cert.pem'), key_file_name: path.join(certDir, 'key.pem') })
    } else {
      app = uws.App()
    }
    addRoutes(app, counters)
    listenSocket = await new Promise((resolve) =>
      app.listen('127.0.0.1', 0, (socket) => resolve(socket as us_listen_socket)),
    )
    port = uws.us_socket_local_port(listenSocket)
  })
  afterAll(() => {
    if (listenSocket) loadUws().us_listen_socket_close(listenSocket)
    if (certDir) fs.rmSync(certDir, { recursive: true, force: true })
  })

  it(`${PIPELINE_LENGTH} pipelined requests answered after 0-9 ms each come back in order, ${ROUNDS} rounds`, async () => {
    let inOrder = 0
    for (let round = 0; round < ROUNDS; round++) {
      const tags = Array.from({ length: PIPELINE_LENGTH }, (_, index) => `r${round}n${index}`)
      const requests = tags.map((tag, index) => get((index * 7) % 10, tag))
      const reply = await exchangeRaw(port, Buffer.concat(requests), { tls, expectResponses: PIPELINE_LENGTH })
      expect(bodiesIn(reply.received)).toEqual(tags)
      inOrder += tags.length
    }
    console.log(
      `${tls ? 'TLS' : 'TCP'}: ${inOrder} of ${PIPELINE_LENGTH * ROUNDS} pipelined requests answered in order over ${ROUNDS} connections`,
    )
  })

  it('a pipeline that arrives a few bytes at a time (held from the parser fallback buffer) is answered in order', async () => {
    const tags = ['split0', 'split1', 'split2', 'split3']
    const whole = Buffer.concat(tags.map((tag) => get(3, tag)))
    const pieces = Array.from({ length: Math.ceil(whole.length / 11) }, (_, index) =>
      whole.subarray(index * 11, index * 11 + 11),
    )
    const reply = await exchangeRaw(port, pieces, { tls, gapMs: 2, expectResponses: tags.length })
    expect(bodiesIn(reply.received)).toEqual(tags)
  })

  it('chunked responses (write, then end) and sized ones mixed in a pipeline come back in order', async () => {
    const tags = ['mixed0', 'mixed1', 'mixed2', 'mixed3', 'mixed4', 'mixed5']
    const requests = tags.map((tag, index) =>
      index % 2 ? rawRequest('GET', `/chunked/${index * 3}/${tag}`) : get(index * 3, tag),
    )
    // No Content-Length to count chunked responses by: the exchange runs until its wait ends.
    const reply = await exchangeRaw(port, Buffer.concat(requests), { tls, waitMs: 1_500 })
    expect(reply.statuses).toEqual(tags.map(() => 200))
    expect([...reply.received.matchAll(/mixed\d/g)].map((match) => match[0])).toEqual(tags)
  })

  it('200 connections that close at random moments mid-pipeline leave the server answering in order', async () => {
    const closing = Array.from(
      { length: 200 },
      (_, index) =>
        new Promise<void>((resolve) => {
          const socket = connectRaw(port, tls, () => {
            socket.write(
              Buffer.concat(
                Array.from({ length: 6 }, (_, position) =>
                  position % 2
                    ? rawRequest('GET', `/chunked/${(index + position) % 4}/gone`)
                    : get((index + position) % 4, 'gone'),
                ),
              ),
            )
            setTimeout(() => socket.destroy(), index % 7)
          })
          socket.on('error', () => {})
          socket.on('close', () => resolve())
        }),
    )
    await Promise.all(closing)
    const reply = await exchangeRaw(port, Buffer.concat([get(4, 'survivor0'), get(0, 'survivor1')]), {
      tls,
      expectResponses: 2,
    })
    expect(bodiesIn(reply.received)).toEqual(['survivor0', 'survivor1'])
  })

  it('a POST pipelined behind a slow GET gets its whole body, and its answer comes second', async () => {
    const body = crypto.randomBytes(48 * 1024)
    const reply = await exchangeRaw(port, [get(SLOW_MS, 'slow-before-post'), rawRequest('POST', '/echo', {}, body)], {
      tls,
      expectResponses: 2,
    })
    expect(bodiesIn(reply.received)).toEqual([
      'slow-before-post',
      `${body.length}:${crypto.createHash('sha256').update(body).digest('hex')}`,
    ])
  })

  it('a client that closes mid-pipeline: the pending response is aborted, the held requests never start, others are served', async () => {
    const abortedBefore = counters.aborted
    const socket = await new Promise<Socket>((resolve) => {
      const connection = connectRaw(port, tls, () => resolve(connection))
    })
    socket.on('error', () => {})
    socket.write(
      Buffer.concat([get(SLOW_MS * 4, 'pending-then-closed'), get(0, 'held-never-run'), get(0, 'held-never-run')]),
    )
    await waitFor('the slow request to start', () => counters.started.has('pending-then-closed'), {
      timeoutMs: 5_000,
      intervalMs: 5,
    })
    socket.destroy()
    await waitFor('the pending response to be aborted', () => counters.aborted > abortedBefore, {
      timeoutMs: 5_000,
      intervalMs: 5,
    })
    const after = await exchangeRaw(port, Buffer.concat([get(5, 'after-close-a'), get(0, 'after-close-b')]), {
      tls,
      expectResponses: 2,
    })
    expect(bodiesIn(after.received)).toEqual(['after-close-a', 'after-close-b'])
    expect(counters.started.get('held-never-run')).toBeUndefined()
  })

  it(`more than ${HELD_LIMIT_BYTES} bytes behind a pending response close the connection; the server goes on`, async () => {
    const abortedBefore = counters.aborted
    const oversized = rawRequest('POST', '/echo', {}, Buffer.alloc(HELD_LIMIT_BYTES + 64 * 1024, 'x'))
    const reply = await exchangeRaw(port, [get(SLOW_MS * 4, 'pending-then-over-limit'), oversized], {
      tls,
      waitMs: 10_000,
      expectResponses: 2,
    })
    expect(reply.closed).toBe(true)
    expect(reply.statuses).toEqual([])
    await waitFor('the pending response to be aborted', () => counters.aborted > abortedBefore, {
      timeoutMs: 5_000,
      intervalMs: 5,
    })
    const after = await exchangeRaw(port, get(0, 'after-limit'), { tls, expectResponses: 1 })
    expect(bodiesIn(after.received)).toEqual(['after-limit'])
  })
})
