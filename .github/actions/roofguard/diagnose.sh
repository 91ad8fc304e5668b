#!/usr/bin/env bash
# Sourced by the Action's check and re-measure steps: diagnoses that print what to do.

# The fix for ncu's ERR_NVGPUCTRPERM (performance counters restricted to admin users), as
# NVIDIA documents it at https://developer.nvidia.com/ERR_NVGPUCTRPERM.
NVGPUCTRPERM_FIX="allow the counters for every user on the runner: echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | sudo tee /etc/modprobe.d/nvidia-profiling.conf, then reload the nvidia kernel module or reboot (some distributions also need sudo update-initramfs -u); or profile as root, or in a container started with --cap-add=SYS_ADMIN. See https://developer.nvidia.com/ERR_NVGPUCTRPERM"

# explain_profiler_errors FILE...: when ncu's ERR_NVGPUCTRPERM appears in any of the files (a
# step's output, a report, ncu's log file), say how to fix it. Always succeeds.
# (Titles of workflow commands may hold no ':' or ',': GitHub reads those as separators.)
explain_profiler_errors() {
  local file
  for file in "$@"; do
    if [ -f "$file" ] && grep -aqs 'ERR_NVGPUCTRPERM' -- "$file"; then
      echo "::error title=roofguard ERR_NVGPUCTRPERM::ncu may not read the GPU's performance counters as this user: $NVGPUCTRPERM_FIX"
      return 0
    fi
  done
  return 0
}

# warn_if_the_store_is_lost: warn when the history store will not outlive this job (no
# database-url: SQLite in the workspace; or a SQLite file in the workspace or the runner's
# temp folder, which checkout's clean step and the runner wipe): then every run is judged
# against no history and every kernel is new. Also when a kept SQLite file does not exist yet:
# a new history, or a path that is wrong. An empty ROOFGUARD_DATABASE_URL is unset, so
# roofguard takes its default.
warn_if_the_store_is_lost() {
  local url="${ROOFGUARD_DATABASE_URL:-}" path
  if [ -z "$url" ]; then
    unset ROOFGUARD_DATABASE_URL
    echo "::warning title=roofguard store not kept::no database-url: the history is a SQLite file in the workspace (.roofguard/history.db), which is gone in the next job; every kernel is new and nothing is judged against a baseline. Pass database-url from a secret (PostgreSQL), or server-url."
    return 0
  fi
  case "$url" in
    sqlite:///*) path="${url#sqlite:///}" ;;
    *) return 0 ;;
  esac
  path="${path%%\?*}"
  if [[ "$path" != /* ]] || [[ -n "${GITHUB_WORKSPACE:-}" && "$path" == "$GITHUB_WORKSPACE"/* ]] ||
    [[ -n "${RUNNER_TEMP:-}" && "$path" == "$RUNNER_TEMP"/* ]]; then
    echo "::warning title=roofguard store not kept::database-url is a SQLite file in the workspace or the runner's temp folder ($path), which is gone in the next job; every kernel is new and nothing is judged against a baseline. Use a database that outlives the job."
  elif [ ! -e "$path" ]; then
    # a mistyped path or an unmounted volume would start an empty history in silence
    echo "::warning title=roofguard new history store::database-url names no file yet ($path): roofguard starts an empty history there, so nothing is judged against a baseline. Expected on the first run only; otherwise check the path and that its volume is mounted."
  fi
  return 0
}
