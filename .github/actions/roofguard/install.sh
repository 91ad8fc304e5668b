#!/usr/bin/env bash
# The Action's install step: roofguard with the extras its inputs need, into the runner's
# Python or a virtual environment in the runner's tool cache (self-hosted runners, which
# persist between jobs, and GitHub-hosted ones with `cache`, where actions/cache carries the
# venv from job to job). Sets the step output `bin`, the roofguard command later steps run; the
# job's PATH is left alone, so the user's own steps keep their Python.
#
# `install.sh plan` installs nothing: it sets the outputs `cache` (whether actions/cache should
# keep the venv), `venv` and `key` (roofguard's version, a hash of its source, the extras, the
# OS and the exact Python), which the cache step before the install needs.
#
# Inputs come from the environment (action.yml `env:`): INSTALL, SPEC, EXTRAS, ISOLATE, CACHE,
# MODE, REPORTS, RERUN_REPORTS, ARTIFACT, DATABASE_URL, SERVER_URL, ACTION_PATH, RUNNER_KIND,
# TOOL_CACHE; and, checked here only, FAILURE_POLICY, CHECK, POST, VERIFY_HEAD.
set -euo pipefail
phase="${1:-install}"

fail() {
  echo "::error title=roofguard::$1"
  exit 2
}

case "${MODE:-check}" in
  check | artifact | judge-artifact | install) ;;
  *) fail "mode must be check, artifact, judge-artifact or install, not '$MODE'" ;;
esac

# The inputs only the last steps read: a typo failed the job after the run was stored, and
# `post: yes` meant no post at all.
case "${FAILURE_POLICY:-on-regression}" in
  on-regression | on-warning | never) ;;
  *) fail "failure-policy must be on-regression, on-warning or never, not '$FAILURE_POLICY'" ;;
esac
case "${CHECK:-auto}" in
  auto | check-run | status | none) ;;
  *) fail "check must be auto, check-run, status or none, not '$CHECK'" ;;
esac
for switch in "post=${POST:-true}" "verify-head=${VERIFY_HEAD:-false}"; do
  case "${switch#*=}" in
    true | false) ;;
    *) fail "${switch%%=*} must be true or false, not '${switch#*=}'" ;;
  esac
done

if [ "${INSTALL:-true}" != "true" ]; then
  if [ "$phase" = "plan" ]; then
    echo "cache=false" >> "$GITHUB_OUTPUT"
    exit 0
  fi
  bin="$(command -v roofguard || true)"
  [ -n "$bin" ] || fail "roofguard is not on PATH (with install: false it must be preinstalled)"
  echo "bin=$bin" >> "$GITHUB_OUTPUT"
  exit 0
fi

# -- which extras: what this run reads here ---------------------------------------------------
auto_extras() {
  local extras=()
  case "${DATABASE_URL:-}" in
    postgresql* | postgres:*) extras+=(postgres) ;;
  esac
  # server mode sends the reports as they are: the service reads them, not this runner
  if [ -z "${SERVER_URL:-}" ] && [ "$MODE" != "artifact" ]; then
    if printf '%s\n' "${REPORTS:-} ${RERUN_REPORTS:-}" | grep -q '\.ncu-rep'; then
      extras+=(ncu)
    elif [ "$MODE" = "judge-artifact" ] && [ -d "${ARTIFACT:-}" ] &&
      [ -n "$(find "$ARTIFACT" -name '*.ncu-rep' -print -quit 2>/dev/null)" ]; then
      extras+=(ncu)
    fi
  fi
  local IFS=,
  echo "${extras[*]}"
}

extras="${EXTRAS:-auto}"
if [ "$extras" = "auto" ]; then extras="$(auto_extras)"; fi
case "$extras" in
  *[!a-z,]*) fail "extras must be a comma-separated list such as postgres,ncu, not '$extras'" ;;
esac

