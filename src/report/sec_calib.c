/*
 * sec_calib.c - the results of `calibench calibrate ... --out FILE` (docs/calibrate.md,
 * docs/calibrate-perf.md), one part per file in command-line order: each kind is
 * drawn by calib_data.c (drift, expect, cost) or calib_perf.c (roofline, fit, perf,
 * sla).
 */
#include "report_internal.h"

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  return cb__rep_has_file(r, CB__REP_FILE_DRIFT, CB__REP_FILE_SLA);
}

static void (*const draw[])(const cb__rep_file *, cb__rep_doc *) = {
    [CB__REP_FILE_DRIFT] = cb__rep_calib_drift,       [CB__REP_FILE_EXPECT] = cb__rep_calib_expect,
    [CB__REP_FILE_COST] = cb__rep_calib_cost,         [CB__REP_FILE_ROOFLINE] = cb__rep_calib_roofline,
    [CB__REP_FILE_FIT] = cb__rep_calib_fit,           [CB__REP_FILE_PERF] = cb__rep_calib_perf,
    [CB__REP_FILE_SLA] = cb__rep_calib_sla,
};

static void render(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < r->n_files; i++) {
    const cb__rep_file *f = &r->files[i];
    if (f->kind > CB__REP_FILE_SLA) continue;
    cb__rep_doc_heading(d, 3, NULL, "%s: %s", f->path, cb__rep_file_kind_name(f->kind));
    draw[f->kind](f, d);
  }
}

const cb__rep_section cb__rep_sec_calib = {
    .id = "calibration", .title = "Calibration", .applies = applies, .render = render};
