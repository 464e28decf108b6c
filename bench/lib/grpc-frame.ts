// The request h2load sends: one gRPC length-prefixed message, encoded once with the
// generated code, written to a file for `h2load -d`. The pre-flight call sends the same
// bytes over node:http2 and checks what h2load cannot see: the grpc-status trailer.
import fs from 'node:fs'
import http2 from 'node:http2'
import { ListApiKeysRequest, ListApiKeysResponse } from '../../src/generated/memsvc/v1/apikeys.js'

/** Byte 0: compressed flag; bytes 1-4: big-endian message length (gRPC over HTTP/2). */
const FRAME_HEADER_BYTES = 5
const PREFLIGHT_TIMEOUT_MS = 5_000

export const LIST_API_KEYS_PATH = '/memsvc.v1.ApiKeyService/ListApiKeys'

export function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(FRAME_HEADER_BYTES + message.length)
  frame.writeUInt8(0, 0)
  frame.writeUInt32BE(message.length, 1)
  frame.set(message, FRAME_HEADER_BYTES)
  return frame
}

/** ListApiKeys with no filter: the gRPC twin of `GET /v1/apikeys`. */
export function writeListApiKeysFrame(file: string): Buffer {
  const frame = grpcFrame(ListApiKeysRequest.encode({ labelFilter: {} }).finish())
  fs.writeFileSync(file, frame)
  return frame
}

/** Sends `frame` once; resolves with the decoded response, rejects unless grpc-status is 0. */
export function preflightListApiKeys(
  address: string,
  frame: Buffer,
  authorization?: string,
): Promise<ListApiKeysResponse> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${address}`)
    const timer = setTimeout(() => {
      session.destroy()
      reject(new Error(`gRPC pre-flight to ${address} timed out`))
    }, PREFLIGHT_TIMEOUT_MS)
    const finish = (error: Error | undefined, response?: ListApiKeysResponse) => {
      clearTimeout(timer)
      session.close()
      if (error) reject(error)
      else resolve(response!)
    }
    session.on('error', (error) => finish(error))
    const stream = session.request({
      ':method': 'POST',
      ':path': LIST_API_KEYS_PATH,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...(authorization ? { authorization } : {}),
    })
    const chunks: Buffer[] = []
    let status: string | undefined
    let message: string | undefined
    const readStatus = (headers: http2.IncomingHttpHeaders) => {
      if (headers['grpc-status'] !== undefined) {
        status = String(headers['grpc-status'])
        message =
          headers['grpc-message'] === undefined ? undefined : decodeURIComponent(String(headers['grpc-message']))
      }
    }
    stream.on('response', readStatus) // trailers-only responses carry the status here
    stream.on('trailers', readStatus)
    stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    stream.on('error', (error) => finish(error))
    stream.on('end', () => {
      if (status !== '0') {
        finish(
          new Error(
            `gRPC pre-flight to ${address}: grpc-status ${status ?? 'missing'}${message ? ` (${message})` : ''}`,
          ),
        )
        return
      }
      const body = Buffer.concat(chunks)
      finish(
        undefined,
        ListApiKeysResponse.decode(body.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + body.readUInt32BE(1))),
      )
    })
    stream.end(frame)
  })
}
