// memsvc upgrade --from <file|url>: replace this executable (or, from a release bundle,
// the executable and its licences) after a SHA-256 check.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Argv } from 'yargs'
import { isStandalone, VERSION } from '../../runtime/environment.js'
import { type Args, plainHandler, withClientOptions } from '../command.js'
import { badInput, CliError, EXIT_FAILED } from '../exit-codes.js'
import { note, print } from '../output.js'
import { swapInBundle, unpackBundle } from '../upgrade/bundle.js'
import { fallbackInstallDir, flush, install, isOnPath, runVersion, stage } from '../upgrade/install.js'
import { describeSource, download, expectedSha256, isBundle, parseSource, type Source } from '../upgrade/source.js'

const UPGRADE_OPTIONS = {
  from: {
    type: 'string',
    describe: 'The new executable or release bundle (.tar.gz): a file path or an http(s) URL',
    demandOption: true,
    requiresArg: true,
  },
  sha256: {
    type: 'string',
    describe: 'Its expected SHA-256 (default: read from <from>.sha256, or SHA256SUMS for a bundle, beside it)',
    requiresArg: true,
  },
  check: {
    type: 'boolean',
    describe: 'Only print the current and the candidate version (the candidate is verified, then removed)',
  },
  'dry-run': { type: 'boolean', describe: 'Download, verify and test-run everything, but replace nothing' },
} as const

type Output = 'json' | 'table'

