import fs from 'node:fs'
import path from 'node:path'

export interface LicenseSummary {
  directory: string
  present: boolean
  files: string[]
  productLicense: string
  thirdPartyPackages: number
}

/** The build writes this index of bundled packages beside the notices. */
export const THIRD_PARTY_INDEX = 'third-party.json'

/** Reads the licence directory once at start; what it finds is reported by /v1/system/info. */
export function readLicenseSummary(directory: string): LicenseSummary {
  let files: string[]
  try {
    files = fs
      .readdirSync(directory)
      .filter((name) => fs.statSync(path.join(directory, name)).isFile())
      .sort()
  } catch {
    return { directory, present: false, files: [], productLicense: '', thirdPartyPackages: 0 }
  }
  let productLicense = ''
  const licenseFile = files.find((name) => /^LICENSE/i.test(name))
  if (licenseFile) {
    productLicense =
      fs
        .readFileSync(path.join(directory, licenseFile), 'utf8')
        .split('\n')
        .find((line) => line.trim())
        ?.trim() ?? ''
  }
  let thirdPartyPackages = 0
  if (files.includes(THIRD_PARTY_INDEX)) {
    try {
      const index = JSON.parse(fs.readFileSync(path.join(directory, THIRD_PARTY_INDEX), 'utf8')) as unknown[]
      thirdPartyPackages = Array.isArray(index) ? index.length : 0
    } catch {
      thirdPartyPackages = 0
    }
  }
  return { directory, present: files.length > 0, files, productLicense, thirdPartyPackages }
}
