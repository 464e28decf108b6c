import os from 'node:os'
import path from 'node:path'

function xdgDir(variable: string, fallback: string): string {
  const value = process.env[variable]
  return value && path.isAbsolute(value) ? value : path.join(os.homedir(), fallback)
}

/** Default server data directory: embedded database, TLS material, encryption key. */
export function defaultDataDir(): string {
  return path.join(xdgDir('XDG_DATA_HOME', '.local/share'), 'memsvc')
}

/** Per-user cache, where the native HTTP addon is extracted. */
export function cacheDir(): string {
  return path.join(xdgDir('XDG_CACHE_HOME', '.cache'), 'memsvc')
}

/** Per-user client configuration directory. */
export function configDir(): string {
  return path.join(xdgDir('XDG_CONFIG_HOME', '.config'), 'memsvc')
}
