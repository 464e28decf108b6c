/**
 * proto3 has no "absent" for enums and maps: the zero enum value and an empty map
 * mean "not given". These turn them into undefined before the shared validation.
 */
export function enumOrUndefined<T extends string>(value: T | undefined): T | undefined {
  return value === undefined || value.endsWith('_UNSPECIFIED') ? undefined : value
}

export function mapOrUndefined(value: Record<string, string> | undefined): Record<string, string> | undefined {
  return value && Object.keys(value).length > 0 ? value : undefined
}

/** Drops undefined members so that strict schemas see exactly what the client sent. */
export function defined<T extends Record<string, unknown>>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>
}
