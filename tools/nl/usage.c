// SPDX-License-Identifier: GPL-2.0
/*
 * Every command's options, usage and --help (opts.h), in one file: the
 * text that Documentation/man/ksft-perfmon-nl.rst and the bash completion
 * mirror. Each command's file parses the options by their val; main.c
 * has the list of commands.
 */

#include "nl-cmd.h"

/* ---- -j and -p of show and dump (main.c) -------------------------------- */

const struct kpm_opt json_opts[] = {
	{ .name = "json", .val = 'j', .help = "one JSON array instead of lines" },
	{ .name = "pretty", .val = 'p',
	  .help = "the JSON indented; implies --json" },
	{}
};

/* ---- record -------------------------------------------------------------- */

static const struct kpm_opt record_opts[] = {
	{ .name = "ifname", .val = 'i', .arg = "NAME",
	  .help = "sample netdev NAME (repeatable)" },
	{ .name = "ifindex", .val = 'x', .arg = "N",
	  .help = "sample the netdev of index N (repeatable)" },
	{ .name = "interval", .val = 'I', .arg = "MS",
	  .help = "sampling interval in ms, fractions allowed\n"
		  "(default 1000; the kernel takes 0.1 to 60000)" },
	{ .name = "dev-interval", .val = 'D', .arg = "MS", .long_only = true,
	  .help = "read the netdevs every MS ms, a multiple of the\n"
		  "interval (default: the interval); the CPUs are\n"
		  "read every interval all the same" },
	{ .name = "ring", .val = 'r', .arg = "N",
	  .help = "samples the kernel keeps between reads (default:\n"
		  "4 s of samples, 0.8 s with --spool, as a power\n"
		  "of two from 256 to 4096, and 4 MiB at most);\n"
		  "record reads every quarter of the ring's time,\n"
		  "at most 1 s (200 ms with --spool) apart" },
	{ .name = "host", .val = 'H', .arg = "LABEL",
	  .help = "the host label of every line, 1 to 255 bytes\n"
		  "of UTF-8 (default local)" },
	{ .name = "time-base", .val = 't', .arg = "NS",
	  .help = "CLOCK_MONOTONIC ns that time 0 stands for\n"
		  "(default: when recording starts)" },
	{ .name = "duration", .val = 'd', .arg = "S",
	  .help = "record for S seconds, fractions allowed" },
	{ .name = "kill-after", .val = 'k', .arg = "S",
	  .help = "when recording stops before COMMAND exits, give\n"
		  "it S seconds after the signal, then SIGKILL\n"
		  "(default 5)" },
	{ .name = "raw", .val = 'R', .long_only = true,
	  .help = "print the raw samples as dump does, one JSON\n"
		  "object a line, instead of the metric lines" },
	{ .name = "spool", .val = 'S', .arg = "FILE",
	  .help = "keep the samples read so far in FILE, written\n"
		  "out at each read, for replay after a record\n"
		  "that was killed" },
	{ .name = "metrics", .val = 'm', .arg = "LIST",
	  .help = "print these metrics too, comma-separated, or\n"
		  "all of them with \"all\" (repeatable): see\n"
		  "METRICS below" },
	{ .name = "queues", .val = 'Q', .arg = "N",
	  .help = "with nic.queue metrics, the queues of each\n"
		  "direction of a netdev they cover (default 16,\n"
		  "at most 64)" },
	{ .name = "ktap", .val = 'K', .long_only = true,
	  .help = "pass COMMAND's KTAP output through, with each\n"
		  "leaf case's metric lines before its result\n"
		  "line (see KTAP below)" },
	{ .name = "remote-type", .val = 'y', .arg = "TYPE", .long_only = true,
	  .help = "with --ktap: the remote endpoint, netns, ssh\n"
		  "or none (default: REMOTE_TYPE, or none)" },
	{ .name = "remote-args", .val = 'z', .arg = "ARGS", .long_only = true,
	  .help = "its netns or ssh host (default: REMOTE_ARGS)" },
	{ .name = "remote-ifname", .val = 'f', .arg = "NAME",
	  .long_only = true,
	  .help = "the remote's netdev to sample (default: none)" },
	{ .name = "remote-tool", .val = 'T', .arg = "PATH", .long_only = true,
	  .help = "this tool on the remote (default: ours in a\n"
		  "netns, " PROG " on the PATH over ssh)" },
	{ .name = "stream", .val = 'W', .long_only = true,
	  .help = "with --control: the samples to standard output\n"
		  "as they are read, for record --ktap on the other\n"
		  "host (see CONTROL below)" },
	{ .name = "control", .val = 'C', .long_only = true,
	  .help = "take the time base from standard input and stop\n"
		  "at its end (record on a remote host for link:\n"
		  "see CONTROL below)" },
	{}
};

