// SPDX-License-Identifier: GPL-2.0
/*
 * JSON output, byte-identical to Python's json.dumps(..., allow_nan=False,
 * separators=(",", ":"), sort_keys=True). No library writes floats the way
 * Python's repr() does (shortest digits that read back to the same double,
 * and its choice between fixed and exponent notation), so this is done by
 * hand; JSON is only ever written here, never parsed.
 */

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"

/*
 * printf() and strtod() follow the thread's LC_NUMERIC, whose decimal
 * point may be a comma once a program calls setlocale(). The functions
 * below that use them run in the C locale's, whatever the caller chose.
 */
static locale_t c_numeric(void)
{
	static locale_t loc;

	if (!loc)
		loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (!loc) {
		fputs("cannot create the C locale\n", stderr);
		abort();
	}
	return loc;
}

/*
 * Digits and decimal exponent of @v with @prec significant digits,
 * correctly rounded (glibc's printf is exact). Returns the number of digits.
 */
static int dec_digits(double v, int prec, char *digits, int *exp10)
{
	char buf[64];
	char *p, *e;
	int n = 0;

	snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
	e = strchr(buf, 'e');
	*exp10 = atoi(e + 1);
	for (p = buf; p < e; p++)
		if (*p >= '0' && *p <= '9')
			digits[n++] = *p;
	digits[n] = '\0';
	return n;
}

static bool digits_read_back(const char *digits, int exp10, double v)
{
	char buf[64], *o = buf;
	size_t n = strlen(digits);

	/* "D.DDDDe-X", without printf: this runs for every value written */
	*o++ = digits[0];
	*o++ = '.';
	memcpy(o, digits + 1, n - 1);
	o += n - 1;
	*o++ = 'e';
	if (exp10 < 0) {
		*o++ = '-';
		exp10 = -exp10;
	}
	if (exp10 >= 100)
		*o++ = '0' + exp10 / 100;
	if (exp10 >= 10)
		*o++ = '0' + exp10 / 10 % 10;
	*o++ = '0' + exp10 % 10;
	*o = '\0';
	return strtod(buf, NULL) == v;
}

/* Add @delta (+1 or -1) to the last digit of @digits, carrying over. */
static bool digits_step(char *digits, int n, int *exp10, int delta)
{
	int i;

	for (i = n - 1; i >= 0; i--) {
		int d = digits[i] - '0' + delta;

		if (d >= 0 && d <= 9) {
			digits[i] = '0' + d;
			return digits[0] != '0';
		}
		digits[i] = delta > 0 ? '0' : '9';
	}
	if (delta < 0)
		return false;
	/* 99..9 + 1 = 100..0: one more power of ten */
	digits[0] = '1';
	(*exp10)++;
	return true;
}

/*
 * The shortest digit string that reads back to @v, nearest to @v among
 * those of its length, as Python's repr() picks it (David Gay's dtoa in
 * mode 0). The correctly rounded string of each length is the nearest one;
 * where the rounding interval of @v is lopsided (at a power of two) a
 * neighbour of it may read back when it does not, so those are tried too.
 */
static int shortest_digits(double v, char *digits, int *exp10)
{
	char cand[32];
	int prec = 1, n, e, delta;

	/*
	 * Any decimal of up to 15 (DBL_DIG) significant digits reads back
	 * from the normal double nearest it, so when one reads back to @v,
	 * it is @v's 15-digit string without its trailing zeros, and no
	 * other of up to 15 digits does. Most values take this one step.
	 */
	if (fabs(v) >= DBL_MIN) {
		n = dec_digits(v, 15, digits, exp10);
		if (digits_read_back(digits, *exp10, v)) {
			while (n > 1 && digits[n - 1] == '0')
				digits[--n] = '\0';
			return n;
		}
		prec = 16;
	}
	for (; prec <= 17; prec++) {
		n = dec_digits(v, prec, digits, exp10);
		if (digits_read_back(digits, *exp10, v))
			return n;
		for (delta = -1; delta <= 1; delta += 2) {
			memcpy(cand, digits, n + 1);
			e = *exp10;
			if (digits_step(cand, n, &e, delta) &&
			    digits_read_back(cand, e, v)) {
				memcpy(digits, cand, n + 1);
				*exp10 = e;
				return n;
			}
		}
	}
	return dec_digits(v, 17, digits, exp10);
}

