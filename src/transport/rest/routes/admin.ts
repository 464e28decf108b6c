import { drainServer } from '../../../domain/drain.js'
import { drainSchema } from '../../../validation/admin.js'
import { Component, json } from '../openapi/operation.js'
import { VIEW } from '../openapi/view-schemas.js'
import type { RestRoute } from '../rest-route.js'
import { callWithBody } from '../use-case-handlers.js'

export const ADMIN_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    pattern: '/v1/admin:drain',
    needsApiKey: true,
    drainExempt: 'drain-control',
    openapi: {
      operationId: 'drainServer',
      tag: 'admin',
      summary: 'Drain the server (admins)',
      description: 'New work is refused (503) from now on; probes, metrics and this call keep answering.',
      body: Component.of('DrainRequest', drainSchema),
      answers: { 200: json('The state reached.', VIEW.DrainResult) },
      errors: ['PERMISSION_DENIED'],
      examples: [{ body: { timeoutSec: 0, reason: 'maintenance window' } }],
      exampleStatus: 200,
      examplePhase: 'shutdown',
    },
    handle: callWithBody(drainServer),
  },
]
