"""The check pipeline: collect reports, resolve roofs, store the run, judge it against history."""
