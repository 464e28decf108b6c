import { Counter, Histogram, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { SeriesCounter, SeriesHistogram } from '../../src/observability/series-histogram.js'

const BUCKETS = [0.001, 0.01, 0.1, 1]
const LABELS = ['route', 'status_code'] as const
// Below, on and above each bound, and beyond the last one.
const OBSERVATIONS: Array<[string, string, number]> = [
  ['/a', '200', 0.0005],
  ['/a', '200', 0.001],
  ['/a', '200', 0.0011],
  ['/a', '200', 0.5],
  ['/a', '500', 1],
  ['/a', '500', 7.5],
  ['/b "q"', '200', 0.01],
  ['/b "q"', '200', 0],
]

function lines(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .sort()
}

describe('SeriesHistogram', () => {
  it('writes the same exposition as prom-client’s Histogram for the same observations', async () => {
    const ours = new Registry()
    const theirs = new Registry()
    const series = new SeriesHistogram('request_seconds', 'Request time.', LABELS, BUCKETS, ours)
    const reference = new Histogram({
      name: 'request_seconds',
      help: 'Request time.',
      labelNames: LABELS,
      buckets: BUCKETS,
      registers: [theirs],
    })
    for (const [route, status, value] of OBSERVATIONS) {
      series.series({ route, status_code: status }).observe(value)
      reference.observe({ route, status_code: status }, value)
    }
    // Label order inside the braces differs ("le" first there, last here); the samples do not.
    const normalise = (text: string) =>
      lines(text)
        .map((line) =>
          line.replace(
            /\{(.*)\}/,
            (_, inner: string) =>
              `{${inner
                .split(/,(?=\w+=")/)
                .sort()
                .join(',')}}`,
          ),
        )
        .sort()
    expect(normalise(await ours.metrics())).toEqual(normalise(await theirs.metrics()))
  })

  it('a SeriesCounter counts what its histogram observed, written as prom-client’s Counter writes it', async () => {
    const ours = new Registry()
    const theirs = new Registry()
    const histogram = new SeriesHistogram('calls_seconds', 'Call time.', LABELS, BUCKETS, new Registry())
    new SeriesCounter('calls_total', 'Calls.', histogram, ours)
    const reference = new Counter({ name: 'calls_total', help: 'Calls.', labelNames: LABELS, registers: [theirs] })
    for (const [route, status, value] of OBSERVATIONS) {
      histogram.series({ route, status_code: status }).observe(value)
      reference.inc({ route, status_code: status })
    }
    expect(lines(await ours.metrics())).toEqual(lines(await theirs.metrics()))
  })

  it('hands out one series per label set, and reset() zeroes it in place for holders', async () => {
    const registry = new Registry()
    const histogram = new SeriesHistogram('x_seconds', 'X.', LABELS, BUCKETS, registry)
    const held = histogram.series({ route: '/a', status_code: '200' })
    expect(histogram.series({ route: '/a', status_code: '200' })).toBe(held)
    expect(histogram.series({ route: '/a', status_code: '404' })).not.toBe(held)
    held.observe(0.002)
    expect(await registry.metrics()).toContain('x_seconds_count{route="/a",status_code="200"} 1')
    histogram.reset()
    expect(await registry.metrics()).toContain('x_seconds_count{route="/a",status_code="200"} 0')
    held.observe(0.002)
    expect(await registry.metrics()).toContain('x_seconds_count{route="/a",status_code="200"} 1')
  })
})
