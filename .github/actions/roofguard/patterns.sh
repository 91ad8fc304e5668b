#!/usr/bin/env bash
# Sourced by the Action's steps that take report lists (`reports`, `rerun-reports`): a
# whitespace-separated list of glob patterns, expanded here (globstar on), into the array
# `matched`. A pattern that matches nothing is an error, so a typo in a workflow fails the step
# instead of judging fewer reports.
expand_patterns() {
  local list="$1" pattern path files
  local -a patterns found
  matched=()
  shopt -s nullglob globstar
  set -f # split the list on whitespace without globbing yet
  # shellcheck disable=SC2206
  patterns=($list)
  set +f
  for pattern in "${patterns[@]}"; do
    # shellcheck disable=SC2206
    found=($pattern)
    if [ "${#found[@]}" -eq 0 ]; then
      echo "::error title=roofguard::no report matches '$pattern'"
      return 2
    fi
    # `reports/**` matches folders too, and two patterns may match one file: each file once
    files=0
    for path in "${found[@]}"; do
      if [ -d "$path" ]; then continue; fi
      files=$((files + 1))
      if ! already_matched "$path"; then matched+=("$path"); fi
    done
    if [ "$files" -eq 0 ]; then
      echo "::error title=roofguard::'$pattern' matches only folders, no report"
      return 2
    fi
  done
}

# already_matched PATH: whether PATH is in `matched` (a scan: a run has few reports, and bash
# 3.2, macOS's, has no associative arrays).
already_matched() {
  local known
  for known in "${matched[@]+"${matched[@]}"}"; do
    if [ "$known" = "$1" ]; then return 0; fi
  done
  return 1
}

# literal_paths LIST: the verified artifact's files, one path a line as `artifact unpack` wrote
# them, into `matched` as they are: never split on spaces (a runner's temp folder may hold
# them) nor globbed.
literal_paths() {
  local line
  matched=()
  while IFS= read -r line; do
    if [ -n "$line" ]; then matched+=("$line"); fi
  done <<< "$1"
}
