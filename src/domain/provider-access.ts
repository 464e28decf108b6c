import type { ProbeTable, ProbeTargetRow } from '../db/sql/probes.js'
import type { StoredCredential } from '../probes/provider-protocol.js'
import { secretRedactor } from '../secrets/redaction.js'
import type { SecretBox } from '../secrets/secret-box.js'
import { secretContext } from './registry.js'

/** How to call a registered provider: its credential, opened for this call, and a redactor for it. */
export interface ProviderAccess {
  credential: StoredCredential
  /** Replaces the secret in any text bound for a response, a stored error or a log line. */
  redact(text: string): string
}

export function providerAccess(secrets: SecretBox, table: ProbeTable, target: ProbeTargetRow): ProviderAccess {
  const secret = target.credential_secret
    ? secrets.open(target.credential_secret, secretContext(table, target.id))
    : undefined
  return {
    credential: {
      kind: target.credential_kind,
      headerName: target.credential.headerName,
      prefix: target.credential.prefix,
      secret,
    },
    redact: secretRedactor(secret),
  }
}
