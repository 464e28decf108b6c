import type { ChunkingConfig as DomainChunkingConfig } from '../../../chunking/chunking-config.js'
import { type ChunkingConfig, RecursiveChunking_KeepStrategy } from '../../../generated/memsvc/v1/spaces.js'
import { defined, enumOrUndefined, listOrUndefined, protoEnum } from '../proto-mapping.js'

/*
 * ChunkingConfig is a oneof in proto and an object with exactly one member in the domain
 * (and over REST): `{recursive: {...}}` ⇄ `{strategy: {$case: 'recursive', value: {...}}}`.
 * A message with no strategy set becomes `{}`, which validation refuses by name.
 */

export function chunkingFromProto(config: ChunkingConfig | undefined): Record<string, unknown> | undefined {
  if (!config) return undefined
  const strategy = config.strategy
  if (!strategy) return {}
  switch (strategy.$case) {
    case 'none':
      return { none: {} }
    case 'recursive':
      return {
        recursive: defined({
          chunkSize: strategy.value.chunkSize,
          chunkOverlap: strategy.value.chunkOverlap,
          separators: listOrUndefined(strategy.value.separators),
          keepStrategy: enumOrUndefined(strategy.value.keepStrategy),
          separatorIsRegex: strategy.value.separatorIsRegex,
        }),
      }
    case 'sentence':
      return { sentence: defined({ ...strategy.value }) }
  }
}

export function chunkingToProto(config: DomainChunkingConfig): ChunkingConfig {
  if ('recursive' in config) {
    return {
      strategy: {
        $case: 'recursive',
        value: {
          ...config.recursive,
          keepStrategy: protoEnum(RecursiveChunking_KeepStrategy, config.recursive.keepStrategy),
        },
      },
    }
  }
  if ('sentence' in config) return { strategy: { $case: 'sentence', value: { ...config.sentence } } }
  return { strategy: { $case: 'none', value: {} } }
}
