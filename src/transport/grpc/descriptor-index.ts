import { fromBinary } from '@bufbuild/protobuf'
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire'
import {
  type DescriptorProto,
  type EnumDescriptorProto,
  type FieldDescriptorProto,
  FileDescriptorProtoSchema,
} from '@bufbuild/protobuf/wkt'

/** FileDescriptorSet.file is field 1. */
const FILE_FIELD_NUMBER = 1

/** One file of the build's descriptor set: its exact encoded bytes and the files it imports. */
export interface DescribedFile {
  readonly name: string
  readonly encoded: Uint8Array
  readonly dependencies: readonly string[]
}

/**
 * What server reflection looks up, over the descriptor set `buf build` wrote. Each file is
 * kept as the bytes buf encoded, never decoded and re-encoded, so a client sees exactly the
 * build's descriptors: absolute type names, proto3 optional flags, imports and comments.
 */
export interface DescriptorIndex {
  readonly files: ReadonlyMap<string, DescribedFile>
  /** Fully qualified name (no leading dot) of a message, enum, service, method, field or enum value → its file. */
  readonly fileBySymbol: ReadonlyMap<string, string>
  /** Extended message's full name → extension field number → the file that declares it. */
  readonly extensionFiles: ReadonlyMap<string, ReadonlyMap<number, string>>
  /** Names of every message type, for extension-number queries. */
  readonly messageTypes: ReadonlySet<string>
}

/** Each FileDescriptorProto of a FileDescriptorSet, as the bytes it was encoded with. */
function encodedFiles(descriptorSet: Uint8Array): Uint8Array[] {
  const reader = new BinaryReader(descriptorSet)
  const files: Uint8Array[] = []
  while (reader.pos < reader.len) {
    const [fieldNumber, wireType] = reader.tag()
    if (fieldNumber === FILE_FIELD_NUMBER && wireType === WireType.LengthDelimited) files.push(reader.bytes())
    else reader.skip(wireType, fieldNumber)
  }
  return files
}

function qualified(scope: string, name: string): string {
  return scope ? `${scope}.${name}` : name
}

export function indexDescriptorSet(descriptorSet: Uint8Array): DescriptorIndex {
  const files = new Map<string, DescribedFile>()
  const fileBySymbol = new Map<string, string>()
  const extensionFiles = new Map<string, Map<number, string>>()
  const messageTypes = new Set<string>()

  for (const encoded of encodedFiles(descriptorSet)) {
    const file = fromBinary(FileDescriptorProtoSchema, encoded)
    files.set(file.name, { name: file.name, encoded, dependencies: file.dependency })
    const declare = (symbol: string) => fileBySymbol.set(symbol, file.name)
    const declareExtensions = (extensions: readonly FieldDescriptorProto[], scope: string) => {
      for (const extension of extensions) {
        declare(qualified(scope, extension.name))
        const extendee = extension.extendee.replace(/^\./, '')
        const numbers = extensionFiles.get(extendee) ?? new Map<number, string>()
        numbers.set(extension.number, file.name)
        extensionFiles.set(extendee, numbers)
      }
    }
    const declareEnum = (enumType: EnumDescriptorProto, scope: string) => {
      const name = qualified(scope, enumType.name)
      declare(name)
      // Enum values are scoped beside their enum, as in .proto text (pkg.VALUE, not pkg.Enum.VALUE).
      for (const value of enumType.value) declare(qualified(scope, value.name))
    }
    const declareMessage = (message: DescriptorProto, scope: string) => {
      const name = qualified(scope, message.name)
      declare(name)
      messageTypes.add(name)
      for (const field of message.field) declare(qualified(name, field.name))
      for (const oneof of message.oneofDecl) declare(qualified(name, oneof.name))
      for (const nested of message.nestedType) declareMessage(nested, name)
      for (const nested of message.enumType) declareEnum(nested, name)
      declareExtensions(message.extension, name)
    }

    for (const message of file.messageType) declareMessage(message, file.package)
    for (const enumType of file.enumType) declareEnum(enumType, file.package)
    declareExtensions(file.extension, file.package)
    for (const service of file.service) {
      const name = qualified(file.package, service.name)
      declare(name)
      for (const method of service.method) declare(qualified(name, method.name))
    }
  }
  return { files, fileBySymbol, extensionFiles, messageTypes }
}

/**
 * A file and every file it imports, directly or not, each once, the asked-for file first.
 * Reflection answers with all of them so a client can build the file without asking again.
 */
export function withDependencies(index: DescriptorIndex, fileName: string): DescribedFile[] {
  const ordered: DescribedFile[] = []
  const seen = new Set<string>()
  const visit = (name: string) => {
    if (seen.has(name)) return
    seen.add(name)
    const file = index.files.get(name)
    if (!file) return
    ordered.push(file)
    for (const dependency of file.dependencies) visit(dependency)
  }
  visit(fileName)
  return ordered
}
