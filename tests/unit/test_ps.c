/* nusku ps's pure parts: /proc/PID/stat and cgroup paths, and the ELF
 * probes on programs compiled here with and without frame pointers and
 * debug info (cc from PATH), stripped and not. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/elf_probe.h"
#include "controller/proc_scan.h"
#include "controller/ps.h"

static char dir[PATH_MAX];

START_TEST(stat_parse)
{
	/* a comm with a space and a ')' of its own, as a process may name itself */
	const char *s = "4242 (a b) c\x1b) R 1 4242 4242 0 -1 4194560 100 0 0 0 "
			"250 50 0 0 20 0 3 0 12345 1000000 77 18446744073709551615";
	struct nsk_proc p = { 0 };

	ck_assert_int_eq(nsk_proc_scan__parse_stat(s, 4096, &p), 0);
	ck_assert_str_eq(p.comm, "a b) c\x1b");
	ck_assert_uint_eq(p.ticks, 300);
	ck_assert_int_eq(p.threads, 3);
	ck_assert_uint_eq(p.start, 12345);
	ck_assert_uint_eq(p.rss_bytes, 77 * 4096);
	ck_assert_int_eq(p.kernel, 0);
	ck_assert_int_eq(nsk_proc_scan__parse_stat("12 no parens", 4096, &p), -EINVAL);
	/* kthreadd: PF_KTHREAD in flags */
	ck_assert_int_eq(nsk_proc_scan__parse_stat(
		"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 2 0 0 0",
		4096, &p), 0);
	ck_assert_int_eq(p.kernel, 1);
}
END_TEST

START_TEST(cgroup_parse)
{
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct nsk_proc p = { 0 };
	char path[512];

	snprintf(path, sizeof(path), "/system.slice/docker-%s.scope", id);
	nsk_proc_scan__parse_cgroup(path, &p);
	ck_assert_str_eq(p.container, id);
	ck_assert_str_eq(p.engine, "docker");
	ck_assert_str_eq(p.unit + strlen(p.unit) - 6, ".scope");

	snprintf(path, sizeof(path), "/user.slice/user-1000.slice/user@1000.service/"
		 "user.slice/libpod-%s.scope/container", id);
	nsk_proc_scan__parse_cgroup(path, &p);
	ck_assert_str_eq(p.container, id);
	ck_assert_str_eq(p.engine, "podman");

	snprintf(path, sizeof(path), "/kubepods.slice/kubepods-pod1.slice/cri-containerd-%s.scope", id);
	nsk_proc_scan__parse_cgroup(path, &p);
	ck_assert_str_eq(p.engine, "containerd");

	snprintf(path, sizeof(path), "/docker/%s", id);
	nsk_proc_scan__parse_cgroup(path, &p);
	ck_assert_str_eq(p.container, id);
	ck_assert_str_eq(p.engine, "docker");

	nsk_proc_scan__parse_cgroup("/user.slice/user-0.slice/session-3.scope", &p);
	ck_assert_str_eq(p.container, "");
	ck_assert_str_eq(p.unit, "session-3.scope");

	/* not 64 hex digits: no container */
	nsk_proc_scan__parse_cgroup("/system.slice/docker-abc.scope", &p);
	ck_assert_str_eq(p.container, "");
	ck_assert_str_eq(p.unit, "docker-abc.scope");
}
END_TEST

START_TEST(prologue_bytes)
{
	static const unsigned char fp[] = { 0x55, 0x48, 0x89, 0xe5, 0x90 };
	static const unsigned char cet_fp[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5 };
	static const unsigned char nofp[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08 };
	/* what GCC -O2 emits: push %rbp; movslq %edi,%rdi; mov %rsp,%rbp */
	static const unsigned char sched[] = { 0x55, 0x48, 0x63, 0xff, 0x48, 0x89, 0xe5 };
	/* %rbp saved as a plain callee-saved register */
	static const unsigned char saved[] = { 0x55, 0x53, 0x48, 0x89, 0xfd, 0x48, 0x83, 0xec, 0x08 };

	ck_assert_int_eq(nsk_elf_probe__fp_prologue(fp, sizeof(fp)), 1);
	ck_assert_int_eq(nsk_elf_probe__fp_prologue(cet_fp, sizeof(cet_fp)), 1);
	ck_assert_int_eq(nsk_elf_probe__fp_prologue(nofp, sizeof(nofp)), 0);
	ck_assert_int_eq(nsk_elf_probe__fp_prologue(fp, 3), 0);
	ck_assert_int_eq(nsk_elf_probe__fp_prologue(sched, sizeof(sched)), 1);
	ck_assert_int_eq(nsk_elf_probe__fp_prologue(saved, sizeof(saved)), 0);
}
END_TEST