/* Python's repr() of 0.DIGITS * 10^(@exp10 + 1), @n digits, into @o. */
static void repr_digits(char *o, char *digits, int n, int exp10)
{
	int decpt, i;

	while (n > 1 && digits[n - 1] == '0')
		digits[--n] = '\0';
	decpt = exp10 + 1;	/* digits = 0.DIGITS * 10^decpt */

	if (decpt > -4 && decpt <= 16) {
		/* fixed notation, as float_repr_style 'short' chooses */
		if (decpt <= 0) {
			*o++ = '0';
			*o++ = '.';
			for (i = 0; i < -decpt; i++)
				*o++ = '0';
			memcpy(o, digits, n);
			o += n;
		} else {
			for (i = 0; i < decpt || i < n; i++) {
				if (i == decpt)
					*o++ = '.';
				*o++ = i < n ? digits[i] : '0';
			}
			if (n <= decpt) {
				*o++ = '.';
				*o++ = '0';
			}
		}
		*o = '\0';
	} else {
		*o++ = digits[0];
		if (n > 1) {
			*o++ = '.';
			memcpy(o, digits + 1, n - 1);
			o += n - 1;
		}
		sprintf(o, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
	}
}

bool py_float_repr(double v, char *buf, size_t len)
{
	char digits[32], *o = buf;
	locale_t old;
	int n, exp10;

	if (!isfinite(v))
		return false;
	if (len < 32)
		return false;
	if (signbit(v)) {
		*o++ = '-';
		v = -v;
	}
	if (v == 0) {
		strcpy(o, "0.0");
		return true;
	}

	old = uselocale(c_numeric());
	n = shortest_digits(v, digits, &exp10);
	uselocale(old);
	repr_digits(o, digits, n, exp10);
	return true;
}

static const unsigned long long pow10_u64[] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
	10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
	100000000000ULL, 1000000000000ULL, 10000000000000ULL,
	100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL,
	10000000000000000000ULL,
};

/* @v in decimal, ending at *@end (which it sets to '\0'); its start */
static char *u64_digits(unsigned long long v, char *end, char *start)
{
	*end = '\0';
	do {
		*--end = '0' + v % 10;
		v /= 10;
	} while (v && end > start);
	return end;
}

