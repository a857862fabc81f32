/*
 * command_table.h - a table of commands as `calibench` and `calibench calibrate`
 * dispatch them: the name, the line --help lists, and the entry point (which takes argv
 * starting at its own name and returns the exit status).
 */
#ifndef CALIBENCH_CLI_COMMAND_TABLE_H
#define CALIBENCH_CLI_COMMAND_TABLE_H

#include <stddef.h>
#include <stdio.h>

typedef struct cli_command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
} cli_command;

/* One "  NAME       SUMMARY" line per command, as the usage texts list them. */
void cli_command_list(FILE *out, const cli_command *cmds, size_t n);
/* The command called `name`, or NULL. */
const cli_command *cli_command_find(const cli_command *cmds, size_t n, const char *name);

#endif
