import { describe, expect, it } from 'vitest'
import { DatabaseUrlError, describeDatabaseTarget, parseDatabaseUrl } from '../../src/config/database-url.js'
import { resolveServerConfig } from '../../src/config/server-config.js'

describe('parseDatabaseUrl: accepted forms', () => {
  it('JDBC URL with host, port and database', () => {
    expect(parseDatabaseUrl('jdbc:postgresql://db.internal:6543/memsvc')).toEqual({
      hosts: ['db.internal'],
      ports: [6543],
      database: 'memsvc',
      user: undefined,
      password: undefined,
      ssl: false,
      options: {},
    })
  })

  it('port defaults to 5432', () => {
    expect(parseDatabaseUrl('jdbc:postgresql://db.internal/memsvc')).toMatchObject({
      hosts: ['db.internal'],
      ports: [5432],
    })
  })

  it('several hosts, each with its own port or the default', () => {
    expect(parseDatabaseUrl('jdbc:postgresql://a.example:5433,b.example,c.example:6000/memsvc')).toMatchObject({
      hosts: ['a.example', 'b.example', 'c.example'],
      ports: [5433, 5432, 6000],
      database: 'memsvc',
    })
  })

  it('IPv6 literals in brackets, with and without a port', () => {
    expect(parseDatabaseUrl('jdbc:postgresql://[::1]:5433/memsvc')).toMatchObject({ hosts: ['::1'], ports: [5433] })
    expect(parseDatabaseUrl('jdbc:postgresql://[fd00::10]/memsvc')).toMatchObject({
      hosts: ['fd00::10'],
      ports: [5432],
    })
    expect(parseDatabaseUrl('jdbc:postgresql://[::1]:5433,127.0.0.1/memsvc')).toMatchObject({
      hosts: ['::1', '127.0.0.1'],
      ports: [5433, 5432],
    })
  })

  it('user and password from the JDBC query', () => {
    expect(parseDatabaseUrl('jdbc:postgresql://h/db?user=alice&password=s%26cret')).toMatchObject({
      user: 'alice',
      password: 's&cret',
      options: {},
    })
  })

  it('user and password from postgres:// userinfo, percent-decoded', () => {
    expect(parseDatabaseUrl('postgres://bob:p%40ss%3Aword@h:5439/db')).toMatchObject({
      user: 'bob',
      password: 'p@ss:word',
      hosts: ['h'],
      ports: [5439],
    })
    expect(parseDatabaseUrl('postgresql://carol@h/db')).toMatchObject({ user: 'carol', password: undefined })
  })

  it('query user/password beat userinfo', () => {
    expect(parseDatabaseUrl('postgres://bob:one@h/db?user=dave&password=two')).toMatchObject({
      user: 'dave',
      password: 'two',
    })
  })

  it('keeps other parameters (but never user or password) as options', () => {
    expect(
      parseDatabaseUrl('jdbc:postgresql://h/db?user=u&password=p&ApplicationName=x&connectTimeout=3').options,
    ).toEqual({
      ApplicationName: 'x',
      connectTimeout: '3',
    })
  })

  it('percent-encoded database names are decoded', () => {
    expect(parseDatabaseUrl('jdbc:postgresql://h/my%20db').database).toBe('my db')
  })

  it('surrounding whitespace is ignored', () => {
    expect(parseDatabaseUrl('  jdbc:postgresql://h/db \n').database).toBe('db')
  })

  it.each([
    ['sslmode=disable', false],
    ['sslmode=allow', false],
    ['sslmode=prefer', 'prefer'],
    ['sslmode=require', 'require'],
    ['sslmode=verify-ca', 'verify-full'],
    ['sslmode=verify-full', 'verify-full'],
    ['ssl=true', 'verify-full'],
    ['ssl=1', 'verify-full'],
    ['ssl=false', false],
    ['', false],
    ['sslmode=disable&ssl=true', false],
  ])('ssl mapping: ?%s → %j', (query, expected) => {
    expect(parseDatabaseUrl(`jdbc:postgresql://h/db?${query}`).ssl).toBe(expected)
  })
})

