/* Which processes are being recorded: one map shared by every BPF object.
 *
 * The recorder creates the map once (record/session.c) and every signal's
 * skeleton reuses its fd before load (bpf_map__reuse_fd), so a process added
 * by proc.bpf.c on fork is seen at once by every signal.  Keyed by tgid.
 *
 * nusku record -a: every process is a target but the recorder itself
 * (nsk_all_but, its tgid, set in each object's rodata before load), and the
 * idle task (tgid 0), while key 0 is in the map: the recorder puts it there
 * before the probes attach and takes it out when the recording ends, as it
 * does every key of a targeted recording.  Without -a the test is the one
 * lookup it always was (the branch is removed at load): a bystander pays
 * nothing more.
 */
#ifndef NUSKU_TARGET_BPF_H
#define NUSKU_TARGET_BPF_H

#define NSK_MAX_TARGETS 8192

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NSK_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} nsk_targets SEC(".maps");

const volatile __u32 nsk_all_but = 0;

static __always_inline int nsk_is_target(__u32 tgid)
{
	if (nsk_all_but) {
		__u32 on = 0;

		return tgid && tgid != nsk_all_but &&
		       bpf_map_lookup_elem(&nsk_targets, &on) != 0;
	}
	return bpf_map_lookup_elem(&nsk_targets, &tgid) != 0;
}

/* The current task's tgid and tid. */
static __always_inline __u32 nsk_cur_tgid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

#endif
