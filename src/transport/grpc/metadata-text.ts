import { LONE_SURROGATES } from '../../validation/common.js'

/**
 * gRPC metadata values (other than -bin ones) and the status message travel as HTTP/2
 * header text: grpc-js throws on anything outside printable ASCII in metadata, and its
 * encodeURI() of the status message throws on a lone surrogate. Client text that ends
 * up in either goes through these first.
 */

const OUTSIDE_PRINTABLE_ASCII_OR_PERCENT = /[^\x20-\x24\x26-\x7e]/gu

/** Percent-encodes (as UTF-8) every character outside printable ASCII, and "%" itself; decodeURIComponent reverses it. */
export function asciiMetadataValue(text: string): string {
  return wellFormedText(text).replace(OUTSIDE_PRINTABLE_ASCII_OR_PERCENT, (character) =>
    [...Buffer.from(character, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  )
}

/** Lone surrogates become U+FFFD, so that the text can be encoded at all. */
export function wellFormedText(text: string): string {
  return text.replace(LONE_SURROGATES, '\ufffd')
}
