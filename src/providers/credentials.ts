import { secretRedactor } from '../secrets/redaction.js'

/** A registration's credential as one call uses it: the secret is opened only for that call. */
export interface ProviderCredential {
  kind: 'API_KEY' | 'CLOUD_ADC' | 'NONE'
  headerName?: string
  prefix?: string
  /** Only for API_KEY. */
  secret?: string
}

/** How to call a registered provider: its credential, and a redactor for its secret. */
export interface ProviderAccess {
  credential: ProviderCredential
  /** Replaces the secret in any text bound for a response, a stored error or a log line. */
  redact(text: string): string
}

export function providerAccess(credential: ProviderCredential): ProviderAccess {
  return { credential, redact: secretRedactor(credential.secret) }
}

/** The credential cannot be sent by this server; the registration itself stays valid. */
export class UnsupportedCredentialError extends Error {}

export function authHeaders(credential: ProviderCredential): Record<string, string> {
  switch (credential.kind) {
    case 'NONE':
      return {}
    case 'API_KEY': {
      const prefix = credential.prefix ? `${credential.prefix} ` : ''
      return { [credential.headerName ?? 'Authorization']: `${prefix}${credential.secret ?? ''}` }
    }
    case 'CLOUD_ADC':
      // Minting tokens needs the cloud SDK and metadata server, which this server does not embed.
      throw new UnsupportedCredentialError(
        'probing with cloud application default credentials is not supported yet; the registration itself is stored',
      )
  }
}
