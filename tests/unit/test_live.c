/* The pure parts of nusku live: the remote command line (quoting survives
 * any argument), the one-line explanations of a recorder's exit, and the
 * table layout that keeps numbers whole and cuts names to fit. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/live.h"

START_TEST(test_quote)
{
	char buf[128] = "";

	ck_assert_int_eq(nsk_live__shell_quote(buf, sizeof(buf), "a b"), 0);
	ck_assert_str_eq(buf, "'a b'");
	buf[0] = '\0';
	ck_assert_int_eq(nsk_live__shell_quote(buf, sizeof(buf), "it's $HOME"), 0);
	ck_assert_str_eq(buf, "'it'\\''s $HOME'");
	buf[0] = '\0';
	ck_assert_int_eq(nsk_live__shell_quote(buf, sizeof(buf), ""), 0);
	ck_assert_str_eq(buf, "''");
	ck_assert_int_eq(nsk_live__shell_quote(buf, 4, "long"), -ENOSPC);
}
END_TEST

START_TEST(test_ssh_argv)
{
	char *cmd[] = { "./app", "x y", "it's", NULL };
	char *sshopts[] = { "-p", "2222" };
	char *recargs[] = { "-e", "cpu" };
	struct nsk_live_opts o = {
		.ssh_host = "u@h", .ssh_opts = sshopts, .nssh_opts = 2,
		.record_args = recargs, .nrecord_args = 2, .cmd = cmd,
		.remote_nusku = "/opt/nusku",
	};
	char **v = nsk_live__ssh_argv(&o, 1);
	int n = 0;

	ck_assert_ptr_nonnull(v);
	while (v[n])
		n++;
	ck_assert_int_eq(n, 9);
	ck_assert_str_eq(v[0], "ssh");
	ck_assert_str_eq(v[1], "-o");
	ck_assert_str_eq(v[2], "BatchMode=yes");
	ck_assert_str_eq(v[3], "-T");
	ck_assert_str_eq(v[4], "-p");
	ck_assert_str_eq(v[5], "2222");
	ck_assert_str_eq(v[6], "--");
	ck_assert_str_eq(v[7], "u@h");
	ck_assert_str_eq(v[8], "'/opt/nusku' 'record' '-o' '-' '-e' 'cpu' '--' "
			       "'./app' 'x y' 'it'\\''s'");
	nsk_live__free_argv(v);

	o.cmd = NULL;
	o.pid = 42;
	o.remote_nusku = NULL;
	o.nrecord_args = 0;
	v = nsk_live__ssh_argv(&o, 0);
	ck_assert_str_eq(v[1], "-T");
	ck_assert_str_eq(v[6], "'nusku' 'record' '-o' '-' '-p' '42'");
	nsk_live__free_argv(v);
}
END_TEST

START_TEST(test_record_argv)
{
	char *cmd[] = { "./app", "--flag", NULL };
	struct nsk_live_opts o = { .cmd = cmd };
	char **v = nsk_live__record_argv(&o, "/proc/self/exe");
	const char *want[] = { "/proc/self/exe", "record", "-o", "-", "--",
			       "./app", "--flag", NULL };

	for (int i = 0; want[i]; i++)
		ck_assert_str_eq(v[i], want[i]);
	ck_assert_ptr_null(v[7]);
	nsk_live__free_argv(v);
}
END_TEST

START_TEST(test_explain)
{
	char m[256];

	nsk_live__explain_exit(m, sizeof(m), 1, 0, "", "h");
	ck_assert_str_eq(m, "");
	nsk_live__explain_exit(m, sizeof(m), 1, 127, "bash: nusku: command not found", "h");
	ck_assert_ptr_nonnull(strstr(m, "not installed"));
	ck_assert_ptr_nonnull(strstr(m, "--remote-nusku"));
	nsk_live__explain_exit(m, sizeof(m), 1, 255, "ssh: connect to host h port 22: Connection refused", "h");
	ck_assert_str_eq(m, "ssh h failed: ssh: connect to host h port 22: Connection refused");
	nsk_live__explain_exit(m, sizeof(m), 0, 1, "nusku: record: no such process 42", NULL);
	ck_assert_str_eq(m, "nusku record: record: no such process 42 (exit 1)");
	ck_assert_ptr_null(strchr(m, '\n'));
}
END_TEST

START_TEST(test_layout)
{
	static const struct nsk_live_col cols[] = {
		{ "PCT", NSK_LIVE_RIGHT, 6, 0 },
		{ "NAME", NSK_LIVE_LEFT, 8, 1 },
	};
	struct nsk_live_table t;
	const char *r1[] = { "60.0%", "a_function_with_a_very_long_name_indeed" };
	int w[2];
	char buf[128];

	nsk_live_table__init(&t, "T", cols, 2);
	ck_assert_int_eq(nsk_live_table__add(&t, r1), 0);
	nsk_live_table__layout(&t, 100, w);
	ck_assert_int_eq(w[0], 6);
	ck_assert_int_eq(w[1], (int)strlen(r1[1]));
	nsk_live_table__layout(&t, 30, w);
	ck_assert_int_eq(w[0], 6);
	ck_assert_int_le(w[0] + 1 + w[1], 30);
	ck_assert_int_ge(w[1], 8);
	nsk_live__fit(buf, r1[1], 10, NSK_LIVE_LEFT);
	ck_assert_str_eq(buf, "~me_indeed");
	nsk_live__fit(buf, "5", 4, NSK_LIVE_RIGHT);
	ck_assert_str_eq(buf, "   5");
	nsk_live_table__release(&t);
}
END_TEST

START_TEST(test_units)
{
	char b[32];

	nsk_live__fmt_ns(b, sizeof(b), 1500);
	ck_assert_str_eq(b, "1.5us");
	nsk_live__fmt_ns(b, sizeof(b), 2.5e9);
	ck_assert_str_eq(b, "2.50s");
	nsk_live__fmt_bytes(b, sizeof(b), 3 * 1024 * 1024);
	ck_assert_str_eq(b, "3.0M");
	nsk_live__fmt_bytes(b, sizeof(b), -2048);
	ck_assert_str_eq(b, "-2.0K");
	nsk_live__fmt_count(b, sizeof(b), 12345);
	ck_assert_str_eq(b, "12.3K");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("live");
	TCase *tc = tcase_create("pure");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_quote);
	tcase_add_test(tc, test_ssh_argv);
	tcase_add_test(tc, test_record_argv);
	tcase_add_test(tc, test_explain);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_units);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