const struct kpm_cmd record_cmd = {
	.usage = "usage: " PROG " record [OPTIONS] (--duration S | -- COMMAND [ARGS...])\n"
		 "       " PROG " record [OPTIONS] --ktap -- COMMAND [ARGS...]\n"
		 "       " PROG " record [OPTIONS] --control\n",
	.about = "\n"
		"Sample the CPUs and netdevs in the kernel while COMMAND runs, or for S\n"
		"seconds, then print the KTAP metric policy and observation lines.\n"
		"\n",
	.opts = record_opts,
	.more = "\n"
		"METRICS, besides the default set (cpu.time.usr, cpu.time.sys,\n"
		"cpu.time.sirq, cpu.utilization, and with netdevs nic.rx.dropped,\n"
		"nic.rx.missed_errors, nic.tx.dropped), which the kernel samples only\n"
		"when one of them is asked for. Per-cpu counts since the start:\n"
		"  cpu.softnet.processed  packets into the receive core (softnet_stat)\n"
		"  cpu.softnet.dropped    packets dropped on a full backlog\n"
		"  cpu.softnet.squeezed   NAPI rounds that ran out of budget or time\n"
		"  cpu.softnet.rps        RPS IPIs taken\n"
		"  cpu.softirq.net_rx     NET_RX softirqs run (/proc/softirqs)\n"
		"  cpu.softirq.net_tx     NET_TX softirqs run\n"
		"Counts of each queue of each netdev since the start, scalars labelled\n"
		"with its ifindex and queue, from drivers with queue statistics (the\n"
		"netdev family's qstats-get); \"all\" has them only with netdevs:\n"
		"  nic.queue.rx.packets, nic.queue.rx.bytes, nic.queue.rx.alloc_fail,\n"
		"  nic.queue.rx.hw_drops, nic.queue.tx.packets, nic.queue.tx.bytes,\n"
		"  nic.queue.tx.stop\n"
		"The CPU each queue's IRQ goes to, at the start and whenever the netdev's\n"
		"map of queues to NAPI instances, IRQs and CPUs changes, scalars\n"
		"labelled with its ifindex, queue, napi_id, irq and map_version, for\n"
		"drivers that link their queues to NAPI instances with an IRQ:\n"
		"  nic.queue.rx.cpu, nic.queue.tx.cpu\n"
		"\n"
		"COMMAND runs in a process group of its own. SIGINT, SIGTERM, SIGHUP and\n"
		"SIGQUIT end recording and are passed on to that group; a second one, or\n"
		"the group still running after --kill-after, sends SIGKILL. An error the\n"
		"kernel reports while recording stops COMMAND the same way (not with\n"
		"--ktap: see KTAP); what was recorded is still printed, with a\n"
		"diagnostic line. record exits only once COMMAND is reaped, and its\n"
		"output written: a write to a full pipe waits for the reader, whatever\n"
		"the signals. With KSFT_READY_FD set to an open descriptor, \"ready PID\"\n"
		"is written to it once the kernel samples (the kernel selftests'\n"
		"bkg(ksft_ready=True) convention); COMMAND does not see the variable.\n"
		"\n"
		"KTAP: with --ktap, COMMAND's standard output is a pipe, each program's\n"
		"written a line at a time (PYTHONUNBUFFERED=1, and stdbuf -oL where it is\n"
		"installed), and what comes is passed through as it comes, stamped with\n"
		"the time it came. Before each result line (\"ok N\" or \"not ok N\",\n"
		"after a \"# \" per depth) of a leaf case, one with no deeper result\n"
		"line, go the lines of the samples taken while it ran, at its depth: the\n"
		"policies of the metrics they have, then the observations, times in\n"
		"seconds from the case's start. The case ends where its result line\n"
		"starts, and starts at the latest of: a harness's \"#  RUN\" line at its\n"
		"depth, the result line before it at its depth, and the first line at\n"
		"its depth after a line less deep (a nested program's start; at depth\n"
		"0, COMMAND's start). A case shorter than the interval may have no\n"
		"sample, and then no lines. A drivers/net config in the environment\n"
		"(not net.config) is taken: NETIF is sampled unless --ifname or\n"
		"--ifindex is given, and the remote endpoint of REMOTE_TYPE (netns or\n"
		"ssh) and REMOTE_ARGS too, unless --remote-type none: our link runs\n"
		"record --control --stream there, which must record within 30 s, and a\n"
		"case's lines wait for its samples (10 s at most) with host \"remote\",\n"
		"in the order taken. The diagnostics of the whole recording follow\n"
		"COMMAND's output (on stderr if it ended within a line). The exit status\n"
		"is COMMAND's unless record itself fails (1): an error the kernel\n"
		"reports while sampling ends the sampling, not COMMAND.\n"
		"\n"
		"CONTROL: with --control, standard input is the line of the host that\n"
		"started record on this one (" PROG " link, ksft_perfmon.py). Before\n"
		"recording, record answers each line \"clock\" at once with \"clock NS\",\n"
		"this host's CLOCK_MONOTONIC, on standard output; a line \"base NS\" gives\n"
		"the time base on this host's clock and starts recording, and the end of\n"
		"standard input stops it, as SIGTERM would (--duration, if given, too);\n"
		"an end before the base is an error. With --stream, record writes its\n"
		"samples to standard output as it reads them, in frames of its own build's\n"
		"format, reads at once on a line \"sync\" and says when that read is out,\n"
		"and prints no metric lines.\n"
		"\n"
		"Exit status: 1 on an error (output that could not be written is one),\n"
		"2 on a usage error; else COMMAND's as a shell gives it (128+N when a\n"
		"signal N ended it) when not 0; else 3 when samples were lost; else 0.\n"
		"With --ktap, COMMAND's, unless record itself fails.\n",
	.usage_err = KPM_USAGE_ALL,
	.help_col = HELP_COL,
	.in_order = true,
};

