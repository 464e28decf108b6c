import type { OperationName } from '../support/api-client.js'
import type { ApiCase } from './identity-cases.js'
import { EMBEDDER, LLM, RERANKER } from './registry-cases.js'

/**
 * Input that once ended the process (a non-ASCII label key over gRPC) or answered 500
 * (NUL, lone surrogates, year 10000, forged page tokens). Every case must be a 400 naming
 * the field, on both transports. A lone surrogate cannot cross gRPC (protobuf strings are
 * UTF-8, the client sends U+FFFD), so those cases are REST-only.
 */

const NUL = '\u0000'
const LONE_SURROGATE = '\ud800'
/** 10000-01-01T00:00:00Z: PostgreSQL cannot read a JavaScript Date this late. */
const YEAR_10000 = 253_402_300_800_000

const pageToken = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const FORGED_PAGE_TOKENS: Record<string, string> = {
  'a date past year 9999': pageToken([8.64e15, '00000000-0000-4000-8000-000000000000']),
  'a negative date': pageToken([-1, '00000000-0000-4000-8000-000000000000']),
  'an id of 36 dashes': pageToken([1, '-'.repeat(36)]),
  'not base64 JSON': '!!not-a-token!!',
  'an object instead of a pair': pageToken({ createdAt: 1, id: 'x' }),
}
const LIST_OPERATIONS: OperationName[] = ['listUsers', 'listApiKeys', 'listEmbedders', 'listLlms', 'listRerankers']

const badLabelKeys = ['é', `a${NUL}b`]

