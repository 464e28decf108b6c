import { describe, expect, it } from 'vitest'
import { ResponseBudget } from '../../src/domain/response-budget.js'

describe('the response budget', () => {
  it('reserves while the reservations fit, and fits again once one is released', () => {
    const budget = new ResponseBudget(100)
    const first = budget.tryReserve(60)!
    expect(budget.tryReserve(50)).toBeUndefined()
    const second = budget.tryReserve(40)
    expect(second).toBeDefined()
    expect(budget.reservedBytes).toBe(100)
    first.release()
    expect(budget.tryReserve(50)).toBeDefined()
    expect(budget.reservations).toBe(2)
  })

  it('releases a reservation once, however often it is released', () => {
    const budget = new ResponseBudget(100)
    const reservation = budget.tryReserve(60)!
    budget.tryReserve(30)
    reservation.release()
    reservation.release()
    expect(budget.reservedBytes).toBe(30)
    expect(budget.reservations).toBe(1)
  })

  it('serves an answer larger than the whole budget when nothing else is reserved, and nothing beside it', () => {
    const budget = new ResponseBudget(100)
    const large = budget.tryReserve(500)!
    expect(large).toBeDefined()
    expect(budget.fits(1)).toBe(false)
    large.release()
    expect(budget.fits(1)).toBe(true)
  })

  it('takes its default limit from the heap limit', () => {
    expect(new ResponseBudget().limitBytes).toBeGreaterThan(0)
  })
})
