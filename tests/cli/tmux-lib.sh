# tmux-lib.sh — the terminal a shell test types into (sourced, not run): tmux types the keys
# (send-keys) and reads the screen (capture-pane).  Each session gets its own tmux server: a
# new session on a server that kill-server has told to exit but that has not yet gone races it
# ("server exited unexpectedly" under load).  Used by shell-tmux.sh and shell-remote-tmux.sh.
#
# The sourcing script sets TMUX_LIB_NAME (a socket prefix) before sourcing, and calls
# tmux_lib_cleanup from its EXIT trap.  Steps: `mark` types a comment; what the screen shows
# after it is that step's output (`out`, `expect`, `has`).

tmux_sessions=0
tmux_sock="$TMUX_LIB_NAME-$$-0"

tmux_lib_cleanup() {
  local i
  for i in $(seq 0 "$tmux_sessions"); do tmux -L "$TMUX_LIB_NAME-$$-$i" kill-server 2>/dev/null || true; done
}

tm() { tmux -L "$tmux_sock" -f /dev/null "$@"; }
screen() { tm capture-pane -p -J -t s -S -; }
fail() { echo "FAIL: $1" >&2; echo "---- the screen:" >&2; screen >&2; exit 1; }
wait_screen() { # PATTERN WHAT: the whole screen matches, within 30 s
  for _ in $(seq 1 300); do grep -qE -- "$1" <<<"$(screen)" && return 0; sleep 0.1; done
  fail "$2: no line matches /$1/"
}

# tmux_start COMMAND PROMPT: COMMAND in a fresh session on a fresh server; the pane stays after
# it exits, with its status; waits for PROMPT (a regex of a whole screen line)
tmux_start() {
  tm kill-server 2>/dev/null || true
  tmux_sessions=$((tmux_sessions + 1)); tmux_sock="$TMUX_LIB_NAME-$$-$tmux_sessions"
  tm new-session -d -s s -x 150 -y 50 "$1; echo \"shell exited with status \$?\"; sleep 60"
  tm set-option -t s history-limit 5000 >/dev/null
  wait_screen "$2" "the first prompt"
}

step=0
mark() { # a comment typed at the prompt: what follows it on the screen is this step's
  step=$((step + 1))
  tm send-keys -t s "// step $step" Enter
  wait_screen "// step $step\$" "step $step's mark"
}
out() { screen | awk -v m="// step $step" '$0 ~ m"$" { buf = ""; on = 1; next } on { buf = buf $0 "\n" } END { printf "%s", buf }'; }
expect() { # PATTERN WHAT: the output of the current step matches, within 30 s
  for _ in $(seq 1 300); do grep -qE -- "$1" <<<"$(out)" && return 0; sleep 0.1; done
  fail "step $step, $2: no line matches /$1/"
}
has() { grep -q "$@" <<<"$(out)"; } # grep OPTIONS PATTERN over the current step's output (no pipe: pipefail)
type_line() { tm send-keys -t s -l "$1"; tm send-keys -t s Enter; }

# expect_caret SOURCE_LINE_REGEX TOKEN: the step's error shows its source line and a caret
# exactly under TOKEN
expect_caret() {
  local o src caret col_src col_caret
  o=$(out)
  src=$(grep -m1 -E "$1" <<<"$o" || true)
  caret=$(grep -m1 -E '^ +\| +\^$' <<<"$o" || true)
  [ -n "$src" ] && [ -n "$caret" ] || fail "the error's source line and caret"
  col_src=$(awk -v s="$src" -v t="$2" 'BEGIN { print index(s, t) }')
  col_caret=$(awk -v s="$caret" 'BEGIN { print index(s, "^") }')
  [ "$col_src" = "$col_caret" ] || fail "the caret is at column $col_caret, $2 at $col_src"
}
