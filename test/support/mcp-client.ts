import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

/** What a tool answered: its JSON text parsed, and whether it is a tool error. */
export interface ToolAnswer {
  isError: boolean
  body: any
}

export interface McpSession {
  client: Client
  call(name: string, args?: Record<string, unknown>): Promise<ToolAnswer>
  close(): Promise<void>
}

/**
 * The official SDK client over Streamable HTTP, as an agent framework connects: the endpoint
 * URL and the key in a header (Authorization unless `header` names another).
 */
export async function connectMcp(
  baseUrl: string,
  apiKey: string,
  options: { header?: 'authorization' | 'x-api-key'; headers?: Record<string, string>; transcript?: string[] } = {},
): Promise<McpSession> {
  const header = options.header ?? 'authorization'
  const keyHeaders: Record<string, string> =
    header === 'authorization' ? { authorization: `Bearer ${apiKey}` } : { 'x-api-key': apiKey }
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), {
    requestInit: { headers: { ...keyHeaders, ...options.headers } },
    fetch: options.transcript ? recordingFetch(options.transcript) : undefined,
  })
  const client = new Client({ name: 'memsvc-test', version: '1.0.0' })
  await client.connect(transport)
  return {
    client,
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args })
      const content = result.content as Array<{ type: string; text?: string }>
      return { isError: result.isError === true, body: JSON.parse(content[0]!.text!) }
    },
    close: () => client.close(),
  }
}

/** fetch that writes each exchange to `transcript`, as it went over the wire (the key shortened). */
function recordingFetch(transcript: string[]): typeof fetch {
  return async (input, init) => {
    const method = init?.method ?? 'GET'
    const headers = new Headers(init?.headers)
    const key = headers.get('authorization') ?? headers.get('x-api-key') ?? ''
    const shownKey = key.replace(/(msk_[0-9A-Za-z]{6})[0-9A-Za-z]+/, '$1…')
    const sent = [
      `> ${method} ${new URL(String(input)).pathname}  (${headers.has('x-api-key') ? 'x-api-key' : 'authorization'}: ${shownKey})`,
    ]
    if (typeof init?.body === 'string') sent.push(`> ${init.body}`)
    const response = await fetch(input, init)
    const text = await response.clone().text()
    // Written once answered, so that concurrent exchanges do not interleave.
    transcript.push(...sent, `< ${response.status}${text ? ` ${text}` : ''}`, '')
    return response
  }
}
