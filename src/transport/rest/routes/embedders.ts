import { embedderUseCases } from '../../../domain/embedders.js'
import { createEmbedderSchema, listEmbeddersSchema, updateEmbedderSchema } from '../../../validation/registry.js'
import { EXAMPLE_IDS, EXAMPLE_PROVIDER_URL } from '../openapi/examples.js'
import { registrationRoutes } from './registrations.js'

export const EMBEDDER_ROUTES = registrationRoutes(embedderUseCases, {
  view: 'Embedder',
  noun: 'embedder',
  article: 'an',
  schemas: { create: createEmbedderSchema, update: updateEmbedderSchema, list: listEmbeddersSchema },
  exampleId: EXAMPLE_IDS.embedder,
  createExamples: [
    {
      name: 'tei',
      body: {
        embedderId: EXAMPLE_IDS.embedder,
        displayName: 'bge-small on TEI',
        providerType: 'TEI',
        endpointUrl: EXAMPLE_PROVIDER_URL,
        modelIdentifier: 'BAAI/bge-small-en-v1.5',
        dimensionality: 384,
        credentials: { kind: 'NONE' },
      },
    },
    {
      // A second embedder, for the space's addEmbedder example.
      name: 'vllm',
      body: {
        embedderId: EXAMPLE_IDS.secondEmbedder,
        displayName: 'e5 on vLLM',
        providerType: 'VLLM',
        endpointUrl: EXAMPLE_PROVIDER_URL,
        modelIdentifier: 'intfloat/e5-small-v2',
        dimensionality: 384,
        labels: { team: 'search' },
        credentials: { kind: 'API_KEY', apiKey: { inlineSecret: 'provider-secret' } },
      },
    },
  ],
  updateExample: { description: 'Small English embedder' },
})
