// SPDX-License-Identifier: GPL-2.0
/*
 * Driver for json_repr_test.py: writes what tools/lib/json.c makes of each
 * input line, so that Python can compare it with its own json.dumps().
 *   f VALUE        py_float_repr()
 *   r VALUE N      py_round() then py_float_repr()
 *   R VALUE N      py_round_repr()
 *   s HEX          py_json_escape() of the bytes HEX encodes
 *   D MANT EXP     py_decimal_repr()
 *   T NS           the "time" of obs_line_start() for NS ns after its base
 *   j INDENT TOKEN...  a document written with the jw_*() calls the tokens
 *                  name ({ } [ ] k:KEY i:INT d:DOUBLE n t f), indented
 *                  by INDENT (0: compact), then a line "."
 *
 * With KPM_LC_NUMERIC set, the driver first sets LC_NUMERIC to it, as a
 * program of the caller's might, and refuses to go on unless its decimal
 * point is not '.'; it reads its own input in the C locale.
 */

#define _GNU_SOURCE
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "ktap.h"
#include "samples.h"

static void write_doc(char *tokens)
{
	char *tok, *save;
	struct jw w;

	jw_init(&w, stdout);
	jw_set_indent(&w, (int)strtol(strtok_r(tokens, " ", &save), NULL, 10));
	while ((tok = strtok_r(NULL, " ", &save))) {
		switch (tok[0]) {
		case '{':
			jw_obj_start(&w);
			break;
		case '}':
			jw_obj_end(&w);
			break;
		case '[':
			jw_arr_start(&w);
			break;
		case ']':
			jw_arr_end(&w);
			break;
		case 'k':
			jw_key(&w, tok + 2);
			break;
		case 'i':
			jw_int(&w, strtoll(tok + 2, NULL, 10));
			break;
		case 'd':
			jw_double(&w, strtod(tok + 2, NULL));
			break;
		case 'n':
			jw_null(&w);
			break;
		default:
			jw_bool(&w, tok[0] == 't');
			break;
		}
	}
	jw_flush(&w);
	puts(w.error ? "\nERROR\n." : "\n.");
}

int main(void)
{
	locale_t c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	const char *lc = getenv("KPM_LC_NUMERIC");
	char line[4096], out[8192], str[2048];
	unsigned int i, byte;
	double v;
	int n;

	if (lc && (!setlocale(LC_NUMERIC, lc) ||
		   !strcmp(localeconv()->decimal_point, "."))) {
		fprintf(stderr, "LC_NUMERIC %s: not set, or its decimal point is '.'\n",
			lc);
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == 'f' || line[0] == 'r') {
			v = strtod_l(line + 2, NULL, c_loc);
			if (line[0] == 'r' && sscanf(line + 2, "%*s %d", &n) == 1)
				v = py_round(v, n);
			puts(py_float_repr(v, out, sizeof(out)) ? out : "ERROR");
		} else if (line[0] == 'R') {
			v = strtod_l(line + 2, NULL, c_loc);
			if (sscanf(line + 2, "%*s %d", &n) == 1 &&
			    py_round_repr(v, n, out, sizeof(out)))
				puts(out);
			else
				puts("ERROR");
		} else if (line[0] == 's') {
			for (i = 0; sscanf(line + 2 + 2 * i, "%2x", &byte) == 1 &&
				    i < sizeof(str) - 1; i++)
				str[i] = byte;
			str[i] = '\0';
			puts(py_json_escape(str, out, sizeof(out)) ? out : "ERROR");
		} else if (line[0] == 'D') {
			long long m;
			int e;

			if (sscanf(line + 2, "%lld %d", &m, &e) == 2 &&
			    py_decimal_repr(m, e, out, sizeof(out)))
				puts(out);
			else
				puts("ERROR");
		} else if (line[0] == 'T') {
			long long ns = strtoll(line + 2, NULL, 10);
			char *buf, *t;
			size_t len;
			struct jw w;
			FILE *f = open_memstream(&buf, &len);

			/* a base of 2^62 ns keeps both signs in range */
			obs_line_start(f, &w, "h", "n", "scalar",
				       (1ULL << 62) + ns, 1ULL << 62);
			jw_flush(&w);
			fclose(f);
			t = strstr(buf, "\"time\":");
			printf("%.*s\n", t ? (int)strcspn(t + 7, ",") : 5,
			       t ? t + 7 : "ERROR");
			free(buf);
		} else if (line[0] == 'j') {
			write_doc(line + 2);
		}
	}
	return 0;
}
