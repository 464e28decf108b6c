import v8 from 'node:v8'
import vm from 'node:vm'

/**
 * The memory this process holds that is still in use: the JavaScript heap and the
 * ArrayBuffers (Buffers) JavaScript owns, measured after a full collection, so that garbage
 * not yet collected does not count. Tests run the server in-process, so this is the
 * server's (and the test's own) memory. The rest of `external` is left out: there the
 * embedded database's WebAssembly memory grows in steps of its own, whatever an answer holds.
 */

v8.setFlagsFromString('--expose_gc')
const collectGarbage = vm.runInNewContext('gc') as () => void

export function liveBytes(): number {
  collectGarbage()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.arrayBuffers
}

export const MIB = 1024 * 1024
