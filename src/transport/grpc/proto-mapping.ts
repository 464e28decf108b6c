import type * as v from 'valibot'

/*
 * Typed mapping between the generated proto messages (src/generated, from proto/) and the
 * domain. Each service file maps a request with a `…FromProto` function typed by
 * ProtoInput and a response with a `…ToProto` function typed by ToProto: when the proto,
 * the domain's schema or type, or the mapping gain or lose a field without the others,
 * `tsc` fails, so no field is dropped over gRPC alone.
 */

/** `true` when A and B name the same fields; otherwise the fields only one of them has, which tsc then prints. */
export type SameFields<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never]
  ? true
  : { fieldsOnlyInProto: Exclude<keyof A, keyof B>; fieldsOnlyInDomain: Exclude<keyof B, keyof A> }

/**
 * The domain input built from a request message: an entry for every field of the message,
 * which must be the fields the domain's schema takes. Values stay unknown here: the
 * schema validates them, the same way for REST and gRPC.
 */
export type ProtoInput<Message, Schema extends v.GenericSchema> =
  SameFields<Message, v.InferInput<Schema>> extends true
    ? { [Field in keyof Required<Message>]: unknown }
    : SameFields<Message, v.InferInput<Schema>>

/** The response message for a domain value with the same fields (values converted where the types differ). */
export type ToProto<Domain, Message> = SameFields<Message, Domain> extends true ? Message : SameFields<Message, Domain>

/** A domain value as the generated string enum of the same name; tsc fails for a value the proto enum lacks. */
export function protoEnum<Enum extends Record<string, string>, Name extends keyof Enum>(
  values: Enum,
  name: Name,
): Enum[Name] {
  return values[name]
}

/**
 * proto3 has no "absent" for enums, maps and repeated fields: the zero enum value, an empty
 * map and an empty list mean "not given". These turn them into undefined before the shared
 * validation.
 */
export function enumOrUndefined<T extends string>(value: T | undefined): T | undefined {
  return value === undefined || value.endsWith('_UNSPECIFIED') ? undefined : value
}

export function mapOrUndefined(value: Record<string, string> | undefined): Record<string, string> | undefined {
  return value && Object.keys(value).length > 0 ? value : undefined
}

export const listOrUndefined = <T>(items: T[] | undefined): T[] | undefined =>
  items && items.length > 0 ? items : undefined

/** Drops undefined members so that strict schemas see exactly what the client sent. */
export function defined<T extends Record<string, unknown>>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>
}
