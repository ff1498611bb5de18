#!/usr/bin/env bash
# Remote headers against a real web server: Debian's nginx, started here on loopback ports with
# a config of this script's own, serving the corpus, SmolLM2 and a 100 GB sparse file holding
# the Llama 3 vocabulary header. Requests and bytes are counted from nginx's access log.
#   - `gguf dump URL` (text and JSON) equals `gguf dump FILE`; `gguf check URL` accepts;
#   - the sparse file: at most 4 requests and at most header + 1 MiB fetched;
#   - a server that ignores Range (max_ranges 0) gives the error, exit 2;
#   - a 503 is retried once (two attempts), then exit 2; a refused connection gives exit 2 with the URL;
#   - hf:// resolves under HF_ENDPOINT with HF_TOKEN sent; a shard's URL shows its whole set;
#     gguf diff takes URLs; `gguf template URL` equals `gguf template FILE`;
#   - `gguf map URL` (text, JSON and the --html page) equals `gguf map FILE` for a corpus file and the sparse
#     file (bounded as above), and a shard's URL maps its whole set as the local shard does.
#   - `gguf fit URL` (text, JSON, hf://, a remote shard) equals `gguf fit FILE`, fetching at most
#     the header + 1 MiB (nginx's log), as `--verbose` reports.
# Without nginx the checks are skipped with a note, except in CI (CI=true), where that fails.
set -euo pipefail
cd "$(dirname "$0")/.."

nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
if [[ ! -x "$nginx_bin" ]]; then
    if [[ "${CI:-}" == true ]]; then
        echo "check-remote: nginx is missing (.ci/run installs it)" >&2
        exit 1
    fi
    echo "note: nginx not installed; skipping the remote-header checks" >&2
    exit 0
fi
cargo build --quiet --bin gguf
gguf="$PWD/target/debug/gguf"
model="${GGUF_SMOLLM2:-$(bash scripts/fetch-models.sh)}"
llama3=tests/corpus/ggml-vocab-llama-bpe.gguf

