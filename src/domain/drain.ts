import type { LifecycleState } from '../lifecycle/lifecycle.js'
import { drainSchema } from '../validation/admin.js'
import { parseInput } from '../validation/parse.js'
import type { CallContext } from './call-context.js'
import type { DomainContext } from './context.js'
import { requirePermission } from './permissions.js'

export interface DrainResult {
  state: LifecycleState
  quiesced: boolean
  message: string
}

export async function drainServer(context: DomainContext, call: CallContext, input: unknown): Promise<DrainResult> {
  const principal = await context.authenticate(call)
  requirePermission(principal, 'DRAIN_SERVER')
  const request = parseInput(drainSchema, input)
  const waitMs = request.waitForQuiesce ? request.timeoutSec * 1000 : 0
  context.log.info('drain requested', {
    userId: principal.userId,
    reason: request.reason,
    waitForQuiesce: request.waitForQuiesce,
  })
  const outcome = await context.drainController.drain(request.reason, waitMs)
  return {
    state: context.lifecycle.state,
    quiesced: outcome.quiesced,
    message:
      request.waitForQuiesce || outcome.quiesced
        ? outcome.message
        : 'draining; call again with waitForQuiesce to wait for it',
  }
}
