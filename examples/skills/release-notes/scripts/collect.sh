#!/bin/sh
# Print the commit subjects since <tag> (oldest first), one per line.
# Usage: collect.sh <previous-tag> [repository-dir]
set -eu
if [ $# -lt 1 ]; then
  echo "usage: collect.sh <previous-tag> [repository-dir]" >&2
  exit 2
fi
git -C "${2:-.}" log --reverse --pretty=format:'%s' "$1..HEAD"
echo
