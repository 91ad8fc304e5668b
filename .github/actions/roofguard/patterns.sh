#!/usr/bin/env bash
# Sourced by the Action's steps that take report lists (`reports`, `rerun-reports`, and the
# verified artifact's files): a whitespace-separated list of glob patterns, expanded here
# (globstar on), into the array `matched`. A pattern that matches nothing is an error, so a
# typo in a workflow fails the step instead of judging fewer reports.
expand_patterns() {
  local list="$1" pattern
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
    matched+=("${found[@]}")
  done
}
