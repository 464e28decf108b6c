// `npm run bench` measures the executable users run, so it builds dist/memsvc first
// when it is missing or older than anything it is built from.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

/** What dist/memsvc is made of; a newer file here means the executable is stale. */
const BUILD_INPUTS = ['src', 'proto', 'scripts', 'build.ts', 'package.json', 'package-lock.json']
/** The protobuf code the build generates; the bench's gRPC frame is encoded with it. */
export const GENERATED_CODE = path.join('src', 'generated')

function newestMtimeMs(target: string): number {
  if (!fs.existsSync(target)) return 0
  const stat = fs.statSync(target)
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = stat.mtimeMs
  for (const entry of fs.readdirSync(target)) newest = Math.max(newest, newestMtimeMs(path.join(target, entry)))
  return newest
}

/** What the bench cannot run without, when the build has not written it. */
function missingOutput(repoRoot: string, executable: string): string | undefined {
  if (!fs.existsSync(executable)) return `${path.relative(repoRoot, executable)} is missing`
  if (!fs.existsSync(path.join(repoRoot, GENERATED_CODE)))
    return `${GENERATED_CODE} (generated protobuf code) is missing`
  return undefined
}

export function staleReason(repoRoot: string, executable: string): string | undefined {
  const missing = missingOutput(repoRoot, executable)
  if (missing) return missing
  const built = fs.statSync(executable).mtimeMs
  const stale = BUILD_INPUTS.filter((input) => newestMtimeMs(path.join(repoRoot, input)) > built)
  return stale.length > 0
    ? `${stale.join(', ')} changed since ${path.relative(repoRoot, executable)} was built`
    : undefined
}

export function ensureBuilt(
  repoRoot: string,
  executable: string,
  allowBuild: boolean,
): 'built' | 'up to date' | 'stale (--no-build)' {
  const reason = staleReason(repoRoot, executable)
  if (!reason) return 'up to date'
  if (!allowBuild) {
    if (missingOutput(repoRoot, executable)) throw new Error(`${reason}; run "npm run build" (or drop --no-build)`)
    return 'stale (--no-build)'
  }
  console.log(`building: ${reason}`)
  execFileSync('npm', ['run', 'build'], { cwd: repoRoot, stdio: 'inherit' })
  return 'built'
}
