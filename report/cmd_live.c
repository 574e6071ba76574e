/* nusku live: filled in by its issue; until then it says so and exits 2. */
#include "cli/commands.h"

int cmd_live(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return nsk_cli__not_implemented("live");
}
