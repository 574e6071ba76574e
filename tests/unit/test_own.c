/* Which kernel frames are Nusku's own probe machinery (record/own.c), on
 * frame names taken from this kernel (6.18) by recordings of alloc_churn
 * with the allocator uprobes, and the program-range lookup of an empty
 * table.  The BPF half (our programs by fd and JIT image) needs root and
 * is covered by tests/e2e/own_cost.sh. */
#include <check.h>
#include <stdlib.h>

#include "record/own.h"

START_TEST(test_uprobe_entry_and_return)
{
	/* a uprobe hit: int3 from user space, the handlers on the way back */
	const char *hit[] = { "uprobe_notify_resume", "handler_chain",
			      "uprobe_multi_link_handler", "uprobe_prog_run",
			      "find_active_uprobe_rcu", "handle_swbp" };
	/* a uretprobe: the trampoline's syscall */
	const char *ret[] = { "__x64_sys_uretprobe", "uprobe_handle_trampoline",
			      "uprobe_multi_link_ret_handler",
			      "uretprobe_dispatcher" };

	for (size_t i = 0; i < sizeof(hit) / sizeof(*hit); i++)
		ck_assert_msg(nsk_own__machinery(hit[i], 0), "%s", hit[i]);
	for (size_t i = 0; i < sizeof(ret) / sizeof(*ret); i++)
		ck_assert_msg(nsk_own__machinery(ret[i], 0), "%s", ret[i]);
}
END_TEST

START_TEST(test_tracepoint_dispatch)
{
	ck_assert(nsk_own__machinery("bpf_trace_run2", 0));
	ck_assert(nsk_own__machinery("__bpf_trace_sys_exit", 0));
	ck_assert(nsk_own__machinery("__bpf_trace_sched_switch", 0));
	ck_assert(nsk_own__machinery("trace_call_bpf", 0));
	ck_assert(nsk_own__machinery("bpf_overflow_handler", 0));
	ck_assert(nsk_own__machinery("bpf_task_work_callback", 0));
	/* a return address in the padding before it (CONFIG_CALL_PADDING) */
	ck_assert(nsk_own__machinery("__pfx___bpf_trace_sys_exit", 0));
	ck_assert(!nsk_own__machinery("__pfx_ksys_write", 0));
}
END_TEST

START_TEST(test_int3_only_from_user_space)
{
	/* int3 as the kernel's entry from user space is a uprobe breakpoint;
	 * inside the kernel (text patching) it is not ours */
	ck_assert(nsk_own__machinery("asm_exc_int3", 1));
	ck_assert(!nsk_own__machinery("asm_exc_int3", 0));
}
END_TEST

START_TEST(test_program_work_is_not_ours)
{
	/* what the program itself makes the kernel do */
	const char *k[] = { "irqentry_exit_to_user_mode", "do_syscall_64",
			    "entry_SYSCALL_64_after_hwframe", "asm_exc_page_fault",
			    "handle_mm_fault", "ksys_write", "bpf_get_stackid",
			    "perf_callchain_user", "__schedule", "bpf",
			    "bpf_prog_421ddc7c511a9fa6_alloc_exit" };

	/* bpf_get_stackid and a bpf_prog_ frame are ours only through the
	 * machinery around them or our programs' JIT ranges: by name alone
	 * another tool's program is not */
	for (size_t i = 0; i < sizeof(k) / sizeof(*k); i++)
		ck_assert_msg(!nsk_own__machinery(k[i], 1), "%s", k[i]);
}
END_TEST

START_TEST(test_no_programs)
{
	ck_assert(!nsk_own__prog_at(NULL, 0xffffffffc0000000ull));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("own");
	TCase *tc = tcase_create("machinery");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_uprobe_entry_and_return);
	tcase_add_test(tc, test_tracepoint_dispatch);
	tcase_add_test(tc, test_int3_only_from_user_space);
	tcase_add_test(tc, test_program_work_is_not_ours);
	tcase_add_test(tc, test_no_programs);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
