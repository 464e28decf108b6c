// A file from disk to gRPC UploadMemory: the header, then the bytes as they are read, one
// message per read. Only a read or two is in memory at once (the stream waits for gRPC to
// take each message), so a file of any size up to the server's limit goes through.
import fs from 'node:fs'
import type { CreateMemoryRequest, CreateMemoryResponse } from '../generated/memsvc/v1/memories.js'
import type { Connection } from './connection.js'

/** Bytes per data message: well under the 4 MiB gRPC message limit, and progress moves often enough. */
export const UPLOAD_MESSAGE_BYTES = 1024 * 1024

type UploadHeader = Omit<CreateMemoryRequest, 'originalContent' | 'originalContentB64' | 'originalContentBytes'>

async function* uploadMessages(header: UploadHeader, file: string, onSent: (bytes: number) => void) {
  yield { part: { $case: 'header' as const, value: header } }
  let sent = 0
  for await (const data of fs.createReadStream(file, { highWaterMark: UPLOAD_MESSAGE_BYTES })) {
    yield { part: { $case: 'data' as const, value: data as Buffer } }
    // Counted once gRPC asked for the next message, i.e. took this one.
    sent += (data as Buffer).length
    onSent(sent)
  }
}

/** Uploads `file` as a new memory; `onSent` hears the bytes sent so far after each message. */
export function uploadFile(
  connection: Connection,
  header: UploadHeader,
  file: string,
  onSent: (bytes: number) => void,
): Promise<CreateMemoryResponse> {
  return connection.run((api) => api.memories.upload(uploadMessages(header, file, onSent)))
}