export const BAD_INPUT_CASES: ApiCase[] = [
  ...badLabelKeys.flatMap((key): ApiCase[] => [
    {
      name: `createApiKey: label key ${JSON.stringify(key)}`,
      operation: 'createApiKey',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: `labels.${key}`,
      input: () => ({ labels: { [key]: 'v' } }),
    },
    {
      name: `listApiKeys: label filter key ${JSON.stringify(key)}`,
      operation: 'listApiKeys',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: `labelFilter.${key}`,
      input: () => ({ labelFilter: { [key]: 'v' } }),
      only: 'grpc',
    },
    {
      name: `createEmbedder: label key ${JSON.stringify(key)}`,
      operation: 'createEmbedder',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: `labels.${key}`,
      input: () => EMBEDDER.input({ labels: { [key]: 'v' } }),
    },
    {
      name: `listEmbedders: label filter key ${JSON.stringify(key)}`,
      operation: 'listEmbedders',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: `labelFilter.${key}`,
      input: () => ({ labelFilter: { [key]: 'v' } }),
      only: 'grpc',
    },
    {
      name: `createReranker: label key ${JSON.stringify(key)}`,
      operation: 'createReranker',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: `labels.${key}`,
      input: () => RERANKER.input({ labels: { [key]: 'v' } }),
    },
  ]),
  ...[NUL, LONE_SURROGATE].flatMap((bad): ApiCase[] => {
    const what = bad === NUL ? 'NUL' : 'a lone surrogate'
    const only = bad === NUL ? undefined : ('rest' as const)
    const restOnly = only ? { only } : {}
    return [
      {
        name: `createApiKey: ${what} in a label value`,
        operation: 'createApiKey',
        as: 'alice',
        expect: 'INVALID_ARGUMENT',
        field: 'labels.k',
        input: () => ({ labels: { k: `v${bad}` } }),
        ...restOnly,
      },
      {
        name: `createUser: ${what} in the username`,
        operation: 'createUser',
        as: 'root',
        expect: 'INVALID_ARGUMENT',
        field: 'username',
        input: () => ({ username: `u${bad}` }),
        ...restOnly,
      },
      {
        name: `createUser: ${what} in the display name`,
        operation: 'createUser',
        as: 'root',
        expect: 'INVALID_ARGUMENT',
        field: 'displayName',
        input: () => ({ username: `dn-${crypto.randomUUID().slice(0, 8)}`, displayName: `d${bad}` }),
        ...restOnly,
      },
      {
        name: `createEmbedder: ${what} in the display name`,
        operation: 'createEmbedder',
        as: 'alice',
        expect: 'INVALID_ARGUMENT',
        field: 'displayName',
        input: () => EMBEDDER.input({ displayName: `d${bad}` }),
        ...restOnly,
      },
      {
        name: `createEmbedder: ${what} in the description`,
        operation: 'createEmbedder',
        as: 'alice',
        expect: 'INVALID_ARGUMENT',
        field: 'description',
        input: () => EMBEDDER.input({ description: `d${bad}` }),
        ...restOnly,
      },
      {
        name: `createEmbedder: ${what} in the model identifier`,
        operation: 'createEmbedder',
        as: 'alice',
        expect: 'INVALID_ARGUMENT',
        field: 'modelIdentifier',
        input: () => EMBEDDER.input({ modelIdentifier: `m${bad}` }),
        ...restOnly,
      },
      {
        name: `createLlm: ${what} in the version`,
        operation: 'createLlm',
        as: 'alice',
        expect: 'INVALID_ARGUMENT',
        field: 'version',
        input: () => LLM.input({ version: `1${bad}` }),
        ...restOnly,
      },
      {
        name: `createLlm: ${what} in a stop sequence`,
        operation: 'createLlm',
        as: 'alice',
        expect: 'INVALID_ARGUMENT',
        field: 'defaultSamplingParams.stopSequences.0',
        input: () => LLM.input({ defaultSamplingParams: { stopSequences: [`s${bad}`] } }),
        ...restOnly,
      },
      {
        name: `createLlm: ${what} in a label value`,
        operation: 'createLlm',
        as: 'alice',
        expect: 'INVALID_ARGUMENT',
        field: 'labels.k',
        input: () => LLM.input({ labels: { k: `v${bad}` } }),
        ...restOnly,
      },
      {
        name: `createReranker: ${what} in the model identifier`,
        operation: 'createReranker',
        as: 'alice',
        expect: 'INVALID_ARGUMENT',
        field: 'modelIdentifier',
        input: () => RERANKER.input({ modelIdentifier: `m${bad}` }),
        ...restOnly,
      },
    ]
  }),
  // Found by the fuzzer: the whole key came back in the trailers, more header than a gRPC client accepts.
  {
    name: 'listLlms: a 70,000-character label filter key is named cut short',
    operation: 'listLlms',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: `labelFilter.${'c'.repeat(80)}…`,
    input: () => ({ labelFilter: { ['c'.repeat(70_000)]: 'v' } }),
    only: 'grpc',
  },
  {
    name: 'createApiKey: a 70,000-character label key is named cut short',
    operation: 'createApiKey',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: `labels.${'c'.repeat(80)}…`,
    input: () => ({ labels: { ['c'.repeat(70_000)]: 'v' } }),
  },
  {
    name: 'createApiKey: expiresAt in year 10000',
    operation: 'createApiKey',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'expiresAt',
    input: () => ({ expiresAt: YEAR_10000 }),
  },
  {
    name: 'createApiKey: expiresAt in year 10000 as a decimal string',
    operation: 'createApiKey',
    as: 'alice',
    expect: 'INVALID_ARGUMENT',
    field: 'expiresAt',
    input: () => ({ expiresAt: String(YEAR_10000) }),
    only: 'rest',
  },
  // A LOCAL embedder's model is a directory found by name: a path must not reach outside the models directories.
  ...['../../../etc', '/etc/passwd', 'models/../..', '.hidden'].map(
    (modelIdentifier): ApiCase => ({
      name: `createEmbedder: LOCAL model name ${JSON.stringify(modelIdentifier)} that is a path`,
      operation: 'createEmbedder',
      as: 'alice',
      expect: 'INVALID_ARGUMENT',
      field: 'modelIdentifier',
      input: () => ({ displayName: 'local', providerType: 'LOCAL', modelIdentifier }),
    }),
  ),
  ...LIST_OPERATIONS.flatMap((operation) =>
    Object.entries(FORGED_PAGE_TOKENS).map(
      ([what, token]): ApiCase => ({
        name: `${operation}: a forged page token (${what})`,
        operation,
        as: 'root',
        expect: 'INVALID_ARGUMENT',
        field: 'nextToken',
        input: () => ({ nextToken: token }),
      }),
    ),
  ),
]
