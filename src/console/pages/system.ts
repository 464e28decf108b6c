// System: server information, probes, and drain (only when the server has the
// endpoint: a GET to it answers 405 when it exists, 404 when it does not).

import type { LicenseSummary } from '../../domain/licenses.js'
import { DEFAULT_DRAIN_TIMEOUT_SEC, MAX_DRAIN_REASON_LENGTH, MAX_DRAIN_TIMEOUT_SEC } from '../../validation/limits.js'
import { call } from '../api.js'
import { h, replace } from '../dom.js'
import { input } from '../forms.js'
import type { PageContext, SystemInfo } from '../types.js'
import {
  announce,
  badge,
  confirmDialog,
  errorNotice,
  keyValueTable,
  loading,
  notice,
  pageHeading,
  section,
  setBusy,
} from '../ui.js'
import { type Probe, probe, readinessBadge, stateBadge } from './overview.js'

const DRAIN_PATH = '/v1/admin:drain'

interface DrainResult {
  state: string
  quiesced: boolean
  message: string
}

function probeRow(name: string, result: Probe): [string, HTMLElement] {
  const ok = result.status === 200
  return [
    name,
    h(
      'span',
      null,
      badge(result.status === 0 ? 'no answer' : `HTTP ${result.status}`, ok ? 'ok' : 'bad'),
      ' ',
      h('code', { class: 'small' }, result.body ? JSON.stringify(result.body) : ''),
    ),
  ]
}

function licenseSummary(license: LicenseSummary | undefined): HTMLElement {
  if (!license) return h('span', { class: 'muted' }, 'unknown')
  if (!license.present)
    return h(
      'span',
      null,
      badge('missing', 'warn'),
      ` no licence files in ${license.directory || 'the licence directory'}`,
    )
  const parts: string[] = []
  if (license.productLicense) parts.push(license.productLicense)
  parts.push(`notices for ${license.thirdPartyPackages} bundled third-party packages`)
  return h(
    'span',
    null,
    parts.join('; '),
    license.directory ? h('span', { class: 'muted' }, ` (in ${license.directory})`) : null,
  )
}

export async function systemPage(context: PageContext): Promise<void> {
  const { root, me } = context
  const infoSlot = h('div', null, loading('the system information'))
  const probesSlot = h('div', null, loading('the probes'))
  const drainSlot = h('div', { 'data-testid': 'drain' }, loading('drain availability'))
  root.append(
    pageHeading('System'),
    section('Server', infoSlot),
    section('Lifecycle and health probes', probesSlot),
    section('Drain', drainSlot),
  )

  const renderProbes = async () => {
    const [livez, readyz, startupz] = await Promise.all([probe('/livez'), probe('/readyz'), probe('/startupz')])
    if (!context.isCurrent()) return
    replace(
      probesSlot,
      keyValueTable([
        ['State', h('span', { 'data-testid': 'system-state' }, stateBadge(livez.body?.state))],
        ['Readiness', readinessBadge(readyz)],
        probeRow('GET /livez', livez),
        probeRow('GET /readyz', readyz),
        probeRow('GET /startupz', startupz),
      ]),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'button small', onClick: renderProbes }, 'Check again'),
      ),
    )
  }

  const [info, drainProbe] = await Promise.all([
    call<SystemInfo>('Read system info', 'GET', '/v1/system/info', { auth: false }),
    call('Is drain available?', 'GET', DRAIN_PATH),
    renderProbes(),
  ])
  if (!context.isCurrent()) return
  replace(
    infoSlot,
    info.ok && info.data
      ? keyValueTable([
          ['Version', h('span', { class: 'mono' }, info.data.version)],
          ['Initialised', info.data.initialized ? 'yes' : 'no'],
          ['Storage', info.data.storage ?? 'unknown'],
          ['TLS', info.data.tlsEnabled ? 'enabled' : 'disabled (plaintext)'],
          ['Licences', licenseSummary(info.data.license)],
        ])
      : errorNotice(info.error!, 'Could not read the system information'),
  )

  if (drainProbe.status === 404) {
    replace(drainSlot, notice('info', `Drain is not available on this server (${DRAIN_PATH} answered 404).`))
    return
  }
  if (me.role !== 'ADMIN') {
    replace(drainSlot, notice('info', 'Only administrators can drain the server.'))
    return
  }
  const reasonId = 'drain-reason'
  const timeoutId = 'drain-timeout'
  const result = h('div', { 'aria-live': 'polite' })
  const drainButton = h(
    'button',
    {
      type: 'button',
      class: 'button danger',
      onClick: async () => {
        const reason = input({
          id: reasonId,
          placeholder: 'e.g. upgrade to the next version',
          maxlength: MAX_DRAIN_REASON_LENGTH,
        })
        const timeout = input({
          id: timeoutId,
          type: 'number',
          min: 0,
          max: MAX_DRAIN_TIMEOUT_SEC,
          step: '1',
          inputmode: 'numeric',
          placeholder: `${DEFAULT_DRAIN_TIMEOUT_SEC} (server default)`,
        })
        const wait = h('input', { type: 'checkbox', id: 'drain-wait' })
        const sure = await confirmDialog({
          title: 'Drain this server?',
          message: [
            h(
              'p',
              null,
              'The server stops being ready and refuses new API requests; requests in flight may finish. ' +
                'Load balancers and probes will take it out of service.',
            ),
            h(
              'p',
              null,
              h('strong', null, 'It does not come back by itself: restart it to serve again. '),
              'This console will stop working against it too.',
            ),
          ],
          body: h(
            'div',
            { class: 'form' },
            h('div', { class: 'field' }, h('label', { for: reasonId }, 'Reason (recorded in the server log)'), reason),
            h(
              'div',
              { class: 'field' },
              h('label', { for: timeoutId }, 'How long to wait for in-flight work, in seconds (optional, 0-3600)'),
              timeout,
            ),
            h(
              'div',
              { class: 'choice' },
              wait,
              h('label', { for: 'drain-wait' }, 'Wait until in-flight work has finished'),
            ),
          ),
          confirmLabel: 'Drain server',
          danger: true,
          focus: reason,
        })
        if (!sure) return
        const body: Record<string, unknown> = {}
        if (reason.value.trim()) body.reason = reason.value.trim()
        if (timeout.value.trim()) body.timeoutSec = Number(timeout.value)
        if (wait.checked) body.waitForQuiesce = true
        setBusy(drainButton, true, 'Draining…')
        const drained = await call<DrainResult>('Drain server', 'POST', DRAIN_PATH, { body })
        setBusy(drainButton, false, 'Drain server…')
        if (!drained.ok || !drained.data) {
          replace(result, errorNotice(drained.error!, 'Drain failed'))
          return
        }
        replace(
          result,
          notice(
            'warning',
            h('strong', null, `State: ${drained.data.state}`),
            drained.data.quiesced ? ' · quiesced' : ' · not quiesced yet',
            ` · ${drained.data.message}`,
          ),
        )
        announce(`Server state ${drained.data.state}`)
        await renderProbes()
      },
    },
    'Drain server…',
  )
  replace(
    drainSlot,
    h(
      'p',
      null,
      'Draining takes this server out of service: readiness and gRPC health turn false first, background work stops, ' +
        'in-flight requests finish (up to a timeout).',
    ),
    h('div', { class: 'actions' }, drainButton),
    result,
  )
}