/** A release bundle: verified, unpacked and test-run in a temp directory, then swapped in. */
async function upgradeFromBundle(
  source: Source,
  expected: { sha256: string; from: string },
  output: Output,
  mode: { check: boolean; dryRun: boolean },
): Promise<void> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-upgrade-'))
  try {
    const tarball = path.join(scratch, 'bundle.tar.gz')
    fs.closeSync(fs.openSync(tarball, 'wx', 0o600))
    const { sha256, bytes } = await download(source, tarball)
    if (sha256 !== expected.sha256) {
      throw new CliError(
        `checksum mismatch for ${describeSource(source)}: expected ${expected.sha256} ` +
          `(from ${expected.from}), got ${sha256}; nothing was changed`,
        EXIT_FAILED,
      )
    }
    const unpacked = await unpackBundle(tarball)
    try {
      const summary = {
        current: VERSION,
        candidate: unpacked.version,
        sha256,
        bytes,
        source: describeSource(source),
        executable: process.execPath,
        bundle: true,
      }
      if (mode.check || mode.dryRun) {
        print(output, {
          json: mode.check
            ? { ...summary, upgradeAvailable: unpacked.version !== VERSION }
            : { ...summary, dryRun: true, replaced: false },
          text: () =>
            mode.check
              ? `current    ${VERSION}  (${process.execPath})\n` +
                `candidate  ${unpacked.version}  (${describeSource(source)}, SHA-256 verified)\n`
              : `verified ${unpacked.version} (SHA-256 ${sha256}) with its licences; ` +
                `a real run would replace ${process.execPath}. Nothing was changed.\n`,
        })
        return
      }
      const swapped = swapInBundle(process.execPath, unpacked)
      const running = await runVersion(swapped.target)
      print(output, {
        json: {
          ...summary,
          candidate: running,
          replaced: true,
          target: swapped.target,
          layout: swapped.layout,
          rollback: swapped.rollback,
        },
        text: () => `upgraded ${swapped.target}: ${VERSION} -> ${running} (executable and licences)\n`,
      })
      note(`previous version kept; to go back: ${swapped.rollback}`)
      if (swapped.layout === 'release') note('a running service keeps the old version until: systemctl restart memsvc')
    } finally {
      unpacked.remove()
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

const upgrade = plainHandler(async (argv: Args) => {
  const output = argv.output === 'json' ? 'json' : 'table'
  if (!isStandalone)
    throw badInput('upgrade replaces the standalone memsvc executable; this one runs from source under node')
  const source = parseSource(String(argv.from))
  const check = argv.check === true
  const dryRun = argv.dryRun === true
  const current = process.execPath
  const name = path.basename(current)

  const expected = await expectedSha256(source, argv.sha256 === undefined ? undefined : String(argv.sha256))
  if (isBundle(source)) {
    await upgradeFromBundle(source, expected, output, { check, dryRun })
    return
  }
  const staged = stage(path.dirname(current), name, { sideEffectFree: check || dryRun })
  const target = path.join(staged.dir, name)
  let installed = false
  try {
    const { sha256, bytes } = await download(source, staged.file)
    if (sha256 !== expected.sha256) {
      throw new CliError(
        `checksum mismatch for ${describeSource(source)}: expected ${expected.sha256} ` +
          `(from ${expected.from}), got ${sha256}; nothing was changed`,
        EXIT_FAILED,
      )
    }
    flush(staged.file)
    const candidate = await runVersion(staged.file)
    const summary = {
      current: VERSION,
      candidate,
      sha256,
      bytes,
      source: describeSource(source),
      executable: current,
      target,
    }

    if (check) {
      print(output, {
        json: { ...summary, upgradeAvailable: candidate !== VERSION },
        text: () =>
          `current    ${VERSION}  (${current})\ncandidate  ${candidate}  (${describeSource(source)}, SHA-256 verified)\n`,
      })
      return
    }
    if (dryRun) {
      print(output, {
        json: { ...summary, dryRun: true, replaced: false },
        text: () =>
          `verified ${candidate} (SHA-256 ${sha256}); a real run would replace ${target}. Nothing was changed.\n`,
      })
      if (staged.fellBackBecause)
        note(`note: ${staged.fellBackBecause}; a real run would install into ${fallbackInstallDir()}`)
      return
    }

    const running = await install(staged, target)
    installed = true
    const fallback = staged.fellBackBecause
    print(output, {
      json: {
        ...summary,
        candidate: running,
        replaced: true,
        fallback: fallback !== undefined,
        ...(fallback ? { reason: fallback } : {}),
      },
      text: () => (fallback ? `installed ${running} as ${target}\n` : `upgraded ${target}: ${VERSION} -> ${running}\n`),
    })
    if (fallback) {
      note(`note: ${fallback}, so the new executable went into ${staged.dir} instead; ${current} is unchanged.`)
      note(
        isOnPath(staged.dir)
          ? `${staged.dir} is on your PATH; make sure it comes before ${path.dirname(current)}.`
          : `${staged.dir} must be on your PATH (before ${path.dirname(current)}): ` +
              `add  export PATH="${staged.dir}:$PATH"  to your shell profile.`,
      )
    }
  } finally {
    if (!installed) staged.remove()
  }
})

export function upgradeCommand(yargs: Argv): Argv {
  return yargs.command(
    'upgrade',
    'Replace this executable with a new one from a file or URL, after checking its SHA-256',
    (command: Argv) =>
      withClientOptions(command, {
        connects: false,
        epilog: [
          'The new file is written beside this executable, must match the SHA-256 and must run',
          '"--version"; then it atomically replaces the old one (kept as <name>.old until the new one',
          'ran). If this directory is not writable, it goes into ~/.local/bin, which must be on PATH.',
          'A release bundle (.tar.gz, checked against SHA256SUMS beside it) replaces the licences too;',
          'in a "system install" layout it becomes a new release and the previous one stays for rollback.',
        ].join('\n'),
      })
        .options(UPGRADE_OPTIONS)
        .example('$0 upgrade --from https://example.com/memsvc', 'checksum from <url>.sha256')
        .example('$0 upgrade --from ./memsvc --sha256 9f86d0…', 'a local file with a known checksum')
        .example('$0 upgrade --from ./memsvc-0.2.0-linux-x64.tar.gz', 'a release bundle; checksum from SHA256SUMS')
        .example('$0 upgrade --from ./memsvc --check', 'which version would I get?')
        .example('$0 upgrade --from ./memsvc --dry-run', 'verify everything, change nothing'),
    upgrade as (argv: unknown) => Promise<void>,
  )
}
