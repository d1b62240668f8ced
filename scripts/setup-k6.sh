#!/usr/bin/env bash
# Make the real k6 load-testing binary available without prebuilt downloads.
#
# - If `k6` is on PATH and `k6 version` works, use it.
# - Otherwise build a pinned k6 release from source through the Go module
#   proxy (`go install go.k6.io/k6@<version>`) into a cache directory outside
#   the repository, and reuse that binary on later runs.
#
# Single flight: a build holds a lock (flock) on a file in the cache directory, so callers that
# come meanwhile (test files, bench runs, another clone's `npm test`) wait for it and then use its
# binary instead of starting builds of their own.
#
# The absolute path of the k6 binary is printed as the LAST line of stdout;
# all progress goes to stderr, so callers can do:
#   K6=$(bash scripts/setup-k6.sh | tail -1)
#
# Environment:
#   FLEETSIM_CACHE   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/fleetsim)
#   FLEETSIM_K6_VERSION  override the pinned version (default below)
set -euo pipefail

K6_VERSION="${FLEETSIM_K6_VERSION:-v1.8.1}"

log() { printf 'setup-k6: %s\n' "$*" >&2; }

# 1. A working k6 already on PATH wins.
if existing="$(command -v k6 2>/dev/null)" && "$existing" version >/dev/null 2>&1; then
  log "using k6 from PATH: $("$existing" version 2>/dev/null | head -1)"
  printf '%s\n' "$existing"
  exit 0
fi

cache_root="${FLEETSIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetsim}"
bin_dir="$cache_root/k6/$K6_VERSION/bin"
k6_bin="$bin_dir/k6"

cached() { [[ -x "$k6_bin" ]] && "$k6_bin" version >/dev/null 2>&1; }

# 2. Reuse a previously built binary.
if cached; then
  log "using cached k6 $K6_VERSION"
  printf '%s\n' "$k6_bin"
  exit 0
fi

# 3. Build it from source via the Go module proxy, one build at a time: wait for a build under
#    way, then use what it built. The lock goes with its holder however that ends.
mkdir -p "$bin_dir"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache_root/k6/$K6_VERSION.lock"
  if ! flock -n 9; then
    log "another setup-k6 is building k6 $K6_VERSION; waiting for it"
    flock 9
  fi
  if cached; then
    log "using k6 $K6_VERSION, built meanwhile"
    printf '%s\n' "$k6_bin"
    exit 0
  fi
else
  log "no flock command (util-linux): building without a lock"
fi

if ! command -v go >/dev/null 2>&1; then
  export PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  log "error: 'go' not found (looked on PATH and in /usr/local/go/bin); install Go >= 1.25, or put k6 on the PATH"
  exit 1
fi

# A stale/broken file here makes `go install` fail with "already exists and is
# not an object file", so remove it first.
rm -f "$k6_bin"
log "building k6 $K6_VERSION with $(go version) into $bin_dir (this can take several minutes)"
start=$(date +%s)
# Run outside any module (the repo has no go.mod, but be explicit) so the
# build never touches project files; CGO is not needed by k6.
(
  cd "$bin_dir"
  GOBIN="$bin_dir" GOFLAGS="${GOFLAGS:-} -trimpath" CGO_ENABLED=0 \
    go install "go.k6.io/k6@$K6_VERSION"
) >&2
end=$(date +%s)

if ! "$k6_bin" version >/dev/null 2>&1; then
  log "error: build finished but $k6_bin does not run"
  exit 1
fi
log "built $("$k6_bin" version 2>/dev/null | head -1) in $((end - start))s"
printf '%s\n' "$k6_bin"
