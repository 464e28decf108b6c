import vm from 'node:vm'

/**
 * Runs a synchronous task and stops it once it has run for `budgetMs`. node:vm's timeout is
 * a watchdog thread that terminates whatever JavaScript the isolate is running, including
 * functions of this realm called from the script, so a task that never yields is still cut
 * short. Stopping it leaves the objects it was building half done: the task must own them
 * (build what it needs, such as compiled patterns, inside), so nothing shared is left broken.
 */

export class TimeBudgetExceeded extends Error {
  override name = 'TimeBudgetExceeded'
}

const TIMEOUT_CODE = 'ERR_SCRIPT_EXECUTION_TIMEOUT'

/** One context for every run: creating a context costs far more than the run's own overhead. */
let sandbox: { context: vm.Context; script: vm.Script } | undefined

export function runWithinTimeBudget<T>(budgetMs: number, task: () => T): T {
  sandbox ??= { context: vm.createContext({ task: undefined }), script: new vm.Script('task()') }
  const { context, script } = sandbox
  context.task = task
  try {
    return script.runInContext(context, { timeout: budgetMs }) as T
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === TIMEOUT_CODE)
      throw new TimeBudgetExceeded(`stopped after ${budgetMs} ms`)
    throw error
  } finally {
    context.task = undefined
  }
}
