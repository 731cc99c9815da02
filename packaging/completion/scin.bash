# bash completion for scin, SCIN Explorer's command-line tool.
# Installed as /usr/share/bash-completion/completions/scin.
#
# Subcommands, options and the values an option lists ("table|csv|json") are
# read from the program's own --help when first needed (and cached per shell),
# so the completion always matches the installed binary. Preset names come from
# `scin presets`, parameter paths for --set from `scin params --format csv`.

# _scin_help BIN [SUBCOMMAND]: the (cached) --help text.
_scin_help() {
    local key="$1 $2"
    if [[ -z ${_scin_help_cache[$key]+set} ]]; then
        _scin_help_cache[$key]=$("$1" ${2:+"$2"} --help 2>/dev/null)
    fi
    printf '%s\n' "${_scin_help_cache[$key]}"
}
declare -gA _scin_help_cache 2>/dev/null || declare -A _scin_help_cache

_scin() {
    local cur prev words cword
    _init_completion -n = || return
    local bin=${words[0]} sub="" i
    # The first word that is not an option is the subcommand (the top-level
    # options take no values).
    for ((i = 1; i < cword; i++)); do
        if [[ ${words[i]} != -* ]]; then sub=${words[i]}; break; fi
    done

    if [[ -z $sub ]]; then
        local subs
        subs=$(_scin_help "$bin" | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$subs" -- "$cur"))
        fi
        return
    fi

    local help
    help=$(_scin_help "$bin" "$sub")
    # Option lines: "  -b,--minbytes TEXT=8   help" (a flag has no TYPE).
    # When prev is an option that takes a value, complete the value.
    if [[ $prev == -* ]]; then
        local line
        line=$(awk -v opt="$prev" '/^  -/ {
                 n = split($1, names, ","); for (i = 1; i <= n; i++) if (names[i] == opt) { print; exit } }' <<<"$help")
        if [[ -n $line && $line =~ ^\ +[^\ ]+\ ([A-Z]+)(=|\ |$) ]]; then
            case $prev in
                --preset | --fabric)
                    COMPREPLY=($(compgen -W "$("$bin" presets 2>/dev/null | awk '{print $1}')" -- "$cur"))
                    _filedir json
                    return ;;
                --set)
                    if [[ $cur != *=* ]]; then
                        COMPREPLY=($(compgen -W "$("$bin" params --format csv 2>/dev/null | awk -F, 'NR > 1 {print $1 "="}')" -- "$cur"))
                        compopt -o nospace
                    fi
                    return ;;
                --db) _filedir scindb; return ;;
                --npy) _filedir npy; return ;;
            esac
            # "a|b|c" in the help: the allowed values.
            local values
            values=$(grep -oE '[A-Za-z0-9_.-]+(\|[A-Za-z0-9_.-]+)+' <<<"$line" | head -n 1 | tr '|' ' ')
            if [[ -n $values ]]; then
                COMPREPLY=($(compgen -W "$values" -- "$cur"))
            elif [[ ${BASH_REMATCH[1]} == TEXT ]]; then
                _filedir
            fi
            return
        fi
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(awk '/^  -/ {gsub(",", " ", $1); print $1}' <<<"$help")" -- "$cur"))
        return
    fi
    # Positionals (sweep SPEC): files.
    if grep -q '^Positionals:' <<<"$help"; then
        _filedir
    fi
} && complete -F _scin scin
