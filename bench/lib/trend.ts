// Trends of a soak's series: what a slow leak or a cost that grows with the requests served
// looks like, where one interval's worst value mostly says what else the machine was doing.

export interface Point {
  x: number
  y: number
}

export interface LineFit {
  /** y per unit of x. */
  slope: number
  /** The slope's standard error: its noise, from the points' scatter about the line. */
  slopeStandardError: number
  /** Mean of y: the line's value at the mean x. */
  meanY: number
}

/** Ordinary least squares; undefined for fewer than three points with finite values or no spread in x. */
export function leastSquares(points: readonly Point[]): LineFit | undefined {
  const finite = points.filter((point) => Number.isFinite(point.x) && Number.isFinite(point.y))
  const count = finite.length
  if (count < 3) return undefined
  const meanX = finite.reduce((sum, point) => sum + point.x, 0) / count
  const meanY = finite.reduce((sum, point) => sum + point.y, 0) / count
  let spreadX = 0
  let covariance = 0
  for (const point of finite) {
    spreadX += (point.x - meanX) ** 2
    covariance += (point.x - meanX) * (point.y - meanY)
  }
  if (spreadX === 0) return undefined
  const slope = covariance / spreadX
  const residuals = finite.reduce((sum, point) => sum + (point.y - (meanY + slope * (point.x - meanX))) ** 2, 0)
  // Two parameters fitted: count − 2 degrees of freedom.
  return { slope, slopeStandardError: Math.sqrt(residuals / (count - 2) / spreadX), meanY }
}

/**
 * The lowest value in the first and in the last third of a series. For a sawtooth such as
 * the JS heap in use (garbage piles up between collections), the lowest samples are those
 * taken just after a collection: what is live. A leak raises them; where in its cycle the
 * collector happened to be at each sample does not.
 */
export function thirdsLowest(values: ReadonlyArray<number | undefined>): { first: number; last: number } | undefined {
  const finite = values.filter((value): value is number => value !== undefined && Number.isFinite(value))
  const third = Math.floor(finite.length / 3)
  if (third < 1) return undefined
  return { first: Math.min(...finite.slice(0, third)), last: Math.min(...finite.slice(-third)) }
}