static const double pow10_neg[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
	1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/*
 * @mant * 10^@exp10 as repr writes it in fixed notation, which it chooses
 * from 1e-4 on (and below 1e16, which |@mant| < 10^15 keeps to): the
 * integer part, a point, and the fraction without its trailing zeros, at
 * least one digit of it (a zero is 0.0). Into @buf, of 32 bytes; its
 * length, or 0 for a value this does not cover.
 */
static size_t decimal_fixed(long long mant, int exp10, char *buf)
{
	unsigned long long m = mant < 0 ? -(unsigned long long)mant :
					   (unsigned long long)mant;
	unsigned long long frac;
	int k = -exp10, i;
	char tmp[24], *d, *o = buf;

	if (!m && exp10 <= 0 && exp10 >= -22) {
		memcpy(buf, "0.0", sizeof("0.0"));
		return 3;
	}
	if (exp10 > 0 || k > 19 || m >= 1000000000000000ULL ||
	    (k >= 4 && m < pow10_u64[k - 4]))
		return 0;
	if (mant < 0)
		*o++ = '-';
	/* ns and us, most values, by constants: a multiply, not a divide */
	if (k == 9) {
		frac = m % 1000000000ULL;
		m /= 1000000000ULL;
	} else if (k == 6) {
		frac = m % 1000000ULL;
		m /= 1000000ULL;
	} else {
		frac = m % pow10_u64[k];
		m /= pow10_u64[k];
	}
	d = u64_digits(m, tmp + sizeof(tmp) - 1, tmp);
	memcpy(o, d, tmp + sizeof(tmp) - 1 - d);
	o += tmp + sizeof(tmp) - 1 - d;
	*o++ = '.';
	if (!frac) {
		*o++ = '0';
	} else {
		/* whole ms and us of ns, as tick-based cputime mostly is */
		while (k >= 3 && !(frac % 1000)) {
			frac /= 1000;
			k -= 3;
		}
		/* its k digits, leading zeros and all, less trailing zeros */
		for (i = k; i > 0; i--, frac /= 10)
			o[i - 1] = '0' + frac % 10;
		o += k;
		while (o[-1] == '0')
			o--;
	}
	*o = '\0';
	return o - buf;
}

bool py_decimal_repr(long long mant, int exp10, char *buf, size_t len)
{
	unsigned long long m = mant < 0 ? -(unsigned long long)mant :
					   (unsigned long long)mant;
	char digits[32], tmp[32], *o = buf;
	int n = 0, i;

	if (exp10 > 0 || exp10 < -22 || len < 32 || m > 1ULL << 53)
		return false;
	/*
	 * Over 15 digits the nearest double may read back as another
	 * decimal; those take the long way, through the double itself
	 * (mant / 10^-exp10: both are exact doubles, and the quotient is
	 * correctly rounded, so it is the nearest double).
	 */
	if (m >= 1000000000000000ULL)
		return py_float_repr((double)mant / pow10_neg[-exp10], buf, len);
	/* a zero too */
	if (decimal_fixed(mant, exp10, buf))
		return true;
	if (mant < 0)
		*o++ = '-';
	do {
		tmp[n++] = '0' + m % 10;
		m /= 10;
	} while (m);
	for (i = 0; i < n; i++)
		digits[i] = tmp[n - 1 - i];
	digits[n] = '\0';
	repr_digits(o, digits, n, n - 1 + exp10);
	return true;
}

double py_round(double v, int ndigits)
{
	char buf[400];
	locale_t old;

	/* Python rounds the exact binary value half-even, as printf does */
	if (!isfinite(v))
		return v;
	old = uselocale(c_numeric());
	snprintf(buf, sizeof(buf), "%.*f", ndigits, v);
	v = strtod(buf, NULL);
	uselocale(old);
	return v;
}

/*
 * The repr of py_round(@v, @ndigits) into @buf, as jw_double() writes
 * it. Python rounds the exact binary value of @v half-even: with @v =
 * m * 2^e, that is m * 10^ndigits * 2^e rounded to an integer c, exact
 * in 128 bits, and the result is the double nearest c / 10^ndigits, whose
 * digits py_decimal_repr() writes. Values this does not cover (large,
 * or subnormal) take py_round() and py_float_repr().
 */
bool py_round_repr(double v, int ndigits, char *buf, size_t len)
{
	static const unsigned long long pow10[] = {
		1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
		100000000, 1000000000,
	};
	unsigned __int128 p, rem, half, q;
	unsigned long long c, bits;
	int e, shift;

	/* py_round() takes no negative ndigits: printf would not round */
	if (!isfinite(v) || ndigits < 0)
		return false;
	if (ndigits > 9)
		goto slow;
	/*
	 * |v| = m * 2^-shift, m the 53-bit significand, from v's bits: no
	 * frexp() and ldexp(), which a TCG guest runs in soft float
	 */
	memcpy(&bits, &v, sizeof(bits));
	/* the value of an idle CPU: a zero rounds to itself */
	if (!(bits << 1))
		goto zero;
	e = (bits >> 52) & 0x7ff;
	if (!e)		/* subnormal: the long way */
		goto slow;
	p = (bits & ((1ULL << 52) - 1)) | 1ULL << 52;
	shift = 1075 - e;
	if (shift <= 0 || shift > 96)
		goto slow;
	p *= pow10[ndigits];
	q = p >> shift;
	/* before it is cut to 64 bits: up to 2^82 */
	if (q >= 1ULL << 53)
		goto slow;
	c = (unsigned long long)q;
	rem = p & (((unsigned __int128)1 << shift) - 1);
	half = (unsigned __int128)1 << (shift - 1);
	if (rem > half || (rem == half && (c & 1)))
		c++;
	if (!c)
		goto zero;
	return py_decimal_repr(v < 0 ? -(long long)c : (long long)c, -ndigits,
			       buf, len);
zero:
	/* a zero of v's sign, as Python's round() gives */
	if (len < 32)
		return false;
	strcpy(buf, bits >> 63 ? "-0.0" : "0.0");
	return true;
slow:
	return py_float_repr(py_round(v, ndigits), buf, len);
}

int utf8_decode(const unsigned char *s, unsigned int *cp)
{
	int n, i;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	} else if ((s[0] & 0xe0) == 0xc0) {
		*cp = s[0] & 0x1f;
		n = 2;
	} else if ((s[0] & 0xf0) == 0xe0) {
		*cp = s[0] & 0x0f;
		n = 3;
	} else if ((s[0] & 0xf8) == 0xf0) {
		*cp = s[0] & 0x07;
		n = 4;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values past U+10FFFF */
	if ((n == 2 && *cp < 0x80) || (n == 3 && *cp < 0x800) ||
	    (n == 4 && *cp < 0x10000) || *cp > 0x10ffff ||
	    (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return n;
}

/* @cp as ensure_ascii=True writes it in a string, into @tmp */
static void escape_cp(unsigned int cp, char tmp[16])
{
	/* most characters stand for themselves */
	if (cp >= 0x20 && cp < 0x7f && cp != '"' && cp != '\\') {
		tmp[0] = cp;
		tmp[1] = '\0';
		return;
	}
	switch (cp) {
	case '"': strcpy(tmp, "\\\""); break;
	case '\\': strcpy(tmp, "\\\\"); break;
	case '\n': strcpy(tmp, "\\n"); break;
	case '\r': strcpy(tmp, "\\r"); break;
	case '\t': strcpy(tmp, "\\t"); break;
	case '\b': strcpy(tmp, "\\b"); break;
	case '\f': strcpy(tmp, "\\f"); break;
	default:
		if (cp < 0x10000)
			snprintf(tmp, 16, "\\u%04x", cp);
		else
			snprintf(tmp, 16, "\\u%04x\\u%04x",
				 0xd800 + ((cp - 0x10000) >> 10),
				 0xdc00 + ((cp - 0x10000) & 0x3ff));
	}
}

bool py_json_escape(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	while (*p) {
		char tmp[16];
		unsigned int cp;
		int n = utf8_decode(p, &cp);

		if (!n)
			return false;
		p += n;
		escape_cp(cp, tmp);
		if (o + strlen(tmp) + 1 > len)
			return false;
		strcpy(buf + o, tmp);
		o += strlen(tmp);
	}
	buf[o] = '\0';
	return true;
}

void jw_init(struct jw *w, FILE *f)
{
	memset(w, 0, offsetof(struct jw, buf));
	w->f = f;
}

void jw_set_indent(struct jw *w, int indent)
{
	w->indent = indent;
}

/* stdio keeps what it cannot write in ferror(), which out_check reads */
void jw_flush(struct jw *w)
{
	if (w->len)
		fwrite(w->buf, 1, w->len, w->f);
	w->len = 0;
}

static void jw_write(struct jw *w, const char *s, size_t n)
{
	if (n > sizeof(w->buf) - w->len) {
		jw_flush(w);
		if (n > sizeof(w->buf)) {
			fwrite(s, 1, n, w->f);
			return;
		}
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void jw_putc(struct jw *w, char c)
{
	if (w->len == sizeof(w->buf))
		jw_flush(w);
	w->buf[w->len++] = c;
}

static void jw_puts(struct jw *w, const char *s)
{
	jw_write(w, s, strlen(s));
}

/* A top-level value is written whole: what the caller writes next follows. */
static void jw_value_end(struct jw *w)
{
	if (!w->depth)
		jw_flush(w);
}

/* @s escaped as json.dumps() escapes it; false for bad UTF-8 */
static bool jw_escaped(struct jw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		const unsigned char *run = p;
		char tmp[16];
		unsigned int cp;
		int n;

		while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			p++;
		jw_write(w, (const char *)run, p - run);
		if (!*p)
			break;
		n = utf8_decode(p, &cp);
		if (!n)
			return false;
		p += n;
		escape_cp(cp, tmp);
		jw_puts(w, tmp);
	}
	return true;
}

bool py_json_fputs(const char *s, FILE *f)
{
	struct jw w;
	bool ok;

	jw_init(&w, f);
	ok = jw_escaped(&w, s);
	jw_flush(&w);
	return ok;
}

/* With an indent, a line break and the indent of @depth levels. */
static void jw_newline(struct jw *w, int depth)
{
	int i;

	if (!w->indent || depth < 0)
		return;
	jw_putc(w, '\n');
	for (i = 0; i < w->indent * depth; i++)
		jw_putc(w, ' ');
}

/*
 * The separator before a member: "," after the first, then, indented,
 * a line of its own (at depth 0, a top-level value, none).
 */
static void jw_member_prefix(struct jw *w)
{
	if (w->items[w->depth]++)
		jw_putc(w, ',');
	if (w->depth)
		jw_newline(w, w->depth);
}

/* The separator before a value: none after a key. */
static void jw_value_prefix(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	jw_member_prefix(w);
}

/* Empty containers stay "{}" and "[]", as json.dumps writes them. */
static void jw_close(struct jw *w, char c)
{
	if (w->items[w->depth])
		jw_newline(w, w->depth - 1);
	jw_putc(w, c);
	w->depth--;
	jw_value_end(w);
}

static void jw_open(struct jw *w, char c)
{
	jw_value_prefix(w);
	if (w->depth + 1 >= JW_MAX_DEPTH) {
		w->error = true;
		return;
	}
	jw_putc(w, c);
	w->depth++;
	w->items[w->depth] = 0;
	w->prev_key[w->depth] = NULL;
}

void jw_obj_start(struct jw *w)
{
	jw_open(w, '{');
}

void jw_resume(struct jw *w, const char *raw, size_t len, int members,
	       const char *last_key)
{
	if (w->depth || w->after_key || w->depth + 1 >= JW_MAX_DEPTH) {
		w->error = true;
		return;
	}
	jw_write(w, raw, len);
	w->depth++;
	w->items[w->depth] = members;
	w->prev_key[w->depth] = last_key;
	w->after_key = true;
}

void jw_arr_start(struct jw *w)
{
	jw_open(w, '[');
}

void jw_obj_end(struct jw *w)
{
	jw_close(w, '}');
}

void jw_arr_end(struct jw *w)
{
	jw_close(w, ']');
}

void jw_key(struct jw *w, const char *key)
{
	const char **prev = &w->prev_key[w->depth];

	/* sort_keys=True: keys out of order are a bug of the caller */
	if (*prev && strcmp(*prev, key) >= 0)
		w->error = true;
	*prev = key;

	jw_member_prefix(w);
	jw_putc(w, '"');
	if (!jw_escaped(w, key))
		w->error = true;
	jw_puts(w, w->indent ? "\": " : "\":");
	w->after_key = true;
}

/* any length: a string cut short or left out would be a wrong value */
void jw_str(struct jw *w, const char *s)
{
	jw_value_prefix(w);
	jw_putc(w, '"');
	if (!jw_escaped(w, s))
		w->error = true;
	jw_putc(w, '"');
	jw_value_end(w);
}

/* a number formatted into @buf, of @len bytes */
static void jw_number_len(struct jw *w, const char *buf, size_t len)
{
	jw_value_prefix(w);
	jw_write(w, buf, len);
	jw_value_end(w);
}

/* the same, a string; or null for one JSON cannot hold */
static void jw_number(struct jw *w, const char *buf, bool ok)
{
	if (!ok) {
		w->error = true;	/* allow_nan=False */
		buf = "null";
	}
	jw_number_len(w, buf, strlen(buf));
}

void jw_double(struct jw *w, double v)
{
	char buf[32];

	jw_number(w, buf, py_float_repr(v, buf, sizeof(buf)));
}

void jw_round(struct jw *w, double v, int ndigits)
{
	char buf[32];

	jw_number(w, buf, py_round_repr(v, ndigits, buf, sizeof(buf)));
}

void jw_decimal(struct jw *w, long long mant, int exp10)
{
	char buf[64];
	size_t len = decimal_fixed(mant, exp10, buf);

	/* the values of most lines, without a strlen() */
	if (len)
		jw_number_len(w, buf, len);
	else
		jw_number(w, buf, py_decimal_repr(mant, exp10, buf,
						  sizeof(buf)));
}

void jw_int(struct jw *w, long long v)
{
	char buf[24], *p;

	p = u64_digits(v < 0 ? -(unsigned long long)v : (unsigned long long)v,
		       buf + sizeof(buf) - 1, buf + 1);
	if (v < 0)
		*--p = '-';
	jw_number(w, p, true);
}

void jw_uint(struct jw *w, unsigned long long v)
{
	char buf[24], *p = u64_digits(v, buf + sizeof(buf) - 1, buf);

	jw_number_len(w, p, buf + sizeof(buf) - 1 - p);
}

void jw_bool(struct jw *w, bool v)
{
	jw_number(w, v ? "true" : "false", true);
}

void jw_null(struct jw *w)
{
	jw_number(w, "null", true);
}

static const char *out_prog;
static int out_status;

static void out_check(void)
{
	int err = 0;

	if (fflush(stdout))
		err = errno;
	else if (ferror(stdout))
		err = -1;
	/* a stdout closed by the caller is no error when nothing was written */
	if (fclose(stdout) && !err && errno != EBADF)
		err = errno;
	if (!err)
		return;
	fprintf(stderr, "%s: cannot write the output%s%s\n", out_prog,
		err > 0 ? ": " : "", err > 0 ? strerror(err) : "");
	_exit(out_status);
}

void out_check_at_exit(const char *prog, int status)
{
	out_prog = prog;
	out_status = status;
	atexit(out_check);
}