work="$(mktemp -d)"
cleanup() {
    [[ -f "$work/nginx.pid" ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/root/owner/repo/resolve/main" "$work/logs"
for f in tests/corpus/*.gguf; do ln -s "$PWD/$f" "$work/root/"; done
ln -s "$(realpath "$model")" "$work/root/smollm2.gguf"
ln -s "$(realpath "$model")" "$work/root/owner/repo/resolve/main/model.gguf"
cp "$llama3" "$work/root/sparse.gguf"
truncate -s 100G "$work/root/sparse.gguf"

fail() { echo "check-remote: FAIL: $*" >&2; exit 1; }

# Two servers: one honours ranges, one ignores them. Ports are picked until nginx starts.
started=false
for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 20000)); ignoring=$((port + 1)); refused=$((port + 2))
    cat >"$work/nginx.conf" <<CONF
$( [[ "$(id -u)" == 0 ]] && echo "user root;" )
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log;
events {}
http {
    log_format counted '\$server_port \$status \$body_bytes_sent "\$http_range" "\$http_authorization" \$uri';
    access_log $work/logs/access.log counted;
    client_body_temp_path $work/tmp-body;
    proxy_temp_path $work/tmp-proxy;
    fastcgi_temp_path $work/tmp-fastcgi;
    uwsgi_temp_path $work/tmp-uwsgi;
    scgi_temp_path $work/tmp-scgi;
    default_type application/octet-stream;
    server { listen 127.0.0.1:$port; root $work/root; location = /unavailable.gguf { return 503; } }
    server { listen 127.0.0.1:$ignoring; root $work/root; max_ranges 0; }
}
CONF
    if "$nginx_bin" -p "$work" -c "$work/nginx.conf" 2>"$work/logs/start.log"; then
        started=true
        break
    fi
done
$started || { cat "$work/logs/start.log" >&2; fail "nginx did not start"; }
base="http://127.0.0.1:$port"

# Remote dumps equal local dumps.
n=0
for f in tests/corpus/*.gguf "$model"; do
    name="$(basename "$f")"
    [[ "$f" == "$model" ]] && name=smollm2.gguf
    for format in "" --json; do
        "$gguf" dump $format "$f" >"$work/local" 2>/dev/null || true
        "$gguf" dump $format "$base/$name" >"$work/remote" 2>"$work/err" || true
        cmp -s "$work/local" "$work/remote" || { cat "$work/err" >&2; fail "gguf dump $format $base/$name differs from the local dump"; }
    done
    n=$((n + 1))
done
"$gguf" check "$base/smollm2.gguf" >/dev/null || fail "gguf check $base/smollm2.gguf"
echo "check-remote: $n files: remote text and JSON dumps equal the local ones" >&2

# The 100 GB sparse file: few requests, little data.
: >"$work/logs/access.log"
"$gguf" dump --verbose "$base/sparse.gguf" >"$work/remote" 2>"$work/err" || { cat "$work/err" >&2; fail "sparse dump"; }
"$gguf" dump "$work/root/sparse.gguf" >"$work/local"
cmp -s "$work/local" "$work/remote" || fail "sparse: remote dump differs from the local one"
sleep 0.2 # nginx writes the log line when the response is done
requests=$(grep -c ' /sparse.gguf$' "$work/logs/access.log")
bytes=$(awk '$NF == "/sparse.gguf" { s += $3 } END { print s + 0 }' "$work/logs/access.log")
header=$(stat -c %s "$llama3")
echo "check-remote: sparse 100 GB file: $requests requests, $bytes bytes (header $header bytes); gguf says: $(grep -o '[0-9]* requests, [0-9]* bytes fetched' "$work/err")" >&2
((requests <= 4)) || fail "sparse: $requests requests (at most 4)"
((bytes <= header + 1048576)) || fail "sparse: $bytes bytes fetched (at most $header + 1 MiB)"
grep -q "$requests requests, $bytes bytes fetched" "$work/err" || fail "--verbose disagrees with nginx's log"

# gguf template over HTTP (list, JSON, a render) equals the local one.
phi3=tests/corpus/ggml-vocab-phi-3.gguf
echo '[{"role": "user", "content": "Hi"}]' >"$work/messages.json"
for args in "" "--json" "--render --messages $work/messages.json --add-generation-prompt"; do
    "$gguf" template $args "$phi3" >"$work/local"
    "$gguf" template $args "$base/$(basename "$phi3")" >"$work/remote" 2>"$work/err" || { cat "$work/err" >&2; fail "gguf template $args URL"; }
    cmp -s "$work/local" "$work/remote" || fail "gguf template $args of a URL differs from the local file's"
done

# gguf map over HTTP equals the local map; the sparse file's stays within the same bounds.
for format in "" --json; do
    "$gguf" map $format "$llama3" >"$work/local"
    "$gguf" map $format "$base/$(basename "$llama3")" >"$work/remote" 2>"$work/err" || { cat "$work/err" >&2; fail "gguf map $format URL"; }
    cmp -s "$work/local" "$work/remote" || fail "gguf map $format $base/$(basename "$llama3") differs from the local map"
done
"$gguf" map --html "$work/local.html" "$llama3"
"$gguf" map --html "$work/remote.html" "$base/$(basename "$llama3")"
cmp -s "$work/local.html" "$work/remote.html" || fail "gguf map --html of a URL differs from the local page"
: >"$work/logs/access.log"
"$gguf" map --json --verbose "$base/sparse.gguf" >"$work/remote" 2>"$work/err" || { cat "$work/err" >&2; fail "sparse map"; }
"$gguf" map --json "$work/root/sparse.gguf" >"$work/local"
cmp -s "$work/local" "$work/remote" || fail "sparse: remote map differs from the local one"
sleep 0.2
requests=$(grep -c ' /sparse.gguf$' "$work/logs/access.log")
bytes=$(awk '$NF == "/sparse.gguf" { s += $3 } END { print s + 0 }' "$work/logs/access.log")
echo "check-remote: gguf map of the sparse file: $requests requests, $bytes bytes" >&2
((requests <= 4)) || fail "sparse map: $requests requests (at most 4)"
((bytes <= header + 1048576)) || fail "sparse map: $bytes bytes fetched (at most $header + 1 MiB)"
grep -q "$requests requests, $bytes bytes fetched" "$work/err" || fail "map --verbose disagrees with nginx's log"

# A server that ignores Range: refused, exit 2, without downloading.
set +e
"$gguf" dump "http://127.0.0.1:$ignoring/sparse.gguf" >/dev/null 2>"$work/err"; status=$?
set -e
((status == 2)) || fail "ignoring server: exit $status (want 2)"
grep -q "ignores range requests" "$work/err" || fail "ignoring server: $(cat "$work/err")"

# A transient failure (503) is retried, then reported: exit 2.
: >"$work/logs/access.log"
set +e
"$gguf" dump "$base/unavailable.gguf" >/dev/null 2>"$work/err"; status=$?
set -e
sleep 0.2
((status == 2)) || fail "503: exit $status (want 2)"
grep -q "after 2 attempts" "$work/err" || fail "503: $(cat "$work/err")"
tries=$(grep -c ' 503 .* /unavailable.gguf$' "$work/logs/access.log")
((tries == 2)) || fail "503: $tries requests (want 2)"

# Connection refused: exit 2 naming the URL.
set +e
"$gguf" dump "http://127.0.0.1:$refused/x.gguf" >/dev/null 2>"$work/err"; status=$?
set -e
((status == 2)) || fail "refused: exit $status (want 2)"
grep -q "http://127.0.0.1:$refused/x.gguf" "$work/err" || fail "refused: no URL in $(cat "$work/err")"

# hf:// under HF_ENDPOINT, with the token.
HF_ENDPOINT="$base" HF_TOKEN=test-token "$gguf" dump hf://owner/repo/model.gguf >"$work/remote"
"$gguf" dump "$model" >"$work/local"
cmp -s "$work/local" "$work/remote" || fail "hf:// dump differs"
grep -q '"Bearer test-token" /owner/repo/resolve/main/model.gguf$' "$work/logs/access.log" || fail "HF_TOKEN not sent"
echo "check-remote: ranges refused, connection refused and hf:// behave" >&2

# A shard set over HTTP: any shard's URL shows the whole model.
"$gguf" split --split-max-tensors 100 "$model" "$work/root/smol" >/dev/null
# A shard's URL: the templates of the first shard.
"$gguf" template --name default "$work/root/smol-00001-of-00003.gguf" >"$work/local"
"$gguf" template --name default "$base/smol-00002-of-00003.gguf" >"$work/remote" 2>"$work/err"
grep -q "reading the templates of the first" "$work/err" || fail "remote shard template: $(cat "$work/err")"
cmp -s "$work/local" "$work/remote" || fail "gguf template of a shard's URL differs from the first shard's"
"$gguf" dump --summary "$base/smol-00002-of-00003.gguf" >"$work/remote" 2>/dev/null
"$gguf" dump --summary "$model" >"$work/local"
cmp -s "$work/local" "$work/remote" || fail "remote shard set: the summary differs from the model's"
"$gguf" dump "$base/smol-00003-of-00003.gguf" 2>/dev/null | grep -q '^272 tensors:' || fail "remote shard set: not all tensors shown"
# The map of a shard's URL is the map of the local shard's set, shard by shard.
for format in "" --json; do
    "$gguf" map $format "$work/root/smol-00002-of-00003.gguf" 2>/dev/null | sed "s|$work/root/||" >"$work/local"
    "$gguf" map $format "$base/smol-00002-of-00003.gguf" 2>"$work/err" | sed "s|$base/||" >"$work/remote"
    grep -q "mapping the whole set" "$work/err" || fail "remote shard map: $(cat "$work/err")"
    cmp -s "$work/local" "$work/remote" || { diff "$work/local" "$work/remote" | head -5 >&2; fail "remote shard map $format differs from the local set's"; }
done
"$gguf" map "$base/smol-00002-of-00003.gguf" 2>/dev/null | grep -c '^== .*smol-0000[123]-of-00003.gguf (shard [123] of 3, ' | grep -qx 3 || fail "remote shard map: not three shard headings"
echo "check-remote: a remote shard shows its whole set (dump and map)" >&2

# gguf diff of a URL and a file: equal for the same file, the split keys for a shard.
"$gguf" diff "$base/smollm2.gguf" "$model" >"$work/remote" || fail "gguf diff URL FILE: $(cat "$work/remote")"
set +e
"$gguf" diff "$base/smol-00001-of-00003.gguf" "$model" >"$work/remote" 2>/dev/null; status=$?
set -e
((status == 1)) || fail "gguf diff shard-URL FILE: exit $status (want 1)"
grep -q '^key removed    split.count: uint16 3$' "$work/remote" || fail "gguf diff shard-URL FILE: $(head -3 "$work/remote")"
echo "check-remote: gguf diff of URLs" >&2

# gguf fit of a URL: the local file's figures (text and JSON, a sweep of context sizes, a
# shard set), fetched from the header alone (counted in nginx's log against the data start).
data_start=$("$gguf" dump --json "$model" | grep -o '"tensor_data_offset": *[0-9]*' | grep -o '[0-9]*$')
for format in "" --json; do
    "$gguf" fit $format --ctx-size 512,4096,0 "$model" >"$work/local"
    : >"$work/logs/access.log"
    "$gguf" fit $format --verbose --ctx-size 512,4096,0 "$base/smollm2.gguf" >"$work/remote" 2>"$work/err" || { cat "$work/err" >&2; fail "gguf fit $format URL"; }
    cmp -s "$work/local" "$work/remote" || { diff "$work/local" "$work/remote" | head -5 >&2; fail "gguf fit $format $base/smollm2.gguf differs from the local file's"; }
    sleep 0.2
    requests=$(grep -c ' /smollm2.gguf$' "$work/logs/access.log")
    bytes=$(awk '$NF == "/smollm2.gguf" { s += $3 } END { print s + 0 }' "$work/logs/access.log")
    ((bytes <= data_start + 1048576)) || fail "gguf fit URL: $bytes bytes fetched (header $data_start + 1 MiB at most)"
    grep -q "$requests requests, $bytes bytes fetched" "$work/err" || fail "fit --verbose disagrees with nginx's log: $(cat "$work/err")"
done
: >"$work/logs/access.log"
HF_ENDPOINT="$base" "$gguf" fit --json --ctx-size 512,4096,0 hf://owner/repo/model.gguf >"$work/remote"
cmp -s "$work/local" "$work/remote" || fail "gguf fit hf:// differs from the local file's"
sleep 0.2
hf_bytes=$(awk '$NF == "/owner/repo/resolve/main/model.gguf" { s += $3 } END { print s + 0 }' "$work/logs/access.log")
((hf_bytes <= data_start + 1048576)) || fail "gguf fit hf://: $hf_bytes bytes fetched"
"$gguf" fit "$work/root/smol-00001-of-00003.gguf" >"$work/local"
"$gguf" fit "$base/smol-00001-of-00003.gguf" >"$work/remote" 2>/dev/null || fail "gguf fit of a remote shard"
cmp -s "$work/local" "$work/remote" || fail "gguf fit of a remote shard differs from the local set's"
echo "check-remote: gguf fit of a URL (and hf://, a shard set) equals the local file's: $requests requests, $bytes bytes of $(stat -L -c %s "$model") (data starts at $data_start)" >&2
