/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A JSON writer whose output is byte-identical to Python's
 * json.dumps(obj, allow_nan=False, separators=(",", ":"), sort_keys=True).
 */
#ifndef KPM_JSON_H
#define KPM_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 8
#define JW_BUF_SIZE 4096

/*
 * What is written goes to @buf, and on to @f once @buf fills up or a
 * top-level value ends: a line of many numbers costs one fwrite(), not
 * one call of stdio a number and a separator.
 */
struct jw {
	FILE *f;
	int depth;
	int items[JW_MAX_DEPTH];		/* members written at each depth */
	const char *prev_key[JW_MAX_DEPTH];	/* to check sort order */
	bool after_key;
	bool error;		/* NaN, infinity, bad UTF-8 or misuse */
	int indent;		/* 0: compact; else as json.dumps(indent=N) */
	size_t len;		/* bytes in @buf */
	char buf[JW_BUF_SIZE];
};

void jw_init(struct jw *w, FILE *f);
/* what is buffered, on to the FILE: a top-level value's end does it too */
void jw_flush(struct jw *w);
/* json.dumps(obj, indent=@indent, sort_keys=True) from here on */
void jw_set_indent(struct jw *w, int indent);
void jw_obj_start(struct jw *w);
/*
 * At the top level: @raw, which jw_obj_start() and @members calls of
 * jw_key(), the last with @last_key, wrote (and whatever preceded them on
 * their FILE), as if those calls wrote it again. Many lines that begin
 * alike write that beginning once.
 */
void jw_resume(struct jw *w, const char *raw, size_t len, int members,
	       const char *last_key);
void jw_obj_end(struct jw *w);
void jw_arr_start(struct jw *w);
void jw_arr_end(struct jw *w);
/* keys must come in code point order, as sort_keys=True puts them */
void jw_key(struct jw *w, const char *key);
void jw_str(struct jw *w, const char *s);
void jw_double(struct jw *w, double v);
/* jw_double(w, py_round(v, ndigits)), faster for 0 <= @ndigits <= 9 */
void jw_round(struct jw *w, double v, int ndigits);
/*
 * The double nearest @mant * 10^@exp10 (-22 <= @exp10 <= 0, |@mant| <=
 * 2^53), as jw_double() writes it, without the cost of finding its
 * shortest digits: up to 15 digits they are @mant's own.
 */
void jw_decimal(struct jw *w, long long mant, int exp10);
void jw_int(struct jw *w, long long v);
void jw_uint(struct jw *w, unsigned long long v);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);

/* repr(float) of Python: shortest round-trip digits; false for NaN/inf */
bool py_float_repr(double v, char *buf, size_t len);
/* repr() of the double nearest @mant * 10^@exp10 (as jw_decimal()) */
bool py_decimal_repr(long long mant, int exp10, char *buf, size_t len);
/* Python's round(v, ndigits) for 0 <= ndigits <= 17 */
double py_round(double v, int ndigits);
/*
 * py_float_repr(py_round(v, ndigits)) into @buf, of 32 bytes at least:
 * exactly, without printf or strtod, where the rounded value has up to 53
 * bits; false for NaN, infinity and a negative @ndigits (for which
 * jw_round() writes null and sets the error).
 */
bool py_round_repr(double v, int ndigits, char *buf, size_t len);
/* Decode one UTF-8 sequence; returns its length, 0 when invalid. */
int utf8_decode(const unsigned char *s, unsigned int *cp);
/* JSON string body of UTF-8 @s as ensure_ascii=True escapes it */
bool py_json_escape(const char *s, char *buf, size_t len);
/* the same, of any length, to @f; false when @s is not UTF-8 */
bool py_json_fputs(const char *s, FILE *f);

/*
 * Output that could not be written is an error, whichever way the program
 * exits: at exit, flush and close stdout, and if that fails, or a write
 * failed before, say so as @prog and exit with @status. A full disk or a
 * closed pipe must not leave a CI step green with its metrics missing.
 */
void out_check_at_exit(const char *prog, int status);

#endif