/* Twelve functions that call each other, so -O2 keeps real frames. */
static const char program[] =
	"#include <stdio.h>\n#include <stdlib.h>\n"
	"#define F(n, m) __attribute__((noinline)) long f##n(long x) { "
	"volatile long a[4] = { x, x + 1, x + 2, x + 3 }; return m(a[x & 3]) + a[1] * 3; }\n"
	"__attribute__((noinline)) long f0(long x) { volatile long y = x; return y * 7; }\n"
	"F(1, f0) F(2, f1) F(3, f2) F(4, f3) F(5, f4) F(6, f5) F(7, f6) F(8, f7)\n"
	"F(9, f8) F(10, f9) F(11, f10)\n"
	"int main(int argc, char **argv) { printf(\"%ld\\n\", f11(argc)); return argv[0][0] == 0; }\n";

static void build(const char *name, const char *flags, int strip)
{
	char cmd[3 * PATH_MAX + 256];

	snprintf(cmd, sizeof(cmd), "cc -O2 %s -fno-optimize-sibling-calls -o %s/%s %s/prog.c",
		 flags, dir, name, dir);
	if (strip)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " && strip -s %s/%s",
			 dir, name);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

static struct nsk_elf_info probe(const char *name)
{
	char path[PATH_MAX + 64];
	struct nsk_elf_info info;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(nsk_elf_probe__path(path, dir, &info), 0);
	return info;
}

START_TEST(elf_frame_pointers)
{
	struct nsk_elf_info i;

	build("fp_g", "-g -fno-omit-frame-pointer", 0);
	build("nofp", "-fomit-frame-pointer", 0);
	build("fp_strip", "-fno-omit-frame-pointer", 1);
	build("nofp_strip", "-fomit-frame-pointer", 1);

	i = probe("fp_g");
	ck_assert_int_eq(i.lang, NSK_ELF_NATIVE);
	ck_assert_int_eq(i.frame_pointers, 1);
	ck_assert_int_ge(i.fp_sampled, 12);
	ck_assert_int_eq(i.debug_info, 1);

	i = probe("nofp");
	ck_assert_int_eq(i.frame_pointers, 0);
	ck_assert_int_ge(i.fp_sampled, 12);
	ck_assert_int_eq(i.debug_info, 0);

	/* no symbols: the function starts come from .eh_frame_hdr */
	i = probe("fp_strip");
	ck_assert_int_eq(i.frame_pointers, 1);
	ck_assert_int_ge(i.fp_sampled, 12);
	i = probe("nofp_strip");
	ck_assert_int_eq(i.frame_pointers, 0);
	ck_assert_int_eq(i.debug_info, 0);
}
END_TEST

START_TEST(elf_debug_by_build_id)
{
	struct nsk_elf_info i;
	char cmd[4 * PATH_MAX], sub[PATH_MAX + 64];

	build("dbg_full", "-g -Wl,--build-id=sha1", 0);
	snprintf(cmd, sizeof(cmd), "cp %s/dbg_full %s/dbg_stripped && strip -s %s/dbg_stripped",
		 dir, dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	i = probe("dbg_stripped");
	ck_assert_int_eq(strlen(i.build_id), 40);
	ck_assert_int_eq(i.debug_info, 0);
	/* the debug file where a distribution puts it: ROOT/.build-id/xx/rest.debug */
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dir, i.build_id);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s/dbg_full %s/%s.debug", sub, dir, sub,
		 i.build_id + 2);
	ck_assert_int_eq(system(cmd), 0);
	i = probe("dbg_stripped");
	ck_assert_int_eq(i.debug_info, 1);
	/* a directory by that name is not a debug file */
	snprintf(cmd, sizeof(cmd), "rm %s/%s.debug && mkdir %s/%s.debug", sub, i.build_id + 2,
		 sub, i.build_id + 2);
	ck_assert_int_eq(system(cmd), 0);
	i = probe("dbg_stripped");
	ck_assert_int_eq(i.debug_info, 0);
}
END_TEST

