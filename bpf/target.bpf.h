/* Which processes are being recorded: one map shared by every BPF object.
 *
 * The recorder creates the map once (record/session.c) and every signal's
 * skeleton reuses its fd before load (bpf_map__reuse_fd), so a process added
 * by proc.bpf.c on fork is seen at once by every signal.  Keyed by tgid.
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

static __always_inline int nsk_is_target(__u32 tgid)
{
	return bpf_map_lookup_elem(&nsk_targets, &tgid) != 0;
}

/* The current task's tgid and tid. */
static __always_inline __u32 nsk_cur_tgid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

#endif
