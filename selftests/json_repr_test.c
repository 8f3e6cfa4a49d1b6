// SPDX-License-Identifier: GPL-2.0
/*
 * Driver for json_repr_test.py: writes what tools/json.c makes of each
 * input line, so that Python can compare it with its own json.dumps().
 *   f VALUE        py_float_repr()
 *   r VALUE N      py_round() then py_float_repr()
 *   s HEX          py_json_escape() of the bytes HEX encodes
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

int main(void)
{
	char line[4096], out[8192], str[2048];
	unsigned int i, byte;
	double v;
	int n;

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == 'f' || line[0] == 'r') {
			v = strtod(line + 2, NULL);
			if (line[0] == 'r' && sscanf(line + 2, "%*s %d", &n) == 1)
				v = py_round(v, n);
			puts(py_float_repr(v, out, sizeof(out)) ? out : "ERROR");
		} else if (line[0] == 's') {
			for (i = 0; sscanf(line + 2 + 2 * i, "%2x", &byte) == 1 &&
				    i < sizeof(str) - 1; i++)
				str[i] = byte;
			str[i] = '\0';
			puts(py_json_escape(str, out, sizeof(out)) ? out : "ERROR");
		}
	}
	return 0;
}
