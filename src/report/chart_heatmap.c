/*
 * chart_heatmap.c - a grid of shares in [0, 1] (report_internal.h, cb__rep_heatmap):
 * in HTML an inline SVG of coloured cells, each with its value, red at 0 through amber
 * to green at 1 (colours as fill attributes: no script, no style sheet needed); in the
 * other formats a table with the same numbers, toned. Every label is escaped.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

#define CELL_W 64.0
#define CELL_H 26.0
#define LEFT 70.0
#define TOP 8.0
#define BOTTOM 40.0

/* Red (0) - amber (0.5) - green (1). */
static void colour(double v, int *r, int *g, int *b) {
  v = v < 0 ? 0 : v > 1 ? 1 : v;
  if (v < 0.5) {
    double t = v / 0.5;
    *r = 214, *g = (int)(69 + t * (170 - 69)), *b = (int)(65 - t * 20);
  } else {
    double t = (v - 0.5) / 0.5;
    *r = (int)(214 - t * (214 - 46)), *g = (int)(170 - t * (170 - 158)), *b = (int)(45 + t * 40);
  }
}

static void svg_text(cb_buf *out, double x, double y, const char *anchor, const char *cls,
                     const char *s) {
  cb_buf_appendf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">", x, y, anchor, cls);
  cb__rep_html_escape(out, s, strlen(s));
  cb_buf_append_str(out, "</text>");
}

static void heatmap_svg(const cb__rep_heatmap *h, cb_buf *out) {
  double w = LEFT + CELL_W * (double)h->nx + 10, ht = TOP + CELL_H * (double)h->ny + BOTTOM;
  cb_buf_append_str(out, "<figure class=\"chart\" data-chart=\"");
  cb__rep_html_escape(out, h->id, strlen(h->id));
  cb_buf_appendf(out, "\" data-points=\"%zu\"><figcaption>", h->nx * h->ny);
  cb__rep_html_escape(out, h->title, strlen(h->title));
  cb_buf_appendf(out, "</figcaption><svg class=\"plot\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", w, ht);
  cb__rep_html_escape(out, h->title, strlen(h->title));
  cb_buf_append_str(out, "\">");
  for (size_t y = 0; y < h->ny; y++) {
    double cy = TOP + CELL_H * (double)y;
    svg_text(out, LEFT - 6, cy + CELL_H / 2 + 4, "end", "tick", h->y_names[y]);
    for (size_t x = 0; x < h->nx; x++) {
      double v = h->values[y * h->nx + x], cx = LEFT + CELL_W * (double)x;
      char label[16];
      if (isfinite(v)) {
        int r, g, b;
        colour(v, &r, &g, &b);
        cb_buf_appendf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                            "fill=\"rgb(%d,%d,%d)\"/>", cx + 1, cy + 1, CELL_W - 2, CELL_H - 2, r, g, b);
        snprintf(label, sizeof label, "%.2f", v);
      } else {
        cb_buf_appendf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                            "fill=\"none\" class=\"axis\"/>", cx + 1, cy + 1, CELL_W - 2, CELL_H - 2);
        snprintf(label, sizeof label, "-");
      }
      svg_text(out, cx + CELL_W / 2, cy + CELL_H / 2 + 4, "middle", "tick", label);
    }
  }
  for (size_t x = 0; x < h->nx; x++)
    svg_text(out, LEFT + CELL_W * ((double)x + 0.5), TOP + CELL_H * (double)h->ny + 14, "middle",
             "tick", h->x_names[x]);
  svg_text(out, LEFT + CELL_W * (double)h->nx / 2, ht - 6, "middle", "label", h->x_label);
  svg_text(out, 4, TOP + 10, "start", "label", h->y_label);
  cb_buf_append_str(out, "</svg>");
  if (h->note[0]) {
    cb_buf_append_str(out, "<p class=\"note\">");
    cb__rep_html_escape(out, h->note, strlen(h->note));
    cb_buf_append_str(out, "</p>");
  }
  cb_buf_append_str(out, "</figure>\n");
}

void cb__rep_doc_heatmap(cb__rep_doc *d, const cb__rep_heatmap *h) {
  if (d->fmt == CB__REP_FMT_HTML) {
    heatmap_svg(h, d->out);
    return;
  }
  char align[64] = "l";
  for (size_t x = 0; x < h->nx && x < sizeof align - 2; x++) strcat(align, "r");
  cb__rep_table t;
  cb__rep_table_init(&t, align);
  cb__rep_table_add(&t, 0, "%s \\ %s", h->y_label, h->x_label);
  for (size_t x = 0; x < h->nx && x < sizeof align - 2; x++) cb__rep_table_add(&t, 0, "%s", h->x_names[x]);
  for (size_t y = 0; y < h->ny; y++) {
    cb__rep_table_add(&t, 0, "%s", h->y_names[y]);
    for (size_t x = 0; x < h->nx && x < sizeof align - 2; x++) {
      double v = h->values[y * h->nx + x];
      cb__rep_tone tone = !isfinite(v) ? CB__REP_TONE_MUTED : v >= 0.9 ? CB__REP_TONE_GOOD
                          : v >= 0.5 ? CB__REP_TONE_WARN : CB__REP_TONE_BAD;
      if (isfinite(v)) cb__rep_table_add(&t, tone, "%.2f", v);
      else cb__rep_table_add(&t, tone, "-");
    }
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}
