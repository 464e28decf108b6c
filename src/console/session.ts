// The API key lives in sessionStorage only: never in localStorage, a cookie or a URL.
// It is gone when the tab is closed.
const API_KEY = 'memsvc.console.apiKey'
const DEBUG = 'memsvc.console.debug'

export const session = {
  get apiKey(): string | null {
    return sessionStorage.getItem(API_KEY)
  },
  signIn(apiKey: string): void {
    sessionStorage.setItem(API_KEY, apiKey)
  },
  signOut(): void {
    sessionStorage.removeItem(API_KEY)
  },
  get debug(): boolean {
    return sessionStorage.getItem(DEBUG) === '1'
  },
  set debug(on: boolean) {
    if (on) sessionStorage.setItem(DEBUG, '1')
    else sessionStorage.removeItem(DEBUG)
  },
}
