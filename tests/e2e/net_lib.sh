# Network test scaffolding: sourced after lib.sh, not run.
#
# netns_up LOSS_PERCENT makes a network namespace of our own with only its
# loopback up and, when LOSS_PERCENT > 0, an nftables rule in the namespace's
# own table that drops that share of TCP packets at prerouting (netem is not
# always built; nftables' numgen is).  Dropping at prerouting, after the
# packet was sent, keeps every retransmit a successful send, which is what
# the kernel's TcpRetransSegs counts.  The namespace goes away on exit.
# Only loopback addresses inside it are ever used.

NETNS=
netns_cleanup() {
	[ -n "$NETNS" ] && ip netns del "$NETNS" 2>/dev/null
	rm -rf "$TMPD"
}
trap netns_cleanup EXIT
trap 'exit 1' INT TERM

need_netns() {
	command -v ip >/dev/null 2>&1 || skip "ip (iproute2) not installed"
	command -v nft >/dev/null 2>&1 || skip "nft (nftables) not installed"
}

netns_up() {
	need_netns
	NETNS="nsk-test-$$"
	ip netns add "$NETNS" 2>"$TMPD/netns.err" ||
		skip "cannot make a network namespace: $(cat "$TMPD/netns.err")"
	ip -n "$NETNS" link set lo up || fail "cannot bring up lo in $NETNS"
	[ "$1" -gt 0 ] || return 0
	# Recover from a drop in ~10 ms instead of the 200 ms minimum RTO (and
	# tail loss probe), so a few hundred round trips with a few dozen
	# drops take well under a second.  Best effort: only time depends on it.
	ip -n "$NETNS" route replace local 127.0.0.1 dev lo table local \
		proto kernel scope host src 127.0.0.1 rto_min 10ms 2>/dev/null
	ip -n "$NETNS" -6 route del local ::1 table local 2>/dev/null &&
		ip -n "$NETNS" -6 route add local ::1 dev lo table local \
			proto kernel rto_min 10ms 2>/dev/null
	printf '%s\n' \
		"table inet nsk_loss {" \
		"  chain pre {" \
		"    type filter hook prerouting priority 0; policy accept;" \
		"    meta l4proto tcp numgen random mod 100 < $1 drop" \
		"  }" \
		"}" | ip netns exec "$NETNS" nft -f - 2>"$TMPD/nft.err" ||
		skip "cannot drop packets with nftables: $(cat "$TMPD/nft.err")"
}

# in_netns CMD...: run a command inside the namespace.
in_netns() {
	ip netns exec "$NETNS" "$@"
}

# The namespace's TcpRetransSegs (the kernel's own retransmit count).
retrans_segs() {
	in_netns awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) k[i] = $i; h = 1 }
		else for (i = 1; i <= NF; i++) if (k[i] == "RetransSegs") print $i }' /proc/net/snmp
}
