# bash completion for studentsvc (installed as
# share/bash-completion/completions/studentsvc)
_studentsvc() {
  local cur prev words cword
  _init_completion 2>/dev/null || { cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"; }
  local commands="get current conversation config doctor mock version help"
  local common="--base-url --api-key --svc-api-key --network-id --password --api-version --perm-syntax --ca-bundle --proxy
    --ca-pem --client-cert --client-key --client-key-password --pinned-public-key
    --insecure-loopback --timeout --retries --profile --config --mock -o --output --format -v --verbose --stats
    -h --help --version"
  case "$prev" in
    -o|--output|--format) COMPREPLY=($(compgen -W "json ndjson csv table" -- "$cur")); return ;;
    --perm-syntax) COMPREPLY=($(compgen -W "digits alphanumeric" -- "$cur")); return ;;
    --from|--failed-to|--ca-bundle|--client-cert|--client-key|--config|--students|--tls-cert|--tls-key) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --base-url|--api-key|--svc-api-key|--network-id|--password|--api-version|--proxy|--ca-pem|--client-key-password|\
    --pinned-public-key|--timeout|--retries|\
    --jwt|--column|--concurrency|--method|--data|--content-type|--query|--latency|--threads|--port|--perm|--profile) return ;;
  esac
  local command="" w
  for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$w" in get|current|conversation|config|doctor|mock|version|help) command="$w"; break ;; esac
  done
  local own=""
  case "$command" in
    get) own="--from --column --concurrency --fail-fast --failed-to --csv-raw -q --quiet --jwt" ;;
    doctor) own="--json --perm --jwt --show-perms" ;;
    current) own="--jwt" ;;
    conversation) own="--method --data --content-type --query --idempotent" ;;
    mock) own="--port --tls-cert --tls-key --students --latency --threads" ;;
    help) COMPREPLY=($(compgen -W "get current conversation config doctor mock version" -- "$cur")); return ;;
    "") if [[ "$cur" != -* ]]; then COMPREPLY=($(compgen -W "$commands" -- "$cur")); return; fi ;;
  esac
  COMPREPLY=($(compgen -W "$own $common" -- "$cur"))
}
complete -F _studentsvc studentsvc
