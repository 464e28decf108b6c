const { MemsvcClient, MemsvcError } = require('@memsvc/client')
const client = new MemsvcClient({
  address: process.env.MEMSVC_ADDRESS,
  apiKey: process.env.MEMSVC_API_KEY,
  tls: { pinnedCertificateSha256: process.env.MEMSVC_PIN },
})
client.apiKeys
  .list()
  .then((listed) => console.log(`keys: ${listed.keys.map((key) => key.apiKeyId).join(', ')}`))
  .then(() => client.memories.get({ memoryId: '00000000-0000-4000-8000-000000000000' }))
  .catch((error) =>
    console.log(
      `${error instanceof MemsvcError ? 'MemsvcError' : 'other'} ${error.code} ${error.grpcStatus} requestId=${Boolean(error.requestId)}`,
    ),
  )
  .finally(() => client.close())
