// SPDX-License-Identifier: GPL-2.0
/*
 * record's spool: the raw samples in a file as they are read, and back
 * into the lines record prints, by record once the session is gone and
 * by replay after a record that was killed. spool.h has the format.
 */

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nl-cmd.h"
#include "spool.h"

static const char spool_magic[8] = "KPMSPOL1";

/*
 * @path, created or truncated, or an unnamed temporary file: close-on-exec
 * either way. A symlink at @path is refused, for root in a sticky /tmp.
 */
FILE *spool_open(const char *path)
{
	FILE *f = NULL;
	int fd;

	if (!path) {
		f = tmpfile();
		if (f)
			fcntl(fileno(f), F_SETFD, FD_CLOEXEC);
	} else {
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW |
			  O_CLOEXEC, 0666);
		f = fd < 0 ? NULL : fdopen(fd, "w+");
	}
	if (!f)
		die("cannot create %s: %s", path ? path : "a temporary file",
		    strerror(errno));
	return f;
}

void spool_start(FILE *f, const struct session *s, uint32_t metrics,
		 const char *host, uint64_t time_base)
{
	struct spool_head h;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, spool_magic, sizeof(h.magic));
	h.sizes[0] = sizeof(struct session);
	h.sizes[1] = sizeof(struct cpu_stats);
	h.sizes[2] = sizeof(struct dev_stats);
	h.sizes[3] = sizeof(struct dev_qstats);
	h.sizes[4] = sizeof(struct queue_stats);
	h.host_len = strlen(host);
	h.metrics = metrics;
	h.time_base = time_base;
	h.s = *s;
	if (fwrite(&h, sizeof(h), 1, f) != 1 ||
	    fwrite(host, 1, h.host_len, f) != h.host_len || fflush(f))
		die("cannot write the spool: %s", strerror(errno));
}

/*
 * A spool's bytes are not trusted as a bool: a byte other than 0 or 1 is
 * no value of one, and loading it is undefined. The byte is read as a
 * byte: whether it is one.
 */
static bool is_bool(const bool *b)
{
	unsigned char c;

	memcpy(&c, b, sizeof(c));
	return c <= 1;
}

/* the first bool of a sample that was nonsense, for unspool() to name */
static const char *bad_bool;

#define CHECK_BOOL(p, f)	do {					\
	if (!is_bool(&(p)->f)) {					\
		bad_bool = #f;						\
		return false;						\
	}								\
} while (0)

/* the bools of sample @smp of session @s, as read from a spool */
static bool check_sample(const struct session *s, const struct sample *smp)
{
	uint32_t i;

	for (i = 0; i < s->cpus; i++) {
		CHECK_BOOL(&smp->cpu[i], present);
		CHECK_BOOL(&smp->cpu[i], online);
	}
	for (i = 0; i < smp->ndevs; i++) {
		CHECK_BOOL(&smp->dev[i], present);
		CHECK_BOOL(&smp->dev[i], gone);
	}
	for (i = 0; smp->q && i < s->ndevs; i++) {
		CHECK_BOOL(&smp->q[i], read);
		CHECK_BOOL(&smp->q[i], skipped);
		CHECK_BOOL(&smp->q[i], over_budget);
		CHECK_BOOL(&smp->q[i], mapped);
		CHECK_BOOL(&smp->q[i], map_skipped);
	}
	return true;
}

/*
 * The head of spool @f, its host label malloc()ed into *@host: a label
 * as --host takes it, 1 to LABEL_MAX bytes of UTF-8.
 */
void spool_read_head(FILE *f, const char *path,
		     struct spool_head *h, char **host)
{
	rewind(f);
	if (fread(h, sizeof(*h), 1, f) != 1 ||
	    memcmp(h->magic, spool_magic, sizeof(h->magic)))
		die("%s: not a spool of record --spool", path);
	if (h->sizes[0] != sizeof(struct session) ||
	    h->sizes[1] != sizeof(struct cpu_stats) ||
	    h->sizes[2] != sizeof(struct dev_stats) ||
	    h->sizes[3] != sizeof(struct dev_qstats) ||
	    h->sizes[4] != sizeof(struct queue_stats) ||
	    h->s.queues > KSFT_PERFMON_QUEUES_MAX ||
	    (h->metrics & M_QUEUE && !h->s.queues) ||
	    h->s.ndevs > KSFT_PERFMON_DEVS_MAX || !h->s.cpus ||
	    h->s.cpus > 65536 || !h->host_len || h->host_len > 1024 ||
	    h->metrics & ~(M_CPU_NET | M_QUEUE))
		die("%s: a spool of another build of " PROG, path);
	if (!is_bool(&h->s.cpu_net))
		die("cannot read the spool back: cpu_net is neither true nor false");
	if (h->metrics & M_CPU_NET && !h->s.cpu_net)
		die("%s: a spool of another build of " PROG, path);
	*host = calloc(1, h->host_len + 1);
	if (!*host || fread(*host, 1, h->host_len, f) != h->host_len)
		die("%s: the spool ends in its head", path);
	if (memchr(*host, '\0', h->host_len))
		die("the host label of the spool: a NUL byte");
	parse_label("the host label of the spool", *host);
}

static bool spool_io(void *p, size_t size, size_t n, FILE *f, bool write)
{
	return (write ? fwrite(p, size, n, f) : fread(p, size, n, f)) == n;
}

