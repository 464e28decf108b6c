// Where a retrieved chunk of a document came from, in words: "page 12", "pages 12–13",
// "slide 3", "sheet Sales", then the headings above it ("Results › Costs").
import type { RetrievedChunk } from './types.js'

type ChunkSource = NonNullable<RetrievedChunk['source']>

const HEADING_SEPARATOR = ' › '

export function describeChunkSource(source: ChunkSource | undefined): string {
  if (!source) return ''
  const parts: string[] = []
  if (source.page !== undefined)
    parts.push(source.pageEnd !== undefined ? `pages ${source.page}–${source.pageEnd}` : `page ${source.page}`)
  if (source.slide !== undefined) parts.push(`slide ${source.slide}`)
  if (source.sheet !== undefined) parts.push(`sheet ${source.sheet}`)
  if (source.headingPath?.length) parts.push(source.headingPath.join(HEADING_SEPARATOR))
  return parts.join(' · ')
}
