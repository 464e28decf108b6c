import * as v from 'valibot'
import {
  boundedText,
  epochMillisSchema,
  labelsSchema,
  labelUpdateFields,
  oneLabelUpdateOnly,
  pageFields,
  textSchema,
  uuidSchema,
} from './common.js'
import { MAX_USER_DISPLAY_NAME_LENGTH, MAX_USERNAME_LENGTH } from './limits.js'

const apiKeyStatus = v.picklist(['ACTIVE', 'INACTIVE'], 'must be ACTIVE or INACTIVE')

export const createApiKeySchema = v.strictObject({
  labels: v.optional(labelsSchema),
  expiresAt: v.optional(epochMillisSchema),
  ownerId: v.optional(uuidSchema),
  apiKeyId: v.optional(uuidSchema),
})

export const updateApiKeySchema = v.pipe(
  v.strictObject({
    status: v.optional(apiKeyStatus),
    ...labelUpdateFields,
  }),
  oneLabelUpdateOnly(),
)

export const listApiKeysSchema = v.strictObject({
  ...pageFields,
  ownerId: v.optional(uuidSchema),
  status: v.optional(apiKeyStatus),
  labelFilter: v.optional(labelsSchema),
})

const USERNAME_PATTERN = new RegExp(`^[A-Za-z0-9._@-]{1,${MAX_USERNAME_LENGTH}}$`)

export const createUserSchema = v.strictObject({
  userId: v.optional(uuidSchema),
  username: v.pipe(
    textSchema(),
    v.regex(USERNAME_PATTERN, `must be 1-${MAX_USERNAME_LENGTH} characters of letters, digits, ".", "_", "@" or "-"`),
  ),
  displayName: v.optional(boundedText(MAX_USER_DISPLAY_NAME_LENGTH)),
  role: v.optional(v.picklist(['ADMIN', 'USER'], 'must be ADMIN or USER'), 'USER'),
})

export const listUsersSchema = v.strictObject(pageFields)

export const idSchema = uuidSchema