/* the queue statistics of @smp, of session @s, to or from spool @f */
static bool spool_queues(FILE *f, const struct session *s,
			 const struct sample *smp, bool write)
{
	uint32_t d, nq = s->queues;

	for (d = 0; smp->q && d < s->ndevs; d++) {
		struct dev_qstats *qs = &smp->q[d];

		if (!spool_io(qs, offsetof(struct dev_qstats, rx), 1, f, write) ||
		    !spool_io(qs->rx, sizeof(*qs->rx), nq, f, write) ||
		    !spool_io(qs->tx, sizeof(*qs->tx), nq, f, write))
			return false;
	}
	return true;
}

void spool_write(FILE *f, const struct session *s, const struct sample *smp)
{
	if (fwrite(smp, offsetof(struct sample, cpu), 1, f) != 1 ||
	    fwrite(&smp->ndevs, sizeof(smp->ndevs), 1, f) != 1 ||
	    fwrite(smp->dev, sizeof(*smp->dev), smp->ndevs, f) != smp->ndevs ||
	    fwrite(smp->cpu, sizeof(*smp->cpu), s->cpus, f) != s->cpus ||
	    !spool_queues(f, s, smp, true))
		die("cannot spool a sample: %s", strerror(errno));
}

void spool_sample(struct drain *d, const struct sample *smp)
{
	spool_write(d->arg, d->s, smp);
}

int spool_read(FILE *f, const struct session *s, struct sample *smp)
{
	size_t n = fread(smp, 1, offsetof(struct sample, cpu), f);

	if (!n && !ferror(f))
		return 0;
	if (n != offsetof(struct sample, cpu) ||
	    fread(&smp->ndevs, sizeof(smp->ndevs), 1, f) != 1 ||
	    smp->ndevs > KSFT_PERFMON_DEVS_MAX ||
	    fread(smp->dev, sizeof(*smp->dev), smp->ndevs, f) != smp->ndevs ||
	    fread(smp->cpu, sizeof(*smp->cpu), s->cpus, f) != s->cpus ||
	    !spool_queues(f, s, smp, false))
		return -1;
	return check_sample(s, smp) ? 1 : -2;
}

/*
 * The samples of spool @f, after its head, into metric lines, or with @r
 * NULL raw as dump's; the gaps in their sequence numbers are added to
 * *@gaps. A spool whose writer was killed may end in part of a sample:
 * with @partial, that part is left out and true returned; else it is an
 * error.
 */
static bool unspool(FILE *f, struct record *r, const struct session *s,
		    uint64_t *gaps, bool partial)
{
	bool have_prev = false;
	uint64_t prev = 0;
	struct sample smp;
	int n;

	if (sample_alloc(&smp, s->cpus) || sample_alloc_queues(&smp, s))
		die("out of memory");
	while ((n = spool_read(f, s, &smp))) {
		if (n == -2)
			die("cannot read the spool back: %s is neither true nor false",
			    bad_bool);
		if (n < 0) {
			/* cut short, not cut wrong: at the end of the file */
			if (!partial || ferror(f) || !feof(f))
				die("cannot read a spooled sample back");
			sample_free(&smp);
			return true;
		}
		/*
		 * A spool of other sizes than its head says reads as
		 * nonsense. The gap is from the sample before (from 0 for
		 * the first), so a sequence number of 2^64 - 1 does not wrap
		 * the count.
		 */
		if (have_prev && smp.seq <= prev)
			die("cannot read the spool back: seq %llu after %llu, which does not increase",
			    (unsigned long long)smp.seq,
			    (unsigned long long)prev);
		*gaps += have_prev ? smp.seq - prev - 1 : smp.seq;
		prev = smp.seq;
		have_prev = true;
		if (r)
			record_add(r, &smp, s->ndevs);
		else
			sample_json_line(stdout, s, &smp);
	}
	if (ferror(f))
		die("cannot read a spooled sample back");
	sample_free(&smp);
	return false;
}

/*
 * the policy lines record prints before the observations of session @s,
 * of the default metrics and the @optional ones
 */
static void print_policies(const struct session *s, uint32_t optional)
{
	uint32_t metrics = M_DEFAULT | optional;
	int m;

	/* the netdevs' metrics only with netdevs */
	for (m = 0; m < M_NR; m++)
		if (metrics & M_BIT(m) &&
		    (((m < M_NIC_RX_DROPPED || m > M_NIC_TX_DROPPED) &&
		      m < M_QUEUE_RX_PACKETS) || s->ndevs))
			if (print_policy(stdout, m))
				die("internal error: a policy line");
}

/*
 * The lines of the samples in @f, as record prints them: with the
 * policies and through @r, or --raw (@raw) as JSON lines, @r then empty.
 * @partial as unspool() takes it; returns unspool()'s.
 */
bool print_spool(FILE *f, const char *host, uint64_t time_base,
		 const struct session *s, uint32_t metrics, bool raw,
		 bool partial, struct record *r, uint64_t *gaps)
{
	if (raw) {
		memset(r, 0, sizeof(*r));
		return unspool(f, NULL, s, gaps, partial);
	}
	print_policies(s, metrics);
	if (record_init(r, metrics, host, time_base, s->cpus, stdout) ||
	    record_init_queues(r, s))
		die("out of memory");
	return unspool(f, r, s, gaps, partial);
}

/* after the last sample: the decreases @r saw, and the output flushed */
void print_end(struct record *r)
{
	if (record_print_decreases(stdout, r))
		die("cannot write the output");
	fflush(stdout);
	if (r->bad_output)
		die("a value could not be written as JSON (NaN or infinity)");
}
