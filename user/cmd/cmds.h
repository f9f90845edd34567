/* SPDX-License-Identifier: GPL-2.0 */
/* jitrace's commands; each takes its own argv (argv[0] is the command's name). */
#ifndef JT_CMDS_H
#define JT_CMDS_H

int jt_cmd_record(int argc, char **argv);
int jt_cmd_dump(int argc, char **argv);
int jt_cmd_report(int argc, char **argv);
int jt_cmd_flamegraph(int argc, char **argv);
int jt_cmd_top(int argc, char **argv);
int jt_cmd_export(int argc, char **argv);

#endif
