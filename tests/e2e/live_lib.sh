# Helpers for the nusku live tests: sourced after lib.sh, not run.

# The first row's function in the CPU table of the last snapshot in $1
# ("--view cpu" or all views; the function is the last column).
live_top_function() {
	awk '/^== nusku live/ { top = "" }
	     /^-- 1 CPU/ { t = 1; h = 0; next }
	     /^-- / { t = 0 }
	     t && !h { h = 1; next }
	     t && h == 1 && NF >= 4 { top = $NF; h = 2 }
	     END { print top }' "$1"
}

# The last snapshot's status line in $1.
live_last_status() {
	grep '^== nusku live' "$1" | tail -1
}

# The first row's function in the CPU table of the first snapshot in $1
# whose top function has at least 100 ms of CPU: what live showed as soon
# as there were enough samples to tell (a sanitizer build starts slowly).
live_first_top_function() {
	awk 'function ms(v) {
		if (v ~ /ms$/) return v + 0; if (v ~ /us$/) return v / 1000;
		if (v ~ /ns$/) return 0; if (v ~ /s$/) return v * 1000; return 0 }
	     /^-- 1 CPU/ { t = 1; h = 0; next }
	     /^-- / { t = 0 }
	     t && !h { h = 1; next }
	     t && h == 1 && NF >= 4 { h = 2; if (ms($3) >= 100) { print $NF; exit } }' "$1"
}

# tmux_wait TARGET PATTERN: waits until tmux pane TARGET shows PATTERN (a
# grep -E pattern), about 10 s at most, leaving the screen in
# $TMPD/screen; on a timeout prints it and returns 1.  Needs the test's
# T (tmux on its own socket).
tmux_wait() {
	for i in $(seq 100); do
		T capture-pane -p -t "$1" >"$TMPD/screen" 2>/dev/null
		grep -Eq "$2" "$TMPD/screen" && return 0
		sleep 0.1
	done
	echo "--- screen:" >&2; cat "$TMPD/screen" >&2
	return 1
}
