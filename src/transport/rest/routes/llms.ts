import { llmUseCases } from '../../../domain/llms.js'
import { createLlmSchema, listLlmsSchema, updateLlmSchema } from '../../../validation/registry.js'
import { EXAMPLE_IDS, EXAMPLE_PROVIDER_URL } from '../openapi/examples.js'
import { registrationRoutes } from './registrations.js'

export const LLM_ROUTES = registrationRoutes(llmUseCases, {
  view: 'Llm',
  noun: 'LLM',
  article: 'an',
  schemas: { create: createLlmSchema, update: updateLlmSchema, list: listLlmsSchema },
  exampleId: EXAMPLE_IDS.llm,
  createExamples: [
    {
      body: {
        llmId: EXAMPLE_IDS.llm,
        displayName: 'Llama on Ollama',
        providerType: 'OLLAMA',
        endpointUrl: EXAMPLE_PROVIDER_URL,
        modelIdentifier: 'llama3.2',
        capabilities: { supportsChat: true },
        credentials: { kind: 'NONE' },
      },
    },
  ],
  updateExample: { mergeLabels: { tier: 'local' } },
})