/* ---- replay -------------------------------------------------------------- */

static const struct kpm_opt replay_opts[] = {
	{ .name = "raw", .val = 'R', .long_only = true,
	  .help = "print the raw samples as dump does" },
	{}
};

const struct kpm_cmd replay_cmd = {
	.usage = "usage: " PROG " replay [--raw] FILE\n",
	.about = "\n"
		"Print the lines of a recording from its spool (record --spool FILE) as\n"
		"record prints them, for example after a harness's timeout killed\n"
		"record: the samples it had read by then, up to a fifth of a second or\n"
		"the drain before the kill. A spool has no end: the kernel's counts of\n"
		"lost samples and missed periods are not in it, and gaps in the\n"
		"sequence numbers are reported as lost.\n"
		"\n",
	.opts = replay_opts,
	.more = "\n"
		"Exit status: 1 on an error, 2 on a usage error, 3 when samples were\n"
		"lost, else 0.\n",
	.usage_err = KPM_USAGE_ALL,
	.help_col = HELP_COL,
};

/* ---- show ---------------------------------------------------------------- */

static const struct kpm_opt show_opts[] = {
	{ .group = json_opts },
	{}
};

const struct kpm_cmd show_cmd = {
	.usage = "usage: " PROG " show [-j] [-p]\n",
	.about = "\nList the sessions this socket may see: its own, or all with CAP_NET_ADMIN.\n\n",
	.opts = show_opts,
	.usage_err = KPM_USAGE_LINE,
	.help_col = HELP_COL,
};

/* ---- dump ---------------------------------------------------------------- */

static const struct kpm_opt dump_opts[] = {
	{ .name = "id", .val = 'n', .arg = "N", .help = "the session" },
	{ .name = "cursor", .val = 'c', .arg = "SEQ",
	  .help = "the first sequence number (default 0)" },
	{ .group = json_opts },
	{}
};

const struct kpm_cmd dump_cmd = {
	.usage = "usage: " PROG " dump --id N [--cursor SEQ] [-j] [-p]\n",
	.about = "\n"
		"Print the samples of session N that are in its ring, from\n"
		"sequence number SEQ on, one JSON object a line (times in ns).\n\n",
	.opts = dump_opts,
	.usage_err = KPM_USAGE_HEAD,
	.help_col = HELP_COL,
};

/* ---- top ----------------------------------------------------------------- */

static const struct kpm_opt top_opts[] = {
	{ .name = "ifname", .val = 'i', .arg = "NAME",
	  .help = "show netdev NAME (repeatable)" },
	{ .name = "ifindex", .val = 'x', .arg = "N",
	  .help = "show the netdev of index N (repeatable)" },
	{ .name = "interval", .val = 'I', .arg = "MS",
	  .help = "sampling and refresh interval in ms (default 1000;\n"
		  "refreshes at most every 100 ms)" },
	{ .name = "count", .val = 'n', .arg = "N",
	  .help = "stop after N frames (default: never)" },
	{ .name = "queues", .val = 'Q', .arg = "N",
	  .help = "each netdev's queue statistics, of its first N\n"
		  "queues of each direction (1 to 64), as\n"
		  "netdev-genl's qstats-get reports them" },
	{}
};

