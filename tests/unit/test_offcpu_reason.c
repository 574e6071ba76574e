/* The off-CPU classification table (record/offcpu_reason.c) on kernel stacks
 * taken from this kernel (6.18) by tests/workloads/blocking, and a few that
 * test the priority order. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "record/offcpu_reason.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static enum nsk_offcpu_reason classify(const char *const *k, size_t n,
				       int sys, uint32_t state, int preempted,
				       const char **detail)
{
	struct nsk_offcpu_facts f = { k, n, sys, state, preempted };

	return nsk_offcpu__classify(&f, detail);
}

START_TEST(test_futex_is_lock)
{
	const char *k[] = { "__schedule", "schedule", "futex_do_wait",
			    "__futex_wait", "futex_wait", "do_futex",
			    "__x64_sys_futex", "do_syscall_64" };
	const char *d;

	ck_assert_int_eq(classify(k, N(k), 202, 1, 0, &d), NSK_OFFCPU_LOCK);
	ck_assert_str_eq(d, "futex_do_wait");
}
END_TEST

START_TEST(test_fsync_is_disk)
{
	const char *k[] = { "__schedule", "schedule", "io_schedule",
			    "folio_wait_bit_common", "folio_wait_writeback",
			    "__filemap_fdatawait_range", "file_write_and_wait_range",
			    "ext4_sync_file", "__x64_sys_fsync" };
	const char *d;

	ck_assert_int_eq(classify(k, N(k), 74, 2, 0, &d), NSK_OFFCPU_DISK);
	ck_assert_str_eq(d, "ext4_sync_file");
}
END_TEST

START_TEST(test_pipe_is_process)
{
	const char *k[] = { "__schedule", "schedule", "anon_pipe_read",
			    "vfs_read", "ksys_read", "do_syscall_64" };
	const char *d;

	ck_assert_int_eq(classify(k, N(k), 0, 1, 0, &d), NSK_OFFCPU_PROCESS);
	ck_assert_str_eq(d, "anon_pipe_read");
}
END_TEST

START_TEST(test_nanosleep_is_sleep)
{
	const char *k[] = { "__schedule", "schedule", "do_nanosleep",
			    "hrtimer_nanosleep", "common_nsleep",
			    "__x64_sys_clock_nanosleep" };
	const char *d;

	ck_assert_int_eq(classify(k, N(k), 230, 1, 0, &d), NSK_OFFCPU_SLEEP);
	ck_assert_str_eq(d, "do_nanosleep");
}
END_TEST

START_TEST(test_tcp_and_unix)
{
	const char *tcp[] = { "__schedule", "schedule", "schedule_timeout",
			      "wait_woken", "sk_wait_data", "tcp_recvmsg_locked",
			      "tcp_recvmsg", "inet_recvmsg" };
	const char *unx[] = { "__schedule", "schedule", "schedule_timeout",
			      "__skb_wait_for_more_packets",
			      "unix_dgram_recvmsg", "__sys_recvfrom" };
	const char *d;

	ck_assert_int_eq(classify(tcp, N(tcp), 45, 1, 0, &d), NSK_OFFCPU_NETWORK);
	ck_assert_str_eq(d, "sk_wait_data");
	/* unix sockets are another process, not the network */
	ck_assert_int_eq(classify(unx, N(unx), 45, 1, 0, &d), NSK_OFFCPU_PROCESS);
	ck_assert_str_eq(d, "unix_dgram_recvmsg");
}
END_TEST

START_TEST(test_epoll_is_poll)
{
	const char *k[] = { "__schedule", "schedule",
			    "schedule_hrtimeout_range_clock", "do_epoll_wait",
			    "__x64_sys_epoll_wait" };
	const char *d;

	ck_assert_int_eq(classify(k, N(k), 232, 1, 0, &d), NSK_OFFCPU_POLL);
	ck_assert_str_eq(d, "do_epoll_wait");
}
END_TEST

