# bash completion for tcsync(8)                              -*- shell-script -*-
_tcsync() {
    local cur prev words cword
    _init_completion || return

    local commands="validate diff apply watch confirm dump import schema stats"
    local global_opts="--netns --format --color -q --quiet --help --version"
    local cmd="" i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --netns | --format | --color | --on-error | --dev | --scope | --debounce | --max-delay | --repair-limit | --repair-window | --rcvbuf | --confirm | --output | --watch | --leaf-limit) ((i++)) ;;
            validate | diff | apply | watch | confirm | dump | import | schema | stats) cmd=${words[i]}; break ;;
        esac
    done

    case $prev in
        --netns)
            COMPREPLY=($(compgen -W "$(ip netns list 2>/dev/null | awk '{print $1}')" -- "$cur"))
            return ;;
        --format)
            local formats="text json"
            [[ " ${words[*]} " == *" stats "* ]] && formats+=" prometheus dot"
            COMPREPLY=($(compgen -W "$formats" -- "$cur")); return ;;
        --output) _filedir prom; return ;;
        --scope) _filedir '@(yaml|yml|json)'; return ;;
        --watch | --leaf-limit) return ;;
        --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
        --on-error) COMPREPLY=($(compgen -W "rollback stop continue" -- "$cur")); return ;;
        --dev)
            COMPREPLY=($(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur"))
            return ;;
    esac

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$global_opts" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi

    case $cmd in
        validate | diff | apply | watch)
            if [[ $cur == -* ]]; then
                local opts="$global_opts"
                [[ $cmd == apply ]] && opts+=" --dry-run --on-error --wait --no-verify --atomic --deep --confirm"
                [[ $cmd == diff ]] && opts+=" --against --atomic --deep"
                [[ $cmd == validate ]] && opts+=" --strict"
                [[ $cmd == watch ]] && opts+=" --debounce --max-delay --repair-limit --repair-window --rcvbuf"
                COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            else
                _filedir '@(yaml|yml)'
            fi ;;
        dump)
            COMPREPLY=($(compgen -W "--dev --scope $global_opts" -- "$cur")) ;;
        stats)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--dev --output --watch --leaf-limit $global_opts" -- "$cur"))
            else
                _filedir '@(yaml|yml)'
            fi ;;
        import)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$global_opts" -- "$cur"))
            else
                _filedir
            fi ;;
    esac
} &&
    complete -F _tcsync tcsync
