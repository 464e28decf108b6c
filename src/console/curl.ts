// The curl command equivalent to a recorded request. The API key is written as
// $MEMSVC_API_KEY (the shell expands it) unless the user chose to reveal it; an inline
// provider secret is never kept, so it is always $PROVIDER_API_KEY.
import { type DebugEntry, SECRET_PLACEHOLDER } from './api.js'

/** Single-quotes a shell word. */
export const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

const CONTINUATION = ' \\\n  '

export function curlCommand(entry: DebugEntry, origin: string, revealedKey?: string): string {
  // -N: print each line of a streamed answer as it arrives instead of buffering it.
  const parts = [
    `curl -sS${entry.streamed ? ' -N' : ''}${entry.method === 'GET' ? '' : ` -X ${entry.method}`} ${shellQuote(origin + entry.path)}`,
  ]
  if (entry.authorized)
    parts.push(
      revealedKey
        ? `-H ${shellQuote(`Authorization: Bearer ${revealedKey}`)}`
        : '-H "Authorization: Bearer $MEMSVC_API_KEY"',
    )
  for (const part of entry.form ?? []) parts.push(`-F ${shellQuote(part)}`)
  if (entry.requestBody !== undefined) {
    parts.push(`-H 'Content-Type: application/json'`)
    // Close the single quotes around the secret so that the shell expands the variable.
    parts.push(`-d ${shellQuote(entry.requestBody).replaceAll(SECRET_PLACEHOLDER, `'"$PROVIDER_API_KEY"'`)}`)
  }
  return parts.join(CONTINUATION)
}