START_TEST(elf_not_regular_or_not_elf)
{
	struct nsk_elf_info i;
	char path[PATH_MAX + 64];
	FILE *f;

	ck_assert_int_eq(nsk_elf_probe__path(dir, NULL, &i), -EINVAL);
	ck_assert_int_eq(nsk_elf_probe__path("/dev/null", NULL, &i), -EINVAL);
	snprintf(path, sizeof(path), "%s/text", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("#!/bin/sh\necho this is not ELF but is longer than a header........"
	      "...................................\n", f);
	fclose(f);
	ck_assert_int_eq(nsk_elf_probe__path(path, NULL, &i), -ENOEXEC);
	/* a header claiming 4000 sections past the end of the file */
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	{
		unsigned char h[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };

		h[18] = 62;		   /* x86-64 */
		h[40] = 0x00; h[41] = 0x10; /* e_shoff 4096 */
		h[58] = 64;		   /* e_shentsize */
		h[60] = 0xa0; h[61] = 0x0f; /* e_shnum 4000 */
		fwrite(h, 1, sizeof(h), f);
	}
	fclose(f);
	ck_assert_int_eq(nsk_elf_probe__path(path, NULL, &i), -EIO);
	ck_assert_int_eq(i.frame_pointers, -1);
}
END_TEST

/* The remote rows (ps --ssh): what nusku ps writes reads back; anything
 * else is refused whole, every prefix of a good answer too. */
START_TEST(remote_json)
{
	static const char good[] =
		"[\n{\"pid\":42,\"user\":\"ann\",\"uid\":1000,\"comm\":\"a\\u001bb\","
		"\"cmdline\":\"x \\\"y\\\"\",\"cpu_pct\":12.50,\"rss_bytes\":8192,\"threads\":3,"
		"\"cgroup\":\"/u.slice\",\"container\":null,\"container_engine\":null,\"unit\":null,"
		"\"runtime\":\"go\",\"frame_pointers\":true,\"debug_info\":null,\"can_profile\":false,"
		"\"missing\":[\"CAP_BPF\",\"CAP_PERFMON\"],\"sessions\":[],\"new_key\":{\"a\":[1,{}]}}\n]\n";
	static const char *const bad[] = {
		"", "{}", "[", "[{}]", "[{\"pid\":0}]", "[{\"pid\":1}] x",
		"[{\"pid\":1,\"comm\":\"a\nb\"}]", "[{\"pid\":1,\"comm\":\"\\q\"}]",
		"[{\"pid\":1,\"x\":[[[[[[[[[[[[1]]]]]]]]]]]]}]", "<html>", NULL,
	};
	struct nsk_ps_row *rows;
	int n;

	ck_assert_int_eq(nsk_ps__parse_json(good, strlen(good), &rows, &n), 0);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(rows[0].p.pid, 42);
	ck_assert_str_eq(rows[0].user, "ann");
	ck_assert_str_eq(rows[0].p.comm, "a\x1b" "b");
	ck_assert_str_eq(rows[0].p.cmdline, "x \"y\"");
	ck_assert_str_eq(rows[0].p.cgroup, "/u.slice");
	ck_assert_str_eq(rows[0].runtime, "go");
	ck_assert_int_eq(rows[0].frame_pointers, 1);
	ck_assert_int_eq(rows[0].debug_info, -1);
	ck_assert_int_eq(rows[0].can_profile, 0);
	ck_assert_str_eq(rows[0].missing, "CAP_BPF; CAP_PERFMON");
	ck_assert_uint_eq(rows[0].p.rss_bytes, 8192);
	ck_assert(rows[0].p.cpu_pct > 12.4 && rows[0].p.cpu_pct < 12.6);
	nsk_ps__free_rows(rows, n);

	for (int i = 0; bad[i]; i++) {
		ck_assert_msg(nsk_ps__parse_json(bad[i], strlen(bad[i]), &rows, &n) == -EBADMSG,
			      "accepted: %s", bad[i]);
		ck_assert_ptr_null(rows);
	}
	for (size_t len = 0; len + 2 < strlen(good); len++)
		ck_assert_msg(nsk_ps__parse_json(good, len, &rows, &n) == -EBADMSG,
			      "prefix of %zu accepted", len);
	ck_assert_int_eq(nsk_ps__parse_json("[]", 2, &rows, &n), 0);
	ck_assert_int_eq(n, 0);
	nsk_ps__free_rows(rows, n);
}
END_TEST

static void setup(void)
{
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/nusku-test-ps.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	{
		char path[PATH_MAX + 16];

		snprintf(path, sizeof(path), "%s/prog.c", dir);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs(program, f);
		fclose(f);
	}
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
	Suite *s = suite_create("ps");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, stat_parse);
	tcase_add_test(tc, cgroup_parse);
	tcase_add_test(tc, prologue_bytes);
	tcase_add_test(tc, elf_frame_pointers);
	tcase_add_test(tc, elf_debug_by_build_id);
	tcase_add_test(tc, elf_not_regular_or_not_elf);
	tcase_add_test(tc, remote_json);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
