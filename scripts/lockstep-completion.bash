# bash completion for lockstep: subcommands, each subcommand's flags (read from its --help, so
# they never drift from the tool), scenario files (*.toml) and the bundled scenarios' names,
# and history files for report and history. Installed to share/bash-completion/completions/lockstep.

_lockstep_flags() {
  # The long and short flags `lockstep CMD --help` lists, once per shell.
  local cmd=$1 var="_lockstep_flags_${1//-/_}"
  if [[ -z ${!var-} ]]; then
    printf -v "$var" '%s' "$(lockstep "$cmd" --help 2>/dev/null |
      grep -oE '(^|[ ,\[])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b' | tr -d ' ,[' | sort -u | tr '\n' ' ')"
  fi
  printf '%s' "${!var}"
}

_lockstep_bundled() {
  # The scenario names lockstep finds without a path (share/lockstep/scenarios).
  local dir
  for dir in "$(dirname "$(command -v lockstep 2>/dev/null)")/../share/lockstep/scenarios" \
             /usr/local/share/lockstep/scenarios /usr/share/lockstep/scenarios; do
    if [[ -d $dir ]]; then
      (cd "$dir" && for f in *.toml; do printf 'scenarios/%s\n' "$f"; done)
      return
    fi
  done
}

_lockstep() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local commands="run fuzz replay report history eval emu help"
  if ((COMP_CWORD == 1)); then
    mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$cur")
    return
  fi
  local cmd=${COMP_WORDS[1]}
  case $prev in
    --out | --lua-dir | --corpus)
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      return ;;
    --to)
      mapfile -t COMPREPLY < <(compgen -W "binary jsonl jsonl.gz" -- "$cur")
      return ;;
    --json | --junit | --scenario)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return ;;
    --history)
      mapfile -t COMPREPLY < <(compgen -W "binary jsonl jsonl.gz none" -- "$cur")
      return ;;
  esac
  if [[ $cmd == help ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
    return
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_lockstep_flags "$cmd")" -- "$cur")
    return
  fi
  case $cmd in
    run | fuzz | replay)
      mapfile -t COMPREPLY < <(compgen -f -X '!*.toml' -- "$cur"; compgen -d -S / -- "$cur"
                               compgen -W "$(_lockstep_bundled)" -- "$cur") ;;
    report)
      mapfile -t COMPREPLY < <(compgen -f -X '!*.jsonl*' -- "$cur"; compgen -f -X '!*.bin' -- "$cur"; compgen -d -S / -- "$cur") ;;
    history)
      if ((COMP_CWORD == 2)); then
        mapfile -t COMPREPLY < <(compgen -W "dump convert" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -f -X '!*.jsonl*' -- "$cur"; compgen -f -X '!*.bin' -- "$cur"; compgen -d -S / -- "$cur")
      fi ;;
    eval)
      mapfile -t COMPREPLY < <(compgen -f -X '!*.lua' -- "$cur"; compgen -d -S / -- "$cur") ;;
  esac
}

complete -o nospace -o filenames -F _lockstep lockstep
