import { rerankerUseCases } from '../../../domain/rerankers.js'
import { createRerankerSchema, listRerankersSchema, updateRerankerSchema } from '../../../validation/registry.js'
import { EXAMPLE_IDS, EXAMPLE_PROVIDER_URL } from '../openapi/examples.js'
import { registrationRoutes } from './registrations.js'

export const RERANKER_ROUTES = registrationRoutes(rerankerUseCases, {
  view: 'Reranker',
  noun: 'reranker',
  article: 'a',
  schemas: { create: createRerankerSchema, update: updateRerankerSchema, list: listRerankersSchema },
  exampleId: EXAMPLE_IDS.reranker,
  createExamples: [
    {
      body: {
        rerankerId: EXAMPLE_IDS.reranker,
        displayName: 'bge reranker on TEI',
        providerType: 'TEI',
        endpointUrl: EXAMPLE_PROVIDER_URL,
        modelIdentifier: 'BAAI/bge-reranker-base',
        credentials: { kind: 'NONE' },
      },
    },
  ],
  updateExample: { displayName: 'bge reranker' },
})
