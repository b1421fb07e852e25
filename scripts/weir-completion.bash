# Bash completion for weir and its tools (weir <action> and weir-<action>).
#
#   source scripts/weir-completion.bash        # or copy it to /etc/bash_completion.d/weir
#
# Completes the actions after `weir`, each tool's options and their values (--type, --output,
# -t, -cm, directories and files where a path is expected), and job ids for cancel,
# savepoint, stop and checkpoint from `weir list --output json` when the endpoint answers (with the -m of
# the command line, within about two seconds; nothing is offered when it does not answer).

_weir_actions="run list cancel savepoint stop checkpoint inspect runtime help"

_weir_config_keys="execution.target execution.attached parallelism.default pipeline.max-parallelism
rest.address rest.port rest.bind-address rest.bind-port rest.server.max-content-length
rest.client.max-content-length rest.async.store-duration rest.connection-timeout client.timeout
web.upload.dir taskmanager.memory.segment-size taskmanager.network.memory.buffers-per-channel
taskmanager.network.memory.floating-buffers-per-gate taskmanager.network.memory.buffer-debloat.enabled
taskmanager.network.memory.buffer-debloat.target taskmanager.network.memory.buffer-debloat.period
taskmanager.network.memory.buffer-debloat.samples
taskmanager.network.memory.buffer-debloat.threshold-percentages taskmanager.memory.min-segment-size
execution.checkpointing.interval
execution.checkpointing.mode execution.checkpointing.timeout
execution.checkpointing.max-concurrent-checkpoints execution.checkpointing.min-pause
execution.checkpointing.tolerable-failed-checkpoints
execution.checkpointing.externalized-checkpoint-retention execution.checkpointing.num-retained
execution.checkpointing.dir execution.checkpointing.savepoint-dir execution.checkpointing.storage
execution.checkpointing.unaligned.enabled execution.checkpointing.aligned-checkpoint-timeout
execution.checkpointing.incremental state.backend.type restart-strategy.type
restart-strategy.fixed-delay.attempts restart-strategy.fixed-delay.delay
restart-strategy.failure-rate.max-failures-per-interval
restart-strategy.failure-rate.failure-rate-interval restart-strategy.failure-rate.delay
restart-strategy.exponential-delay.initial-backoff restart-strategy.exponential-delay.max-backoff
restart-strategy.exponential-delay.backoff-multiplier
restart-strategy.exponential-delay.reset-backoff-threshold
restart-strategy.exponential-delay.jitter-factor
restart-strategy.exponential-delay.attempts-before-reset-backoff execution.state-recovery.path
execution.state-recovery.ignore-unclaimed-state execution.state-recovery.claim-mode s3.endpoint
s3.path.style.access s3.access-key s3.secret-key weir.runtime.log.file weir.runtime.log.level"

_weir_common_opts="-m --jobmanager -D --output -v --verbose -h --help"

# The options of a tool.
_weir_options_of() {
  case "$1" in
    run) echo "-c --class -p --parallelism -d --detached -s --fromSavepoint -n
               --allowNonRestoredState -cm --claimMode -rm --restoreMode -t --target
               $_weir_common_opts" ;;
    list) echo "-r --running -s --scheduled -a --all $_weir_common_opts" ;;
    cancel) echo "-s --withSavepoint -type --type $_weir_common_opts" ;;
    savepoint) echo "-d --dispose -type --type -detached --detached $_weir_common_opts" ;;
    stop) echo "-p --savepointPath -d --drain -type --type -detached --detached $_weir_common_opts" ;;
    checkpoint) echo "-full --full $_weir_common_opts" ;;
    inspect) echo "--verify -D --output -v --verbose -h --help" ;;
    runtime) echo "-D --rest-port -v --verbose -h --help" ;;
  esac
}

# Job ids the endpoint knows (running and scheduled), from `weir list --output json`. $1: the
# command to run (weir-list beside the tool, else `weir list`); the rest: -m host:port if given.
_weir_job_ids() {
  local lister=("$@")
  "${lister[@]}" --output json -D client.timeout=2s -D rest.connection-timeout=1s 2>/dev/null |
    grep -o '{"jid":"[0-9a-f]\{32\}"' | cut -d'"' -f4
}

# The -m/--jobmanager value on the command line, as arguments for weir list.
_weir_endpoint_args() {
  local i
  for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
    case "${COMP_WORDS[i]}" in
      -m | --jobmanager) echo "-m ${COMP_WORDS[i + 1]}"; return ;;
      --jobmanager=*) echo "-m ${COMP_WORDS[i]#--jobmanager=}"; return ;;
    esac
  done
}