describe('parseDatabaseUrl: rejected forms', () => {
  it.each([
    ['no database', 'jdbc:postgresql://h:5432', /names no database/],
    ['empty database', 'jdbc:postgresql://h:5432/', /names no database/],
    ['database with a slash', 'jdbc:postgresql://h/db/extra', /invalid database name/],
    ['no host', 'jdbc:postgresql:///db', /names no host/],
    ['no host after userinfo', 'postgres://user@/db', /names no host/],
    ['port out of range', 'jdbc:postgresql://h:70000/db', /invalid port/],
    ['port zero', 'jdbc:postgresql://h:0/db', /invalid port/],
    ['non-numeric port', 'jdbc:postgresql://h:abc/db', /invalid host/],
    ['empty host in a list', 'jdbc:postgresql://a,,b/db', /invalid host/],
    ['unbracketed IPv6', 'jdbc:postgresql://::1:5432/db', /invalid host/],
    ['unknown sslmode', 'jdbc:postgresql://h/db?sslmode=sometimes', /unknown sslmode "sometimes"/],
    ['other JDBC driver', 'jdbc:mysql://h:3306/db', /expected jdbc:postgresql/],
    ['other scheme', 'http://h/db', /expected jdbc:postgresql/],
    ['garbage', 'not a url at all', /expected jdbc:postgresql/],
    ['empty', '', /expected jdbc:postgresql/],
  ])('%s: %j', (_, url, message) => {
    expect(() => parseDatabaseUrl(url)).toThrow(DatabaseUrlError)
    expect(() => parseDatabaseUrl(url)).toThrow(message)
  })
})

describe('database flags override the URL', () => {
  it('--db-user and --db-password beat user and password in the URL', () => {
    const config = resolveServerConfig(
      { 'db-url': 'postgres://urluser:urlpw@h/db?sslmode=require', 'db-user': 'flaguser', 'db-password': 'flagpw' },
      {},
      {},
    )
    expect(config.database).toMatchObject({
      user: 'flaguser',
      password: 'flagpw',
      ssl: 'require',
      hosts: ['h'],
      database: 'db',
    })
  })

  it('DB_USER / DB_PASSWORD beat the URL too, and flags beat them', () => {
    const env = {
      DB_URL: 'jdbc:postgresql://h/db?user=urluser&password=urlpw',
      DB_USER: 'envuser',
      DB_PASSWORD: 'envpw',
    }
    expect(resolveServerConfig({}, env, {}).database).toMatchObject({ user: 'envuser', password: 'envpw' })
    expect(resolveServerConfig({ 'db-password': 'flagpw' }, env, {}).database).toMatchObject({
      user: 'envuser',
      password: 'flagpw',
    })
  })
})

describe('describeDatabaseTarget', () => {
  it('prints hosts, ports, user and database but never the password', () => {
    const secret = 'Sup3r-S3cret-PW'
    for (const url of [
      `jdbc:postgresql://db1:5433,[::1]/memsvc?user=app&password=${secret}`,
      `postgres://app:${secret}@db1:5433,[::1]/memsvc`,
    ]) {
      const text = describeDatabaseTarget(parseDatabaseUrl(url))
      expect(text).toBe('postgresql://app@db1:5433,[::1]:5432/memsvc')
      expect(text).not.toContain(secret)
    }
  })

  it('never prints a password given by flag either', () => {
    const config = resolveServerConfig(
      { 'db-url': 'jdbc:postgresql://h/db', 'db-user': 'u', 'db-password': 'flag-secret-pw' },
      {},
      {},
    )
    expect(describeDatabaseTarget(config.database!)).toBe('postgresql://u@h:5432/db')
  })

  it('omits the user when there is none', () => {
    expect(describeDatabaseTarget(parseDatabaseUrl('jdbc:postgresql://h/db'))).toBe('postgresql://h:5432/db')
  })
})
