// SPDX-License-Identifier: MIT
/*
 * export.c - the rows as CSV and JSON, schema 1 (bench/README.md), checked
 * by tests/check-output.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <swait.h>

#include "bench.h"
#include "output.h"

static const char *const columns[] = {
	"scenario", "metric", "unit", "series", "mechanism", "placement",
	"regime", "reps", "samples", "median", "p90", "p99", "p99_9",
	"p99_99", "max", "mean", "ref1", "ratio1_median", "ratio1_min",
	"ratio1_max", "ref2", "ratio2_median", "ratio2_min", "ratio2_max",
	"noisy", "csw_per_op", "futex_wake_per_op", "futex_wait_per_op",
	"load", "cpu_ns_per_op",
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

/* Each row as strings; NULL for an unknown value. */
static void row_fields(const struct row *r, char v[NCOLS][64], bool str[NCOLS],
		       bool null[NCOLS])
{
	const double nums[] = {
		r->median, r->p90, r->p99, r->p999, r->p9999, r->max, r->mean,
	};
	size_t c = 0;

#define S(x) do { snprintf(v[c], 64, "%s", (x) ? (x) : ""); \
		  str[c] = true; null[c] = !(x); c++; } while (0)
#define N(x) do { double x_ = (x); snprintf(v[c], 64, "%.6g", x_); \
		  str[c] = false; null[c] = isnan(x_); c++; } while (0)
	S(r->scenario);
	S(r->metric);
	S(r->unit);
	S(r->series);
	S(r->mech);
	S(r->placement);
	S(r->regime);
	N((double)r->reps);
	N((double)r->samples);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		N(nums[i]);
	S(r->ref1);
	N(r->r1_med);
	N(r->r1_min);
	N(r->r1_max);
	S(r->ref2);
	N(r->r2_med);
	N(r->r2_min);
	N(r->r2_max);
	snprintf(v[c], 64, "%s", r->noisy ? "true" : "false");
	str[c] = false;
	null[c] = false;
	c++;
	N(r->csw);
	N(r->fwake);
	N(r->fwait);
	S(r->load);
	N(r->cpu);
#undef S
#undef N
}

void print_csv(FILE *f, struct row *r, size_t n)
{
	char v[NCOLS][64];
	bool str[NCOLS], null[NCOLS];

	fprintf(f, "# swait-bench %s\n# kernel: %s\n# cpu_model: %s\n"
		"# vcpus: %d\n# glibc: %s\n# policy: %s\n# placement: %s\n"
		"# load: %s\n# load_before: %s\n# load_after: %s\n"
		"# started: %s\n",
		SWAIT_BENCH_VERSION, hdr.kernel, hdr.cpu_model, hdr.vcpus,
		hdr.glibc, hdr.policy, placements_label(),
		load_mode_name(opt.load), hdr.load_before, hdr.load_after,
		hdr.started);
	for (size_t c = 0; c < NCOLS; c++)
		fprintf(f, "%s%s", c ? "," : "", columns[c]);
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		row_fields(&r[i], v, str, null);
		for (size_t c = 0; c < NCOLS; c++)
			fprintf(f, "%s%s", c ? "," : "", null[c] ? "" : v[c]);
		fputc('\n', f);
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void print_json(FILE *f, struct row *r, size_t n)
{
	char v[NCOLS][64];
	bool str[NCOLS], null[NCOLS];
	const char *why = NULL;

	fprintf(f, "{\n  \"tool\": \"swait-bench\",\n  \"version\": ");
	json_str(f, SWAIT_BENCH_VERSION);
	fprintf(f, ",\n  \"schema\": 1,\n  \"header\": {\n    \"kernel\": ");
	json_str(f, hdr.kernel);
	fprintf(f, ",\n    \"cpu_model\": ");
	json_str(f, hdr.cpu_model);
	fprintf(f, ",\n    \"vcpus\": %d,\n    \"glibc\": ", hdr.vcpus);
	json_str(f, hdr.glibc);
	fprintf(f, ",\n    \"policy\": ");
	json_str(f, hdr.policy);
	fprintf(f, ",\n    \"placement\": ");
	json_str(f, placements_label());
	fprintf(f, ",\n    \"load\": ");
	json_str(f, load_mode_name(opt.load));
	fprintf(f, ",\n    \"cpus\": [%d, %d],\n    \"reps\": %d,\n"
		"    \"load_before\": ", opt.cpu_a, opt.cpu_b, opt.reps);
	json_str(f, hdr.load_before);
	fprintf(f, ",\n    \"load_after\": ");
	json_str(f, hdr.load_after);
	fprintf(f, ",\n    \"started\": ");
	json_str(f, hdr.started);
	fprintf(f, ",\n    \"futex_counts\": ");
	json_str(f, opt.count_futex && futex_tracepoint_available(&why) ?
		 "tracepoint" : "own-wrappers");
	fprintf(f, "\n  },\n  \"results\": [");
	for (size_t i = 0; i < n; i++) {
		row_fields(&r[i], v, str, null);
		fprintf(f, "%s\n    {", i ? "," : "");
		for (size_t c = 0; c < NCOLS; c++) {
			fprintf(f, "%s\"%s\": ", c ? ", " : "", columns[c]);
			if (null[c])
				fputs("null", f);
			else if (str[c])
				json_str(f, v[c]);
			else
				fputs(v[c], f);
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ]\n}\n");
}
