// Binds the generated service definitions (src/generated, from proto/memsvc/v1) to short,
// typed method names. The name tables are checked against the definitions by the compiler,
// and a method is retried on UNAVAILABLE only when it is listed as idempotent (it reads, or
// repeating it cannot do anything twice).
import type { CallOptions, MethodDefinition, Transport } from './transport.js'

// biome-ignore lint/suspicious/noExplicitAny: matches any generated method definition
type AnyMethod = MethodDefinition<any, any>
type RequestOf<M> = M extends MethodDefinition<infer Request, unknown> ? Request : never
type ResponseOf<M> = M extends { responseDeserialize: (value: Buffer) => infer Response } ? Response : never

/** Enum fields also take their names as plain strings ('TEI' as well as Embedder_ProviderType.TEI). */
export type Loose<T> = T extends string
  ? T | `${T}`
  : T extends Buffer | Uint8Array | Date
    ? T
    : T extends readonly (infer Element)[]
      ? Loose<Element>[]
      : T extends object
        ? { [K in keyof T]: Loose<T[K]> }
        : T

/**
 * A request message in which every top-level field may be left out (it then has its protobuf
 * default); nested messages are given whole, as the generated types describe them.
 */
export type RequestInput<Request> = { [K in keyof Request]?: Loose<Request[K]> | undefined }

/** A client-streaming method takes its messages as an (async) iterable and answers once. */
export type BoundMethod<M> = M extends { requestStream: true }
  ? (
      messages: AsyncIterable<RequestInput<RequestOf<M>>> | Iterable<RequestInput<RequestOf<M>>>,
      options?: CallOptions,
    ) => Promise<ResponseOf<M>>
  : M extends { responseStream: true }
    ? (request?: RequestInput<RequestOf<M>>, options?: CallOptions) => AsyncGenerator<ResponseOf<M>, void, undefined>
    : (request?: RequestInput<RequestOf<M>>, options?: CallOptions) => Promise<ResponseOf<M>>

export type ServiceClient<Definition, Names extends Record<string, keyof Definition>> = {
  readonly [Name in keyof Names]: BoundMethod<Definition[Names[Name]]>
}

export function bindService<
  Definition extends Record<string, AnyMethod>,
  const Names extends Record<string, keyof Definition>,
>(
  transport: Transport,
  definition: Definition,
  names: Names,
  idempotent: readonly (keyof Names)[],
): ServiceClient<Definition, Names> {
  const bound: Record<string, unknown> = {}
  for (const [name, generatedName] of Object.entries(names)) {
    const method = definition[generatedName as keyof Definition]!
    const retryable = idempotent.includes(name)
    bound[name] = method.requestStream
      ? (messages: AsyncIterable<object> | Iterable<object>, options?: CallOptions) =>
          transport.clientStream(method, messages, options)
      : method.responseStream
        ? (request?: object, options?: CallOptions) => transport.stream(method, request, retryable, options)
        : (request?: object, options?: CallOptions) => transport.unary(method, request, retryable, options)
  }
  return Object.freeze(bound) as ServiceClient<Definition, Names>
}
