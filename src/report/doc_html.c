/*
 * doc_html.c - the HTML rendering of document blocks: headings with anchors,
 * paragraphs (a toned one is a call-out), headline tiles and tables wrapped so they
 * scroll sideways on a phone instead of widening the page. Every string is escaped.
 */
#include <string.h>

#include "report_internal.h"

static const char *tone_class(cb__rep_tone t) {
  switch (t) {
    case CB__REP_TONE_GOOD: return " t-good";
    case CB__REP_TONE_BAD: return " t-bad";
    case CB__REP_TONE_WARN: return " t-warn";
    case CB__REP_TONE_MUTED: return " t-muted";
    default: return "";
  }
}

static void esc(cb__rep_doc *d, const char *s) { cb__rep_html_escape(d->out, s, strlen(s)); }

void cb__rep_html_heading(cb__rep_doc *d, int level, const char *anchor, const char *text) {
  if (level < 1) level = 1;
  if (level > 4) level = 4;
  cb_buf_appendf(d->out, "<h%d", level);
  if (anchor) {
    cb_buf_append_str(d->out, " id=\"");
    esc(d, anchor);
    cb_buf_append_char(d->out, '"');
  }
  cb_buf_append_char(d->out, '>');
  esc(d, text);
  cb_buf_appendf(d->out, "</h%d>\n", level);
}

void cb__rep_html_para(cb__rep_doc *d, cb__rep_tone tone, const char *text) {
  if (tone == CB__REP_TONE_WARN || tone == CB__REP_TONE_BAD)
    cb_buf_appendf(d->out, "<p class=\"callout%s\">", tone_class(tone));
  else
    cb_buf_appendf(d->out, "<p class=\"para%s\">", tone_class(tone));
  esc(d, text);
  cb_buf_append_str(d->out, "</p>\n");
}

void cb__rep_html_tiles(cb__rep_doc *d, const cb__rep_tile *tiles, size_t n) {
  cb_buf_append_str(d->out, "<div class=\"tiles\">");
  for (size_t i = 0; i < n; i++) {
    cb_buf_appendf(d->out, "<div class=\"tile%s\"><div class=\"tk\">", tone_class(tiles[i].tone));
    esc(d, tiles[i].label);
    cb_buf_append_str(d->out, "</div><div class=\"tv\">");
    esc(d, tiles[i].value);
    cb_buf_append_str(d->out, "</div>");
    if (tiles[i].sub[0]) {
      cb_buf_append_str(d->out, "<div class=\"ts\">");
      esc(d, tiles[i].sub);
      cb_buf_append_str(d->out, "</div>");
    }
    cb_buf_append_str(d->out, "</div>");
  }
  cb_buf_append_str(d->out, "</div>\n");
}

void cb__rep_html_table(cb__rep_doc *d, const cb__rep_table *t) {
  size_t rows = cb__rep_table_rows(t);
  if (!rows) return;
  cb_buf_append_str(d->out, "<div class=\"tw\"><table>");
  for (size_t r = 0; r < rows; r++) {
    cb_buf_append_str(d->out, r == 0 ? "<thead><tr>" : "<tr>");
    for (size_t c = 0; c < t->cols; c++) {
      size_t i = r * t->cols + c;
      const char *tag = r == 0 ? "th" : "td";
      cb_buf_appendf(d->out, "<%s class=\"%c%s\">", tag, t->align[c],
                     i < t->n ? tone_class(t->cells[i].tone) : "");
      if (i < t->n) esc(d, t->cells[i].text);
      cb_buf_appendf(d->out, "</%s>", tag);
    }
    cb_buf_append_str(d->out, r == 0 ? "</tr></thead><tbody>" : "</tr>");
  }
  cb_buf_append_str(d->out, "</tbody></table></div>\n");
}
