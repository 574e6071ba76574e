# An sshd for the --ssh tests, started on 127.0.0.1 (a high port; host and
# user keys made here, removed with the test's scratch directory): sourced
# after lib.sh, not run.
#
# start_sshd SALT: skips (77) where sshd cannot run here; otherwise starts
# it, waits until a login works and sets D (its directory), PORT, SSHOPT
# (the ssh options that reach it) and sshd (its pid).  On exit it is
# stopped, after the test's own test_cleanup (define one first, if any),
# and TMPD removed.  SALT keeps the ports of tests that run at once apart.
test_cleanup() { :; }

stop_sshd() {
	test_cleanup
	[ -n "${sshd:-}" ] && { kill $sshd 2>/dev/null; wait $sshd 2>/dev/null; }
	rm -rf "$TMPD"
}

start_sshd() {
	SSHD=/usr/sbin/sshd
	[ -x "$SSHD" ] || skip "openssh-server is not installed ($SSHD)"
	command -v ssh >/dev/null && command -v ssh-keygen >/dev/null || skip "openssh-client is not installed"
	[ "$(id -u)" = 0 ] || skip "sshd needs root here (privilege separation)"
	D="$TMPD/ssh"
	mkdir -p "$D" && chmod 700 "$D"
	ssh-keygen -q -t ed25519 -N '' -f "$D/host_key" || skip "ssh-keygen failed"
	ssh-keygen -q -t ed25519 -N '' -f "$D/user_key" || skip "ssh-keygen failed"
	cp "$D/user_key.pub" "$D/authorized_keys"
	mkdir -p /run/sshd 2>/dev/null
	PORT=$((20000 + ($$ + $1) % 20000))
	cat >"$D/sshd_config" <<CONF
Port $PORT
ListenAddress 127.0.0.1
HostKey $D/host_key
AuthorizedKeysFile $D/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
PidFile $D/sshd.pid
CONF
	"$SSHD" -t -f "$D/sshd_config" 2>"$D/t.err" || skip "sshd refuses the config: $(head -1 "$D/t.err")"
	trap stop_sshd EXIT
	"$SSHD" -D -e -f "$D/sshd_config" 2>"$D/sshd.log" &
	sshd=$!
	SSHOPT="-p $PORT -i $D/user_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=5"
	up=0
	for i in $(seq 50); do
		ssh $SSHOPT -o BatchMode=yes root@127.0.0.1 true 2>/dev/null && { up=1; break; }
		kill -0 $sshd 2>/dev/null || break
		sleep 0.1
	done
	[ $up = 1 ] || skip "sshd did not come up on 127.0.0.1:$PORT: $(tail -1 "$D/sshd.log")"
}
