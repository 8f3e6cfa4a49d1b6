/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record's child supervisor: COMMAND of "record -- COMMAND" started in a
 * process group of its own, the stop signals record takes and passes on
 * to that group, and the group stopped and COMMAND reaped.
 */
#ifndef KPM_NL_CHILD_H
#define KPM_NL_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * COMMAND of record -- COMMAND. It runs in a process group of its own,
 * which a stop signals as a whole, so that what a shell COMMAND started
 * stops with it. On a stop, COMMAND is reaped only once its whole group
 * is gone: until then its pid, and so the group's id, cannot be reused.
 */
struct command {
	pid_t pid;		/* and process group; 0 when there is none */
	bool exited;		/* seen by waitid(WNOWAIT), perhaps not reaped */
	bool reaped;
	int status;		/* waitpid()'s, once reaped */
};

/* the last stop signal record got, and how many it got */
extern volatile sig_atomic_t stop_signal;
extern volatile sig_atomic_t stop_count;
/* set by SIGCHLD; for its reader to clear */
extern volatile sig_atomic_t child_exited;
/* the COMMAND that die() stops, while record runs one */
extern struct command *running_command;
/* --kill-after: how long COMMAND has to stop before SIGKILL */
extern uint64_t kill_after_ns;

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT: the stop signals */
void stop_signal_set(sigset_t *set);
/* the stop signals set stop_signal; SIGCHLD wakes, and sets child_exited */
void install_handlers(void);
/*
 * /dev/null for a closed 0, 1 or 2, so that a pipe made for a child does
 * not take its place and lose it at exec
 */
void hold_std_fds(void);
void default_handlers(void);
pid_t start_command(char **argv, int out);
bool command_reap(struct command *c, int flags);
void command_stop(struct command *c, int sig, uint64_t grace_ns,
		  int signals);

#endif
