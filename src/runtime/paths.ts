import os from 'node:os'
import path from 'node:path'

function xdgDir(variable: string, fallback: string): string {
  const value = process.env[variable]
  return value && path.isAbsolute(value) ? value : path.join(os.homedir(), fallback)
}

/**
 * A directory systemd made for the unit (StateDirectory=, CacheDirectory=): it sets
 * $STATE_DIRECTORY / $CACHE_DIRECTORY to absolute paths, several separated by ':' when
 * the unit names several; ours names one.
 */
function systemdDir(
  variable: 'STATE_DIRECTORY' | 'CACHE_DIRECTORY',
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const first = env[variable]?.split(':')[0]
  return first && path.isAbsolute(first) ? first : undefined
}

/**
 * Default server data directory: embedded database, TLS material, encryption key. As a
 * systemd service the unit's StateDirectory (a service user has no home to speak of).
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return systemdDir('STATE_DIRECTORY', env) ?? path.join(xdgDir('XDG_DATA_HOME', '.local/share'), 'memsvc')
}

/** Where the native HTTP addon is extracted: the unit's CacheDirectory, else the per-user cache. */
export function cacheDir(): string {
  return systemdDir('CACHE_DIRECTORY') ?? path.join(xdgDir('XDG_CACHE_HOME', '.cache'), 'memsvc')
}

/** Per-user client configuration directory. */
export function configDir(): string {
  return path.join(xdgDir('XDG_CONFIG_HOME', '.config'), 'memsvc')
}
