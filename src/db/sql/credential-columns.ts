/** The credential columns every registration table (embedders, llms, rerankers) has (types only; each table has its own module). */
export interface CredentialColumns {
  credential_kind: 'API_KEY' | 'CLOUD_ADC' | 'NONE'
  /** The public parts: header name, prefix and short secret fingerprint, or scopes and quota project. */
  credential: {
    headerName?: string
    prefix?: string
    secretFingerprint?: string
    scopes?: string[]
    quotaProjectId?: string
  }
  /** version ‖ IV ‖ tag ‖ AES-256-GCM ciphertext of the inline secret; only for API_KEY. Never returned. */
  credential_secret: Buffer | null
  /** Identifies the credential for duplicate detection: keyed HMAC of the secret, hash of the ADC settings, or "none". */
  credential_fingerprint: string
}
