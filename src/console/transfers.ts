// What call() cannot do: an upload whose progress the page shows (XMLHttpRequest reports the
// bytes sent; fetch does not), and answers that are bytes, not JSON (a page image, a document's
// original file). Both carry the session's key and are recorded for debug mode like any call.
import { type ApiError, type ApiResult, record, reportUnauthenticated, requestHeaders, toApiError } from './api.js'
import { session } from './session.js'

const NETWORK_ERROR: ApiError = { code: 0, status: 'NETWORK', message: 'the server could not be reached', details: [] }

const parseJson = (text: string): unknown => {
  try {
    return text ? JSON.parse(text) : undefined
  } catch {
    return undefined
  }
}

export interface UploadProgress {
  sent: number
  total: number
}

/**
 * POST `path` as multipart/form-data: the `request` part (JSON) first, then the file, as the
 * server reads an upload. `onProgress` hears the bytes sent as they go; the answer is JSON.
 */
export function uploadMultipart<T>(
  action: string,
  path: string,
  request: Record<string, unknown>,
  file: File,
  onProgress: (progress: UploadProgress) => void,
): Promise<ApiResult<T>> {
  const form = new FormData()
  form.append('request', JSON.stringify(request))
  form.append('file', file, file.name)
  const started = performance.now()
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', path)
    for (const [name, value] of Object.entries(requestHeaders(true, session.apiKey, false)))
      xhr.setRequestHeader(name, value)
    xhr.upload.onprogress = (event) =>
      onProgress({ sent: event.loaded, total: event.lengthComputable ? event.total : file.size })
    const finish = (status: number, text: string) => {
      record({
        action,
        method: 'POST',
        path,
        form: [`request=${JSON.stringify(request)};type=application/json`, `file=@${file.name}`],
        authorized: Boolean(session.apiKey),
        status,
        responseText: text,
        durationMs: Math.round(performance.now() - started),
      })
      const parsed = parseJson(text)
      if (status >= 200 && status < 300) return resolve({ status, ok: true, data: parsed as T })
      const error = status === 0 ? NETWORK_ERROR : toApiError(status, parsed, text || `HTTP ${status}`)
      if (status === 401 && session.apiKey) reportUnauthenticated(error)
      resolve({ status, ok: false, error, raw: parsed })
    }
    xhr.onload = () => finish(xhr.status, xhr.responseText)
    xhr.onerror = () => finish(0, 'network error: the upload did not reach the server')
    xhr.send(form)
  })
}

/** GET `path` for its bytes (an image, a document): the Blob, or the API's error. */
export async function fetchBytes(action: string, path: string): Promise<ApiResult<Blob>> {
  const started = performance.now()
  let status = 0
  let blob: Blob | undefined
  let text = ''
  try {
    const response = await fetch(path, {
      headers: requestHeaders(true, session.apiKey, false, '*/*'),
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
    })
    status = response.status
    if (response.ok) blob = await response.blob()
    else text = await response.text()
  } catch (error) {
    text = `network error: ${(error as Error).message}`
  }
  record({
    action,
    method: 'GET',
    path,
    authorized: Boolean(session.apiKey),
    status,
    responseText: blob ? `(${blob.size} bytes of ${blob.type || 'unknown type'})` : text,
    durationMs: Math.round(performance.now() - started),
  })
  if (blob) return { status, ok: true, data: blob }
  const parsed = parseJson(text)
  const error = status === 0 ? NETWORK_ERROR : toApiError(status, parsed, text || `HTTP ${status}`)
  if (status === 401 && session.apiKey) reportUnauthenticated(error)
  return { status, ok: false, error, raw: parsed }
}

/**
 * The bytes as a data: URL for an <img>. Not an object URL: the console's Content-Security-Policy
 * allows images from the server and data: only, and page images are small enough.
 */
export function dataUrlOf(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader()
    reader.onload = () => resolve(String(reader.result))
    reader.onerror = () => reject(reader.error)
    reader.readAsDataURL(blob)
  })
}

/** Saves the bytes as a file the browser downloads (a link's navigation, which the CSP does not restrict). */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob)
  const link = document.createElement('a')
  link.href = url
  link.download = fileName
  document.body.appendChild(link)
  link.click()
  link.remove()
  // The download has its own copy once started.
  window.setTimeout(() => URL.revokeObjectURL(url), 1000)
}
