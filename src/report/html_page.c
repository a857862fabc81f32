/*
 * html_page.c - the page around an HTML report: one self-contained document with its
 * CSS inline and no script. A Content-Security-Policy meta tag forbids scripts,
 * fetches, images, frames and forms, so even text that escaped escaping could not
 * run or call home; escaping (escape.c) is what keeps it text in the first place.
 *
 * Layout: one column up to 1120 px; tiles and charts in grids that fold to one
 * column on a phone; a chart is never drawn wider than its 560-unit viewBox
 * (chart_svg.c), so its text keeps one size whether it shares a row or not. Tables
 * fit the column: headers and text cells wrap (text breaks inside a word only when
 * it must), numbers do not; what still cannot fit (a phone) scrolls inside its own
 * box. Print hides the navigation, keeps each chart on one page and sets tables
 * smaller, so they fit an A4 page.
 */
#include <string.h>

#include "cb_version.h"
#include "report_internal.h"

/* One string per rule group (ISO C caps a literal's length). */
static const char *const CSS[] = {
    ":root{--fg:#1d1d1f;--mute:#5f6368;--line:#dadce0;--bg:#fff;--soft:#f6f8fa;",
    "--good:#1b7f3b;--bad:#c62828;--warn:#a15c00}",
    "*{box-sizing:border-box}",
    "body{margin:0;background:var(--bg);color:var(--fg);",
    "font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}",
    "main{max-width:1120px;margin:0 auto;padding:16px 20px 40px}",
    "h1{font-size:26px;margin:8px 0 4px}h2{font-size:21px;margin:34px 0 10px;padding-top:8px;",
    "border-top:1px solid var(--line)}h3{font-size:17px;margin:22px 0 8px}",
    ".inputs{color:var(--mute);margin:0 0 8px;word-break:break-all}",
    "nav{display:flex;flex-wrap:wrap;gap:6px 14px;font-size:14px;margin:8px 0 0}",
    "nav a{color:#1a5fb4;text-decoration:none}",
    ".para{margin:6px 0}",
    ".callout{margin:8px 0;padding:8px 12px;border-left:4px solid var(--warn);background:#fff7e6}",
    ".callout.t-bad{border-color:var(--bad);background:#fdecea}",
    ".t-good{color:var(--good)}.t-bad{color:var(--bad)}.t-warn{color:var(--warn)}",
    ".t-muted{color:var(--mute)}",
    ".tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px;",
    "margin:10px 0}",
    ".tile{border:1px solid var(--line);border-radius:8px;padding:9px 12px;background:var(--soft)}",
    ".tile .tk{font-size:12px;color:var(--mute);text-transform:uppercase;letter-spacing:.03em}",
    ".tile .tv{font-size:20px;font-weight:600;font-variant-numeric:tabular-nums;color:var(--fg);",
    "overflow-wrap:anywhere}",
    ".tile.t-good .tv{color:var(--good)}.tile.t-bad .tv{color:var(--bad)}",
    ".tile.t-warn .tv{color:var(--warn)}.tile .ts{font-size:12px;color:var(--mute)}",
    ".tw{overflow-x:auto;margin:8px 0 14px;max-width:100%}",
    "table{border-collapse:collapse;font-size:13.5px;font-variant-numeric:tabular-nums}",
    "th,td{padding:4px 7px;border-bottom:1px solid var(--line);vertical-align:top}",
    "th{background:var(--soft);font-weight:600}",
    "td.r,th.r{text-align:right}td.r{white-space:nowrap}td.l,th.l{text-align:left}",
    "td.l{overflow-wrap:anywhere}",
    "tbody tr:nth-child(even){background:#fafbfc}",
    ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,440px),1fr));",
    "gap:14px 22px;margin:8px 0}",
    "figure.chart{margin:0;min-width:0;max-width:560px}",
    "figure.chart figcaption{font-weight:600;font-size:14px;margin:0 0 2px}",
    "svg.plot{width:100%;height:auto;display:block}",
    ".plot text{font:12px system-ui,sans-serif;fill:#3c4043}.plot .axl{font-size:13px;fill:#202124}",
    ".plot .mkl{font-size:11px;fill:#202124;paint-order:stroke;stroke:#fff;stroke-width:3px}",
    ".plot .bandl{font-size:11px;fill:var(--mute)}.plot .empty{font-size:15px;fill:var(--mute)}",
    ".plot .gl{stroke:#ececec;fill:none}.plot .axis{stroke:#5f6368;fill:none}",
    ".ln{fill:none;stroke:var(--c);stroke-width:2;stroke-linejoin:round;stroke-linecap:round}",
    ".ln.x{stroke-width:1.6}.dash{stroke-dasharray:6 4}",
    ".pt,.bar{fill:var(--c);stroke:none}.bar{fill-opacity:.8;stroke:#fff;stroke-width:.6}",
    ".c0{--c:#1f77b4}.c1{--c:#ff7f0e}.c2{--c:#2ca02c}.c3{--c:#9467bd}.c4{--c:#8c564b}",
    ".c5{--c:#e377c2}.c6{--c:#7f7f7f}.c7{--c:#bcbd22}.c8{--c:#17becf}.c9{--c:#393b79}",
    ".c10{--c:#d62728}",
    ".mk{fill:none;stroke-width:1.5;stroke-dasharray:5 3;stroke:#5f6368}",
    ".mk.t-bad{stroke:var(--bad)}.mk.t-good{stroke:var(--good)}.mk.t-warn{stroke:var(--warn)}",
    ".band{fill:#1f77b4;fill-opacity:.07}.band.t-good{fill:#2ca02c;fill-opacity:.09}",
    ".band.t-warn{fill:#ff9f1c;fill-opacity:.16}.band.t-muted{fill:#9aa0a6;fill-opacity:.12}",
    ".legend{display:flex;flex-wrap:wrap;gap:2px 14px;font-size:13px;margin:2px 0 0 10px}",
    ".key{white-space:nowrap}.sw{width:18px;height:10px;margin-right:5px;vertical-align:middle}",
    ".note{font-size:12px;color:var(--mute);margin:2px 0 0 10px}",
    ".sample{margin:6px 0 14px}.sample .sk{font-size:13px;color:var(--mute)}",
    "pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px 10px;",
    "margin:2px 0;white-space:pre-wrap;overflow-wrap:anywhere;font-size:13px;max-height:22em;",
    "overflow:auto}",
    "details{margin:8px 0}summary{cursor:pointer;color:#1a5fb4}",
    "footer{margin-top:40px;color:var(--mute);font-size:12px}",
    "@media (max-width:600px){main{padding:10px 10px 30px}body{font-size:14px}",
    ".tiles{grid-template-columns:repeat(2,minmax(0,1fr))}.tile .tv{font-size:19px}",
    "h1{font-size:22px}}",
    "@media print{nav{display:none}main{max-width:none;padding:0}body{font-size:11pt}",
    "figure.chart,table,.tile,.sample{break-inside:avoid}h2{break-after:avoid}",
    "pre{max-height:none}.tw{overflow:visible}table{font-size:8.5pt}th,td{padding:2px 4px}}"};

void cb__rep_html_page_begin(cb__rep_doc *d, const char *title) {
  cb_buf *o = d->out;
  cb_buf_append_str(o,
                    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                    "style-src 'unsafe-inline'; img-src 'none'; script-src 'none'; "
                    "form-action 'none'; base-uri 'none'\">\n"
                    "<meta name=\"generator\" content=\"calibench ");
  cb__rep_html_escape(o, CB_VERSION_STRING, strlen(CB_VERSION_STRING));
  cb_buf_append_str(o, "\">\n<title>");
  cb__rep_html_escape(o, title, strlen(title));
  cb_buf_append_str(o, "</title>\n<style>");
  for (size_t i = 0; i < sizeof CSS / sizeof CSS[0]; i++) cb_buf_append_str(o, CSS[i]);
  cb_buf_append_str(o, "</style>\n</head>\n<body>\n<main>\n");
}

void cb__rep_html_page_end(cb__rep_doc *d) {
  cb_buf_append_str(d->out, "<footer>Generated by calibench " CB_VERSION_STRING " (commit "
                            CB_GIT_COMMIT "). Self-contained: no script, no network.</footer>\n"
                            "</main>\n</body>\n</html>\n");
}
