// SPDX-License-Identifier: GPL-2.0
/*
 * What the files of ksft-perfmon-report share to hold a run: memory that
 * aborts when there is none, arrays that grow by doubling, an index of
 * strings (report.h), and names escaped for a terminal.
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"

void *rp_xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		abort();
	p = realloc(p, n * size > 0 ? n * size : 1);
	if (!p)
		abort();
	return p;
}

char *rp_xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		abort();
	return d;
}

FILE *rp_xmemstream(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	if (!f)
		abort();
	return f;
}

/* grows *@arr of *@cap elements of @size to hold one more than @nr */
void *rp_grow(void *arr, size_t nr, size_t *cap, size_t size)
{
	if (nr < *cap)
		return arr;
	*cap = *cap ? *cap * 2 : 8;
	return rp_xrealloc(arr, *cap, size);
}

/* FNV-1a */
static size_t hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

size_t rp_hash_get(const struct rp_hash *h, const char *key)
{
	size_t i;

	if (!h->cap)
		return RP_NONE;
	for (i = hash_str(key) & (h->cap - 1); h->slot[i].key;
	     i = (i + 1) & (h->cap - 1))
		if (!strcmp(h->slot[i].key, key))
			return h->slot[i].idx;
	return RP_NONE;
}

static void hash_insert(struct rp_hash_slot *slot, size_t cap,
			const char *key, size_t idx)
{
	size_t i = hash_str(key) & (cap - 1);

	while (slot[i].key)
		i = (i + 1) & (cap - 1);
	slot[i].key = key;
	slot[i].idx = idx;
}

void rp_hash_put(struct rp_hash *h, const char *key, size_t idx)
{
	struct rp_hash_slot *slot;
	size_t cap, i;

	if (2 * (h->nr + 1) > h->cap) {
		cap = h->cap ? 2 * h->cap : 8;
		slot = calloc(cap, sizeof(*slot));
		if (!slot)
			abort();
		for (i = 0; i < h->cap; i++)
			if (h->slot[i].key)
				hash_insert(slot, cap, h->slot[i].key,
					    h->slot[i].idx);
		free(h->slot);
		h->slot = slot;
		h->cap = cap;
	}
	hash_insert(h->slot, h->cap, key, idx);
	h->nr++;
}

void rp_hash_free(struct rp_hash *h)
{
	free(h->slot);
	memset(h, 0, sizeof(*h));
}

bool rp_esc_cp(unsigned int cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp < 0xa0) ||
	       cp == 0x061c ||				/* ALM */
	       cp == 0x200e || cp == 0x200f ||		/* LRM, RLM */
	       (cp >= 0x2028 && cp <= 0x202e) ||	/* lines, embeddings */
	       (cp >= 0x2066 && cp <= 0x2069);		/* isolates */
}

const char *rp_esc(const char *s)
{
	static char *ring[RP_ESC_RING];
	static unsigned int next;
	const unsigned char *p = (const unsigned char *)s;
	char **buf = &ring[next++ % RP_ESC_RING];
	unsigned int cp;
	size_t len;
	FILE *f;
	int n;

	free(*buf);
	f = rp_xmemstream(buf, &len);
	for (; *p; p += n) {
		n = utf8_decode(p, &cp);
		if (!n) {
			fprintf(f, "\\x%02x", *p);
			n = 1;
		} else if (rp_esc_cp(cp)) {
			fprintf(f, "\\u%04x", cp);
		} else {
			fwrite(p, 1, n, f);
		}
	}
	if (fclose(f))
		abort();
	return *buf;
}

const char *rp_fmt(double v, char *buf, size_t len)
{
	static const char prefix[] = "kMGTPE";
	double a = fabs(v), m = v;
	size_t i = 0;

	/* from 9999.5 on, %.4g would write 1e+04 */
	if (!isfinite(v) || a < 9999.5) {
		snprintf(buf, len, "%.4g", v == 0 ? 0 : v);
		return buf;
	}
	/* from 999.5 on, %.3g would write 1e+03 */
	for (; a >= 999.5 && i < sizeof(prefix) - 1; i++) {
		a /= 1000;
		m /= 1000;
	}
	if (a >= 999.5)
		snprintf(buf, len, "%.3g", v);
	else
		snprintf(buf, len, "%.3g%c", m, prefix[i - 1]);
	return buf;
}
