import { MemsvcClient } from '@memsvc/client'

const { MEMSVC_ADDRESS: address, MEMSVC_PIN, MEMSVC_API_KEY, SPACE_ID } = process.env
const tls = { pinnedCertificateSha256: MEMSVC_PIN } // the fingerprint `memsvc init` shows
const admin = new MemsvcClient({ address, apiKey: MEMSVC_API_KEY, tls })
const { rawApiKey, apiKeyMetadata } = await admin.apiKeys.create({ labels: { app: 'example' } })
console.log(`created key ${apiKeyMetadata.apiKeyId}; keys now: ${(await admin.apiKeys.list()).keys.length}`)
const client = new MemsvcClient({ address, apiKey: rawApiKey, tls })
const question = { message: 'which tower is in Paris', spaceKeys: [{ spaceId: SPACE_ID, embedderWeights: [] }] }
for await (const { event } of client.memories.retrieve(question)) {
  if (event?.$case === 'retrievedItem') console.log(event.value.chunk.relevanceScore, event.value.chunk.chunkText)
}
admin.close()
client.close()
