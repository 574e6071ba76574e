/* `nusku live` with no target: the picker, then `nusku live -p PID` with
 * the same options, as a child, and back to the list when it ends.  The
 * live view runs in its own process so the two full-screen programs never
 * share a curses screen, and a live view that fails leaves the list. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "controller/picker.h"

/* live's options that take a value (report/cmd_live.c). */
static int takes_value(const char *a)
{
	static const char *const opts[] = { "-o", "-i", "-n", "-p", "-e", "-F", "-d",
		"--output", "--interval", "--count", "--pid", "--top", "--window", "--view",
		"--record-opt", "--events", "--freq", "--duration", "--ssh", "--ssh-opt",
		"--remote-nusku" };

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strcmp(a, opts[i]))
			return 1;
	return 0;
}

/* 1 when the arguments name nothing to show: the picker's case. */
static int no_target(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--") || !strcmp(a, "-") || !strcmp(a, "-h") ||
		    !strcmp(a, "--help") || !strcmp(a, "--snapshot") ||
		    !strcmp(a, "--pid") || !strncmp(a, "--pid=", 6) ||
		    !strcmp(a, "-a") || !strcmp(a, "--all") ||
		    (a[0] == '-' && a[1] == 'p'))
			return 0;
		if (a[0] != '-')
			return 0; /* a recording (or a session's name) */
		if (takes_value(a))
			i++;
	}
	return 1;
}

/* The ssh settings of the arguments, for the list of the remote host. */
static int ssh_of(int argc, char **argv, struct nsk_ps_opts *o, char **words)
{
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--ssh"))
			o->ssh_host = argv[++i];
		else if (!strcmp(argv[i], "--remote-nusku"))
			o->remote_nusku = argv[++i];
		else if (!strcmp(argv[i], "--ssh-opt")) {
			/* "-p 2222 -i key" is four words, as for live itself */
			char *save = NULL, *w, *copy = strdup(argv[++i]);
			char **nv;

			if (!copy)
				return -ENOMEM;
			*words++ = copy; /* freed by the caller: the words point into it */
			for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
				nv = realloc(o->ssh_opts, (size_t)(o->nssh_opts + 1) * sizeof(*nv));
				if (!nv)
					return -ENOMEM;
				o->ssh_opts = nv;
				o->ssh_opts[o->nssh_opts++] = w;
			}
		} else if (takes_value(argv[i])) {
			i++;
		}
	}
	return 0;
}

/* Runs `nusku live ARGS... -p PID` and waits for it; its status. */
static int run_live(int argc, char **argv, int pid)
{
	char **v = calloc((size_t)argc + 4, sizeof(*v)), spid[16];
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	int n = 0, st = 0;
	pid_t child;

	if (!v)
		return -ENOMEM;
	snprintf(spid, sizeof(spid), "%d", pid);
	v[n++] = "nusku";
	for (int i = 0; i < argc; i++)
		v[n++] = argv[i];
	v[n++] = "-p";
	v[n++] = spid;
	/* Ctrl-C is the live view's to stop on; the list stays */
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	child = fork();
	if (child == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		execv("/proc/self/exe", v);
		fprintf(stderr, "nusku live: cannot run the live view: %s\n", strerror(errno));
		_exit(127);
	}
	if (child > 0)
		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	free(v);
	return child < 0 ? -errno : st;
}

int cmd_live_entry(int argc, char **argv)
{
	struct nsk_ps_opts o = { .sort = NSK_PS_SORT_CPU, .interval_ms = 200,
				 .proc_root = "/proc" };
	char *words[64] = { 0 }, filter[64] = "";
	int sort = NSK_PS_SORT_CPU, pid = 0, rc = 0, err, nopt = 0;

	if (!no_target(argc, argv) || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return cmd_live(argc, argv);
	for (int i = 1; i < argc; i++)
		nopt += !strcmp(argv[i], "--ssh-opt");
	if (nopt > 63) {
		fprintf(stderr, "nusku live: too many --ssh-opt\n");
		return 2;
	}
	err = ssh_of(argc, argv, &o, words);
	while (!err) {
		err = nsk_picker__run(&o, &sort, filter, sizeof(filter), &pid);
		if (err <= 0)
			break;
		err = run_live(argc, argv, pid);
		if (err > 0 && WIFEXITED(err) && WEXITSTATUS(err)) {
			/* its one-line error stays readable before the list returns */
			fprintf(stderr, "(press Enter for the list)");
			while ((rc = getchar()) != EOF && rc != '\n')
				;
			rc = 0;
		}
		err = err < 0 ? err : 0;
	}
	if (err < 0) {
		fprintf(stderr, "nusku live: %s\n", strerror(-err));
		rc = 1;
	}
	for (int i = 0; i < 64; i++)
		free(words[i]);
	free(o.ssh_opts);
	return rc;
}
