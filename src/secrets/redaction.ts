/**
 * Provider answers quote what they were sent, in whatever encoding their body uses: a
 * JSON error message escapes `"` and `\`, a query string or form percent-encodes, Basic
 * auth and some debug echoes use base64. Each form of the secret is cut out, longest
 * first, so that no form survives inside another.
 */
const REDACTED = '[redacted]'

/** JSON with every character outside printable ASCII, and "/", escaped, as PHP and some Java encoders write it. */
function strictJsonEscaped(secret: string): string {
  return JSON.stringify(secret)
    .slice(1, -1)
    .replace(/\//g, '\\/')
    .replace(/[^\x20-\x7e]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

export function encodedForms(secret: string): string[] {
  const forms = new Set([
    secret,
    JSON.stringify(secret).slice(1, -1),
    strictJsonEscaped(secret),
    // A JSON string of a JSON string (a provider that embeds its own error JSON as text).
    JSON.stringify(JSON.stringify(secret).slice(1, -1)).slice(1, -1),
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%20/g, '+'),
    Buffer.from(secret, 'utf8').toString('base64'),
    Buffer.from(secret, 'utf8').toString('base64url'),
  ])
  return [...forms].filter((form) => form.length > 0).sort((a, b) => b.length - a.length)
}

/** A function that removes every known encoding of `secret` from a text (the identity without a secret). */
export function secretRedactor(secret: string | undefined): (text: string) => string {
  if (!secret) return (text) => text
  const forms = encodedForms(secret)
  return (text) => forms.reduce((redacted, form) => redacted.split(form).join(REDACTED), text)
}
