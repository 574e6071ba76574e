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
