#!/usr/bin/env bash
# The Action's install step: roofguard with the extras its inputs need, into the runner's
# Python or (self-hosted runners, which persist between jobs) a virtual environment in the
# runner's tool cache. Sets the step output `bin`, the roofguard command later steps run; the
# job's PATH is left alone, so the user's own steps keep their Python.
#
# Inputs come from the environment (action.yml `env:`): INSTALL, SPEC, EXTRAS, ISOLATE, MODE,
# REPORTS, RERUN_REPORTS, ARTIFACT, DATABASE_URL, SERVER_URL, ACTION_PATH, RUNNER_KIND, TOOL_CACHE.
set -euo pipefail

fail() {
  echo "::error title=roofguard::$1"
  exit 2
}

case "${MODE:-check}" in
  check | artifact | judge-artifact) ;;
  *) fail "mode must be check, artifact or judge-artifact, not '$MODE'" ;;
esac

if [ "${INSTALL:-true}" != "true" ]; then
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
  if [ "${RUNNER_KIND:-}" = "self-hosted" ]; then isolate=true; else isolate=false; fi
fi
python="python"
command -v python >/dev/null || python="python3"
if [ "$isolate" = "true" ]; then
  version="$("$python" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' "$root/pyproject.toml" 2>/dev/null || echo unknown)"
  if [ -n "${SPEC:-}" ]; then version="spec-$(printf '%s' "$SPEC" | sha256sum | cut -c1-12)"; fi
  pyver="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  venv="${TOOL_CACHE:-${RUNNER_TOOL_CACHE:-$RUNNER_TEMP}}/roofguard/$version/py$pyver"
  mkdir -p "$(dirname "$venv")"
  # two runners on one host may share the tool cache: one installs at a time
  exec 9> "$venv.lock"
  if command -v flock >/dev/null; then flock 9; fi
  if [ ! -x "$venv/bin/python" ]; then "$python" -m venv "$venv"; fi
  python="$venv/bin/python"
fi

echo "roofguard: installing $requirement${venv:+ into $venv}"
"$python" -m pip install --disable-pip-version-check --quiet "$requirement"
scripts="$("$python" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
bin="$scripts/roofguard"
if [ ! -x "$bin" ]; then bin="$(command -v roofguard || true)"; fi
[ -n "$bin" ] || fail "roofguard was installed but its command is not found"
echo "bin=$bin" >> "$GITHUB_OUTPUT"