START_TEST(test_page_fault_wins_over_disk)
{
	const char *k[] = { "__schedule", "schedule", "io_schedule",
			    "folio_wait_bit_common", "filemap_fault",
			    "__do_fault", "handle_mm_fault",
			    "do_user_addr_fault", "exc_page_fault" };
	const char *d;

	ck_assert_int_eq(classify(k, N(k), -1, 2, 0, &d), NSK_OFFCPU_PAGE_FAULT);
	ck_assert_str_eq(d, "exc_page_fault");
}
END_TEST

START_TEST(test_preempted_is_runqueue)
{
	const char *k[] = { "__schedule", "schedule", "futex_do_wait" };
	const char *d;

	/* runnable wins over whatever the stack says */
	ck_assert_int_eq(classify(k, N(k), 202, 0, 1, &d), NSK_OFFCPU_RUNQUEUE);
}
END_TEST

START_TEST(test_syscall_fallback_and_other)
{
	const char *k[] = { "__schedule", "schedule", NULL, "some_driver_wait" };
	const char *d;

	/* no kernel stack: the syscall decides */
	ck_assert_int_eq(classify(NULL, 0, 61, 1, 0, &d), NSK_OFFCPU_PROCESS);
	ck_assert_str_eq(d, "wait4");
	/* nothing known: other, named by the first non-scheduler frame */
	ck_assert_int_eq(classify(k, N(k), 16, 1, 0, &d), NSK_OFFCPU_OTHER);
	ck_assert_str_eq(d, "some_driver_wait");
	ck_assert_int_eq(classify(NULL, 0, -1, 1, 0, &d), NSK_OFFCPU_OTHER);
	ck_assert_ptr_null(d);
}
END_TEST

START_TEST(test_names)
{
	for (int r = 0; r < NSK_OFFCPU_REASON_MAX; r++)
		ck_assert_int_eq(nsk_offcpu_reason__parse(nsk_offcpu_reason__name(r)), r);
	ck_assert_str_eq(nsk_offcpu_reason__name(NSK_OFFCPU_PAGE_FAULT), "page-fault");
	ck_assert_str_eq(nsk_offcpu_reason__name(999), "other");
	ck_assert_int_eq(nsk_offcpu_reason__parse("nope"), -EINVAL);
}
END_TEST

START_TEST(test_waker_kind)
{
	const char *timer[] = { "try_to_wake_up", "hrtimer_wakeup",
				"__hrtimer_run_queues", "hrtimer_interrupt",
				"__sysvec_apic_timer_interrupt",
				"sysvec_apic_timer_interrupt",
				"asm_sysvec_apic_timer_interrupt" };
	const char *irq[] = { "try_to_wake_up", "blk_mq_end_request",
			      "virtblk_done", "vring_interrupt",
			      "__handle_irq_event_percpu", "common_interrupt",
			      "asm_common_interrupt" };
	const char *task[] = { "try_to_wake_up", "wake_up_q", "futex_wake",
			       "do_futex", "__x64_sys_futex" };

	ck_assert_str_eq(nsk_offcpu__waker_kind(timer, N(timer)), "[timer]");
	ck_assert_str_eq(nsk_offcpu__waker_kind(irq, N(irq)), "[irq]");
	ck_assert_ptr_null(nsk_offcpu__waker_kind(task, N(task)));
	ck_assert_ptr_null(nsk_offcpu__waker_kind(NULL, 0));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("offcpu_reason");
	TCase *tc = tcase_create("classify");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_futex_is_lock);
	tcase_add_test(tc, test_fsync_is_disk);
	tcase_add_test(tc, test_pipe_is_process);
	tcase_add_test(tc, test_nanosleep_is_sleep);
	tcase_add_test(tc, test_tcp_and_unix);
	tcase_add_test(tc, test_epoll_is_poll);
	tcase_add_test(tc, test_page_fault_wins_over_disk);
	tcase_add_test(tc, test_preempted_is_runqueue);
	tcase_add_test(tc, test_syscall_fallback_and_other);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_waker_kind);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