# -- what to install: this action's own checkout (pinned by the ref it is used at) -----------
root="$ACTION_PATH/../../.."
spec="${SPEC:-$root}"
requirement="$spec"
if [ -n "$extras" ]; then
  if [[ "$spec" =~ ^roofguard([^A-Za-z0-9_.-].*)?$ ]]; then
    requirement="roofguard[$extras]${spec#roofguard}" # roofguard==1.2 / roofguard @ URL
  else
    requirement="$spec[$extras]" # a path or a wheel
  fi
fi

# -- where: the runner's Python, or a venv in the tool cache ----------------------------------
isolate="${ISOLATE:-auto}"
if [ "$isolate" = "auto" ]; then
  if [ "${RUNNER_KIND:-}" = "self-hosted" ] || [ "${CACHE:-true}" = "true" ]; then
    isolate=true
  else
    isolate=false
  fi
fi
python="python"
command -v python >/dev/null || python="python3"

# What the install is made of: a new version, source, extra or Python is a new cache key.
source_hash() {
  if [ -n "${SPEC:-}" ]; then
    printf '%s' "$SPEC" | sha256sum | cut -c1-12
    return
  fi
  # the packaged sources (an unreadable tree hashes as what could be read: a cache miss)
  (cd "$root" && { find pyproject.toml collectors rules service -type f ! -name '*.pyc' -print0 \
    2>/dev/null || true; } | LC_ALL=C sort -z | xargs -0 -r sha256sum | sha256sum | cut -c1-12)
}

version="$("$python" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' "$root/pyproject.toml" 2>/dev/null || echo unknown)"
if [ -n "${SPEC:-}" ]; then version="spec-$(source_hash)"; fi
pyver="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
pyfull="$("$python" -c 'import platform; print(platform.python_version())')"
key="roofguard-$version-$(source_hash)-${extras:-none}-$(uname -sm | tr ' ' '-')-py$pyfull"
venv=""
if [ "$isolate" = "true" ]; then
  venv="${TOOL_CACHE:-${RUNNER_TOOL_CACHE:-$RUNNER_TEMP}}/roofguard/$version/py$pyver"
fi

if [ "$phase" = "plan" ]; then
  # self-hosted runners keep their tool cache: actions/cache would only copy it around
  cache=false
  if [ -n "$venv" ] && [ "${CACHE:-true}" = "true" ] && [ "${RUNNER_KIND:-}" != "self-hosted" ]; then
    cache=true
  fi
  {
    echo "cache=$cache"
    echo "venv=$venv"
    echo "key=$key"
  } >> "$GITHUB_OUTPUT"
  exit 0
fi

if [ -n "$venv" ]; then
  mkdir -p "$(dirname "$venv")"
  # two runners on one host may share the tool cache: one installs at a time
  exec 9> "$venv.lock"
  if command -v flock >/dev/null; then flock 9; fi
  # a venv restored on another image may point at a Python that is not there
  if [ -d "$venv" ] && ! "$venv/bin/python" -c '' 2>/dev/null; then rm -rf "$venv"; fi
  if [ ! -x "$venv/bin/python" ]; then "$python" -m venv "$venv"; fi
  python="$venv/bin/python"
fi

scripts="$("$python" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
marker="$venv/.roofguard-install"
if [ -n "$venv" ] && [ -x "$scripts/roofguard" ] && [ "$(cat "$marker" 2>/dev/null)" = "$key" ]; then
  echo "roofguard: using the cached install in $venv ($key)"
else
  echo "roofguard: installing $requirement${venv:+ into $venv}"
  "$python" -m pip install --disable-pip-version-check --quiet "$requirement"
  if [ -n "$venv" ]; then echo "$key" > "$marker"; fi
fi
bin="$scripts/roofguard"
if [ ! -x "$bin" ]; then bin="$(command -v roofguard || true)"; fi
[ -n "$bin" ] || fail "roofguard was installed but its command is not found"
echo "bin=$bin" >> "$GITHUB_OUTPUT"
