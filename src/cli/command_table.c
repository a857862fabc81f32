/*
 * command_table.c - listing and finding the commands of a command table.
 */
#include "command_table.h"

#include <string.h>

void cli_command_list(FILE *out, const cli_command *cmds, size_t n) {
  for (size_t i = 0; i < n; i++) fprintf(out, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
}

const cli_command *cli_command_find(const cli_command *cmds, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(name, cmds[i].name)) return &cmds[i];
  return NULL;
}
