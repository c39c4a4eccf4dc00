// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The subcommands of `smbdirect`, one file each. Each takes its argv with
 * argv[0] = the subcommand's name and returns the exit code: 0 success,
 * 1 runtime error, 2 usage.
 */
#ifndef SMBDIRECT_TOOLS_COMMANDS_HPP
#define SMBDIRECT_TOOLS_COMMANDS_HPP

int sd_cmd_cat(int argc, char **argv);	  /* cat.cpp */
int sd_cmd_dev(int argc, char **argv);	  /* dev.cpp */
int sd_cmd_family(int argc, char **argv); /* family.cpp */
int sd_cmd_params(int argc, char **argv); /* params.cpp */
int sd_cmd_perf(int argc, char **argv);	  /* perf.cpp */
int sd_cmd_run(int argc, char **argv);	  /* run.cpp (libsmbdirect-preload.so) */
int sd_cmd_ss(int argc, char **argv);	  /* ss.cpp (generic netlink) */
int sd_cmd_stats(int argc, char **argv);  /* stats.cpp (generic netlink) */

#endif