# Completes the words of `action` from index `first` (the first word after the action name).
_weir_complete_action() {
  local action="$1" first="$2" lister_cmd="$3"
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD - 1]}"
  [[ $COMP_CWORD -gt $first ]] || prev=""

  # Values of options.
  case "$prev" in
    --output) COMPREPLY=($(compgen -W "json text" -- "$cur")); return ;;
    -type | --type) COMPREPLY=($(compgen -W "canonical native" -- "$cur")); return ;;
    -m | --jobmanager) COMPREPLY=($(compgen -W "localhost:8081" -- "$cur")); return ;;
    -D)
      compopt -o nospace 2>/dev/null
      COMPREPLY=($(compgen -W "$_weir_config_keys" -S "=" -- "$cur"))
      return ;;
  esac
  case "$action:$prev" in
    run:-t | run:--target) COMPREPLY=($(compgen -W "local remote" -- "$cur")); return ;;
    run:-cm | run:--claimMode | run:-rm | run:--restoreMode)
      COMPREPLY=($(compgen -W "claim no_claim legacy" -- "$cur")); return ;;
    run:-s | run:--fromSavepoint | savepoint:-d | savepoint:--dispose)
      COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
    run:-c | run:--class | run:-p | run:--parallelism | runtime:--rest-port) return ;;
    stop:-p | stop:--savepointPath | cancel:-s | cancel:--withSavepoint)
      # Optional argument: a directory, or the job id itself.
      COMPREPLY=($(compgen -d -- "$cur"))
      [[ "$cur" == /* || "$cur" == .* ]] ||
        COMPREPLY+=($(compgen -W "$(_weir_job_ids $lister_cmd $(_weir_endpoint_args))" -- "$cur"))
      return ;;
  esac

  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_weir_options_of "$action")" -- "$cur"))
    return
  fi

  # Positional arguments: count the ones before the cursor (skipping option values).
  local i npos=0 word
  for ((i = first; i < COMP_CWORD; i++)); do
    word="${COMP_WORDS[i]}"
    case "$word" in
      -m | --jobmanager | -D | --output | -type | --type | -c | --class | -p | --parallelism | \
        -t | --target | -cm | --claimMode | -rm | --restoreMode | --rest-port) ((i++)) ;;
      -s | --fromSavepoint) [[ "$action" == run ]] && ((i++)) ;;
      -d | --dispose) [[ "$action" == savepoint ]] && ((i++)) ;;
      -*) ;;
      *) ((npos++)) ;;
    esac
  done
  case "$action" in
    cancel | stop | savepoint | checkpoint)
      if [[ $npos -eq 0 ]]; then
        COMPREPLY=($(compgen -W "$(_weir_job_ids $lister_cmd $(_weir_endpoint_args))" -- "$cur"))
      elif [[ "$action" == savepoint && $npos -eq 1 ]]; then
        COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null
      fi ;;
    inspect) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null ;;
    run)
      if [[ $npos -eq 0 ]]; then
        COMPREPLY=($(compgen -f -X '!*.so' -- "$cur") $(compgen -d -- "$cur"))
        compopt -o filenames 2>/dev/null
      else
        COMPREPLY=($(compgen -f -- "$cur"))  # the program's own arguments
      fi ;;
  esac
}

# `weir <action> ...`
_weir() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  COMPREPLY=()
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "$_weir_actions -h --help -v --version" -- "$cur"))
    return
  fi
  local action="${COMP_WORDS[1]}"
  if [[ "$action" == help ]]; then
    [[ $COMP_CWORD -eq 2 ]] && COMPREPLY=($(compgen -W "${_weir_actions% help}" -- "$cur"))
    return
  fi
  _weir_complete_action "$action" 2 "${COMP_WORDS[0]} list"
}

# `weir-<action> ...`
_weir_tool() {
  COMPREPLY=()
  local tool="${COMP_WORDS[0]}"
  local action="${tool##*/weir-}"
  action="${action#weir-}"
  local lister="${tool%weir-*}weir-list"
  [[ -x "$lister" ]] || lister="weir-list"
  _weir_complete_action "$action" 1 "$lister"
}

complete -F _weir weir
complete -F _weir_tool weir-run weir-list weir-cancel weir-savepoint weir-stop weir-checkpoint weir-inspect \
  weir-runtime
