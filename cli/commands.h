/* The nusku subcommands: one file each, dispatched from the table in
 * cli/nusku.c.  Each returns the process exit status:
 *   0 success, 1 error (message printed once, on stderr),
 *   2 usage error or not implemented yet,
 *   and for `record` of a launched program, the program's own status. */
#ifndef NUSKU_CLI_COMMANDS_H
#define NUSKU_CLI_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_live(int argc, char **argv);
int cmd_live_entry(int argc, char **argv); /* controller/cmd_live_pick.c */
int cmd_info(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_sessions(int argc, char **argv);
int cmd_stop(int argc, char **argv);

/* "nusku: CMD: not implemented yet", exit status 2. */
int nsk_cli__not_implemented(const char *cmd);

#endif
