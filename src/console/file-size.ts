// Sizes as people read them: "12 KB" below a megabyte (where "0.0 MB" would say nothing), else "3.2 MB".
const BYTES_PER_KB = 1024
const BYTES_PER_MB = 1024 * BYTES_PER_KB
/** Below this many megabytes a size keeps one decimal. */
const DECIMAL_BELOW_MB = 10

const kilobytes = (bytes: number) => String(Math.ceil(bytes / BYTES_PER_KB))

function megabytes(bytes: number): string {
  const value = bytes / BYTES_PER_MB
  return value >= DECIMAL_BELOW_MB ? String(Math.round(value)) : value.toFixed(1)
}

export const formatSize = (bytes: number): string =>
  bytes < BYTES_PER_MB ? `${kilobytes(bytes)} KB` : `${megabytes(bytes)} MB`

/** "3.2 of 10 MB", "12 of 40 KB": the part done in the unit of the whole. */
export const formatSizeProgress = (done: number, total: number): string =>
  total < BYTES_PER_MB ? `${kilobytes(done)} of ${kilobytes(total)} KB` : `${megabytes(done)} of ${megabytes(total)} MB`
