#!/usr/bin/env bash
# Runs the ```sh blocks of docs/tool.md (the `studentsvc` tool's page), in
# order, in one shell, as a user would: the built tool first on PATH, HOME and
# the working folder fresh, build/dev the build under test, docs/ the repo's.
#   tests/tool_readme_test.sh SOURCE_DIR BUILD_DIR TOOL_DIR
set -euo pipefail
source_dir=$1 build_dir=$2 tool_dir=$3
work=$(mktemp -d)
trap 'jobs -p | xargs -r kill 2>/dev/null || true; rm -rf "$work"' EXIT

# Every sh block of the page, from its title on.
page="$source_dir/docs/tool.md"
grep -q '^# The `studentsvc` tool$' "$page" || { echo "tool_readme: $page has no '# The \`studentsvc\` tool' title"; exit 1; }
awk '/^```sh$/ {code=1; next} code && /^```$/ {code=0; print "# ----"; next} code' "$page" > "$work/blocks.sh"
blocks=$(grep -c '^# ----$' "$work/blocks.sh" || true)
[ "$blocks" -ge 5 ] || { echo "tool_readme: expected at least 5 sh blocks (install, completion, mock, doctor, roster), found $blocks"; exit 1; }

mkdir -p "$work/home" "$work/cwd/build"
ln -s "$build_dir" "$work/cwd/build/dev"
ln -s "$source_dir/docs" "$work/cwd/docs"
cd "$work/cwd"
env -i PATH="$tool_dir:/usr/bin:/bin" HOME="$work/home" bash -euo pipefail "$work/blocks.sh" > "$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; echo "tool_readme: a docs/tool.md block failed"; exit 1; }

# What the blocks left behind.
fail() { cat "$work/out.txt"; echo "tool_readme: $*"; exit 1; }
[ -x "$work/home/.local/bin/studentsvc" ] || fail "the install block did not install bin/studentsvc"
[ -f "$work/home/.local/share/bash-completion/completions/studentsvc" ] || fail "no bash completion"
[ -f "$work/home/.local/share/zsh/site-functions/_studentsvc" ] || fail "no zsh completion"
if [ -f "$build_dir/tools/studentsvc/studentsvc.1" ]; then  # built when help2man is there
  grep -q '^\.TH STUDENTSVC' "$work/home/.local/share/man/man1/studentsvc.1" || fail "no man page"
fi
[ "$(wc -l < roster.csv)" -eq 4 ] || fail "roster.csv should hold a header and three rows"
grep -q '^7654321,.*,not_found (404): Student not found\.' roster.csv || fail "the missing perm has no error row"
grep -q '^7000001,Zoë,' roster.csv || fail "roster.csv lost a UTF-8 name"
[ "$(wc -l < roster.ndjson)" -eq 3 ] || fail "roster.ndjson should hold three lines"
grep -q 'check: ok' "$work/out.txt" || fail "studentsvc config did not pass its check"

# The completion answers: subcommands, a command's options, the output formats.
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _studentsvc; echo "${COMPREPLY[*]}"' \
    _ "$work/home/.local/share/bash-completion/completions/studentsvc" "$@"
}
[[ " $(complete_words studentsvc g) " == *" get "* ]] || fail "bash completion: no 'get'"
[[ " $(complete_words studentsvc get --f) " == *" --from "* ]] || fail "bash completion: no get --from"
[[ " $(complete_words studentsvc get --fa) " == *" --fail-fast "* ]] || fail "bash completion: no --fail-fast"
[[ " $(complete_words studentsvc get --csv) " == *" --csv-raw "* ]] || fail "bash completion: no get --csv-raw"
grep -q -- "'--csv-raw\[" "$work/home/.local/share/zsh/site-functions/_studentsvc" || fail "zsh completion: no get --csv-raw"
[[ "$(complete_words studentsvc -o '')" == "json ndjson csv table" ]] || fail "bash completion: -o formats"
if command -v zsh >/dev/null; then
  zsh -n "$work/home/.local/share/zsh/site-functions/_studentsvc" || fail "zsh completion does not parse"
fi
echo "tool_readme: $blocks docs/tool.md blocks ran; install, completion, mock and roster recipes hold"