const struct kpm_cmd top_cmd = {
	.usage = "usage: " PROG " top [OPTIONS]\n",
	.about = "\n"
		"A live view from the module: per-CPU utilization, per-CPU network\n"
		"counts (softnet's packets, drops, squeezed polls and RPS, and the NET_RX\n"
		"and NET_TX softirqs, a second) and NIC rates, refreshed each interval,\n"
		"like mpstat -P ALL 1. SIGINT or SIGTERM ends it (after a write to a\n"
		"full pipe, once its reader reads).\n"
		"\n",
	.opts = top_opts,
	.usage_err = KPM_USAGE_ALL,
	.help_col = HELP_COL,
};

/* ---- metric -------------------------------------------------------------- */

static const struct kpm_opt metric_opts[] = {
	{ .name = "time-base", .val = 't', .arg = "NS",
	  .help = "CLOCK_MONOTONIC ns that time 0 stands for" },
	{ .name = "host", .val = 'H', .arg = "LABEL",
	  .help = "the host label, 1 to 255 bytes of UTF-8\n"
		  "(default local)" },
	{}
};

const struct kpm_cmd metric_cmd = {
	.usage = "usage: " PROG " metric --time-base NS [--host LABEL] NAME VALUE\n",
	.about = "\n"
		"Print the ktap-metric-json line of a scalar observation made now, for a\n"
		"shell test's own metrics: time in seconds since --time-base\n"
		"(CLOCK_MONOTONIC ns), the JSON as Python's json.dumps writes it. NAME\n"
		"is 1 to 255 bytes of UTF-8. VALUE is a JSON number: a signed 64-bit\n"
		"integer without a fraction or exponent, a finite double with one (no\n"
		"hex, no spaces); put -- before a negative VALUE.\n"
		"\n",
	.opts = metric_opts,
	.usage_err = KPM_USAGE_ALL,
	.help_col = HELP_COL,
};

/* ---- link ---------------------------------------------------------------- */

static const struct kpm_opt link_opts[] = {
	{ .name = "time-base", .val = 't', .arg = "NS",
	  .help = "our CLOCK_MONOTONIC ns that time 0 stands for" },
	{ .name = "pass-input", .val = 'P', .long_only = true,
	  .help = "once record has its time base, pass our\n"
		  "standard input on to COMMAND's" },
	{}
};

const struct kpm_cmd link_cmd = {
	.usage = "usage: " PROG " link --time-base NS [--pass-input] -- COMMAND [ARGS...]\n",
	.about = "\n"
		"Run COMMAND, which runs \"" PROG " record --control\" on another host\n"
		"(\"ssh HOST " PROG " record --control --host remote ...\"), and talk\n"
		"to that record over COMMAND's standard input and output: the one\n"
		"connection, from the start to the stop.\n"
		"\n",
	.opts = link_opts,
	.more = "\n"
		"link asks for the other host's clock three times and takes the answer\n"
		"of the shortest round trip as of its middle, then gives record NS on\n"
		"that clock as its time base, and writes \"clock OFFSET TRIP\" (ns that\n"
		"clock is ahead of ours, and that round trip) to standard error. Lines\n"
		"COMMAND prints before an answer go to standard error; what it prints\n"
		"after, record's lines, to standard output, unchanged. SIGINT, SIGTERM,\n"
		"SIGHUP or SIGQUIT closes COMMAND's standard input, which stops the\n"
		"record; another one, or the first before the record has its time base,\n"
		"sends COMMAND SIGTERM. With --pass-input, what comes on link's standard\n"
		"input once the record has its time base goes to COMMAND's, and its end\n"
		"closes COMMAND's, as a stop does. link exits once COMMAND has, with its exit\n"
		"status (128+N when a signal N ended it), or 1 when it ended with 0\n"
		"before it answered a clock request.\n",
	.usage_err = KPM_USAGE_LINE,
	.help_col = HELP_COL,
	.in_order = true,
};

/* ---- clock --------------------------------------------------------------- */

#define CLOCK_USAGE_LINE "usage: " PROG " clock [-- COMMAND [ARGS...]]\n"

const char clock_usage_line[] = CLOCK_USAGE_LINE;

/* clock takes no option but --help, and a COMMAND after -- */
const char clock_usage[] =
CLOCK_USAGE_LINE
"\n"
"Print CLOCK_MONOTONIC in ns: what --time-base takes, on this host.\n"
"\n"
"With COMMAND, one that prints another host's clock (\"ssh HOST\n"
PROG " clock\"), print how many ns that clock is ahead of ours\n"
"instead. COMMAND runs three times; each answer is compared with our\n"
"clock when it arrives, and the largest difference wins: starting a\n"
"command takes far longer than its answer takes to come back.\n"
"\n"
"  -h, --help            this text\n";
