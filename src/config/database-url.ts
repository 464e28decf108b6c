/** Connection settings for postgres.js, parsed from a JDBC or postgres:// URL. */
export interface DatabaseTarget {
  hosts: string[]
  ports: number[]
  database: string
  user?: string
  password?: string
  ssl: false | 'require' | 'prefer' | 'verify-full'
  /** Other query parameters, kept for the log line. */
  options: Record<string, string>
}

export class DatabaseUrlError extends Error {}

const DEFAULT_POSTGRES_PORT = 5432
const MAX_TCP_PORT = 65535

function parseSslMode(params: URLSearchParams): DatabaseTarget['ssl'] {
  const mode = params.get('sslmode')
  if (mode !== null) {
    switch (mode) {
      case 'disable':
      case 'allow':
        return false
      case 'prefer':
        return 'prefer'
      case 'require':
        return 'require'
      case 'verify-ca':
      case 'verify-full':
        return 'verify-full'
      default:
        throw new DatabaseUrlError(`unknown sslmode "${mode}"`)
    }
  }
  const ssl = params.get('ssl')
  return ssl === 'true' || ssl === '1' ? 'verify-full' : false
}

/**
 * Accepts `jdbc:postgresql://host[:port][,host2[:port2]]/db?user=..&password=..&sslmode=..`
 * and `postgres://` / `postgresql://` URLs. User and password in the URL are defaults
 * that the --db-user / --db-password flags override.
 */
export function parseDatabaseUrl(raw: string): DatabaseTarget {
  const text = raw.trim()
  let rest: string
  if (text.startsWith('jdbc:postgresql://')) rest = text.slice('jdbc:postgresql://'.length)
  else if (text.startsWith('postgres://')) rest = text.slice('postgres://'.length)
  else if (text.startsWith('postgresql://')) rest = text.slice('postgresql://'.length)
  else throw new DatabaseUrlError('expected jdbc:postgresql://host:port/database or postgres://user@host:port/database')

  const queryStart = rest.indexOf('?')
  const params = new URLSearchParams(queryStart === -1 ? '' : rest.slice(queryStart + 1))
  const beforeQuery = queryStart === -1 ? rest : rest.slice(0, queryStart)
  const slash = beforeQuery.indexOf('/')
  const authority = slash === -1 ? beforeQuery : beforeQuery.slice(0, slash)
  const database = decodeURIComponent(slash === -1 ? '' : beforeQuery.slice(slash + 1))
  if (!database) throw new DatabaseUrlError('the URL names no database (…/database)')
  if (database.includes('/')) throw new DatabaseUrlError(`invalid database name "${database}"`)

  let user: string | undefined
  let password: string | undefined
  let hostList = authority
  const at = authority.lastIndexOf('@')
  if (at !== -1) {
    const credentials = authority.slice(0, at)
    hostList = authority.slice(at + 1)
    const colon = credentials.indexOf(':')
    user = decodeURIComponent(colon === -1 ? credentials : credentials.slice(0, colon))
    if (colon !== -1) password = decodeURIComponent(credentials.slice(colon + 1))
  }
  if (!hostList) throw new DatabaseUrlError('the URL names no host')

  const hosts: string[] = []
  const ports: number[] = []
  for (const entry of hostList.split(',')) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d+))?$/.exec(entry)
    if (!match) throw new DatabaseUrlError(`invalid host "${entry}"`)
    const port = match[2] === undefined ? DEFAULT_POSTGRES_PORT : Number(match[2])
    if (!Number.isInteger(port) || port < 1 || port > MAX_TCP_PORT)
      throw new DatabaseUrlError(`invalid port in "${entry}"`)
    hosts.push(match[1]!.replace(/^\[|\]$/g, ''))
    ports.push(port)
  }

  user = params.get('user') ?? user
  password = params.get('password') ?? password
  const options: Record<string, string> = {}
  for (const [key, value] of params) {
    if (key !== 'user' && key !== 'password') options[key] = value
  }
  return { hosts, ports, database, user, password, ssl: parseSslMode(params), options }
}

/** A printable form of the target that never includes the password. */
export function describeDatabaseTarget(target: DatabaseTarget): string {
  const hosts = target.hosts.map((host, i) => `${host.includes(':') ? `[${host}]` : host}:${target.ports[i]}`).join(',')
  return `postgresql://${target.user ? `${target.user}@` : ''}${hosts}/${target.database}`
}
