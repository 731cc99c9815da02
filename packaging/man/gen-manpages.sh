#!/bin/sh
# Generates the manual pages scin.1 and scin-explorer.1 from the built
# programs' --help (help2man), so they always match the CLI definitions.
# scin.1 also gets one section per subcommand, built here from each
# `scin SUBCOMMAND --help`; the hand-written prose (description, files,
# environment, see also) is in scin.h2m and scin-explorer.h2m next to this file.
# scin-explorer runs under QT_QPA_PLATFORM=offscreen: its --help must not need a display.
#
# Usage: gen-manpages.sh SCIN SCIN_EXPLORER|- OUTDIR VERSION
set -eu
scin=$1 explorer=$2 out=$3 version=$4
here=$(cd "$(dirname "$0")" && pwd)
command -v help2man >/dev/null || { echo "gen-manpages.sh: help2man not found (apt-get install help2man)" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Run the programs by their plain names (help2man prints argv[0] in the usage lines).
ln -s "$(cd "$(dirname "$scin")" && pwd)/$(basename "$scin")" "$tmp/scin"
[ "$explorer" = - ] || ln -s "$(cd "$(dirname "$explorer")" && pwd)/$(basename "$explorer")" "$tmp/scin-explorer"
PATH=$tmp:$PATH
export PATH

# roff-escape help text: backslashes, and a leading . or ' (a request).
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

# One .SS per subcommand: its summary, its options and positionals as .TP
# paragraphs (CLI11's layout: "  -x,--long TYPE=DEFAULT   help", or a long
# option alone on its line with the help indented below it), then free text.
{
  cat "$here/scin.h2m"
  echo "[SUBCOMMANDS]"
  scin --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}' > "$tmp/subs"
  [ -s "$tmp/subs" ] || { echo "gen-manpages.sh: no subcommands in 'scin --help'" >&2; exit 1; }
  while read -r sub; do
    scin "$sub" --help > "$tmp/help" 2>&1 || { echo "gen-manpages.sh: 'scin $sub --help' failed" >&2; exit 1; }
    usage=$(sed -n 's/^Usage: [^ ]*scin /scin /p' "$tmp/help" | head -n 1)
    echo ".SS \"$usage\""
    esc < "$tmp/help" | awk '
      function flush() { if (text != "") { print ".PP"; print text; text = "" } }
      NR == 1 { print; next }                       # the summary
      /^Usage:/ { next }
      /^$/ { flush(); intp = 0; next }
      /^[A-Z][A-Za-z]*:$/ { flush(); intp = 0; next }  # "Options:", "Positionals:"
      /^  [^ ]/ {
        flush(); line = substr($0, 3); n = index(line, "  ")
        term = n ? substr(line, 1, n - 1) : line
        desc = n ? substr(line, n) : ""; sub(/^ +/, "", desc)
        gsub(/-/, "\\-", term)
        print ".TP"; print "\\fB" term "\\fR"; if (desc != "") print desc
        intp = 1; next
      }
      /^    / && intp { sub(/^ +/, ""); print; next }
      { intp = 0; text = (text == "" ? $0 : text "\n" $0) }
      END { flush() }'
  done < "$tmp/subs"
} > "$tmp/scin.h2m"

help2man --no-info --version-string="$version" --section=1 \
  --name="$(scin --help | head -n 1 | sed 's/^scin: //')" \
  --include="$tmp/scin.h2m" --output="$out/scin.1" scin

if [ "$explorer" != - ]; then
  mkdir -m 700 -p "$tmp/run"
  QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=$tmp/run \
  help2man --no-info --version-string="$version" --section=1 \
    --name="desktop design-space explorer for in-network All-Reduce" \
    --include="$here/scin-explorer.h2m" --output="$out/scin-explorer.1" scin-explorer
fi
