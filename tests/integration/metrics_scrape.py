#!/usr/bin/env python3
"""Scrape `calibench run --metrics-listen` while it runs, then check its last scrape
against the run's records.jsonl and summary.json (test_metrics_listen.sh).

usage: metrics_scrape.py URL OUT_DIR CONCURRENCY SLO_SPEC [queue]

With "queue" (an open loop capped by --max-concurrency), some scrape during the run
must show requests scheduled and not yet sent.

During the run every counter and histogram bucket must never fall, and requests in
flight stay within 0..CONCURRENCY. Once calibench_run_finished says 1 (the run has
ended; --metrics-linger keeps the listener up), the values must equal what the
records say exactly: counts, token sums, every histogram bucket, and the histogram
sums bit for bit (the same doubles added in the same order: completion order, send
order for the send lag). Only the Python standard library.
"""
import json
import math
import re
import sys
import time
import urllib.request

URL, OUT, CONCURRENCY, SLO_SPEC = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
QUEUE = sys.argv[5:] == ["queue"]

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def parse(text):
    """{(name, frozenset(labels)): value} of the exposition text."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            fail("not a sample line: %r" % line)
        labels = frozenset((k, v.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\"))
                           for k, v in LABEL.findall(m.group(2) or ""))
        key = (m.group(1), labels)
        if key in out:
            fail("sample twice: %r" % line)
        out[key] = float(m.group(3))
    return out


def scrape():
    with urllib.request.urlopen(URL, timeout=5) as r:
        if r.status != 200:
            fail("GET %s: %d" % (URL, r.status))
        ctype = r.headers.get("Content-Type", "")
        if "version=0.0.4" not in ctype:
            fail("Content-Type %r" % ctype)
        return parse(r.read().decode("utf-8"))


def value(s, name, **labels):
    return s.get((name, frozenset(labels.items())), 0.0)


# ---- during the run ------------------------------------------------------------------

MONOTONIC = re.compile(r"_total$|_bucket$|_count$")
during, last, final, queued_seen = 0, None, None, 0
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    s = scrape()
    if last is not None:
        for key, v in last.items():
            if MONOTONIC.search(key[0]) and s.get(key, -1) < v:
                fail("%s%s fell from %g to %g" % (key[0], dict(key[1]), v, s.get(key, -1)))
    for (name, labels), v in s.items():
        if name == "calibench_requests_in_flight" and not 0 <= v <= CONCURRENCY:
            fail("in flight %g for %s, outside 0..%d" % (v, dict(labels), CONCURRENCY))
    total = sum(v for (n, _), v in s.items() if n == "calibench_requests_in_flight")
    if total > CONCURRENCY:
        fail("in flight %g in all, over %d" % (total, CONCURRENCY))
    due = sum(v for (n, _), v in s.items() if n == "calibench_requests_scheduled_total")
    sent = sum(v for (n, _), v in s.items() if n == "calibench_requests_sent_total")
    if sent > due:
        fail("%g sent but only %g scheduled" % (sent, due))
    queued_seen = max(queued_seen, due - sent)
    last = s
    if value(s, "calibench_run_finished") == 1:
        final = s
        break
    during += 1
    time.sleep(0.1)
if final is None:
    fail("the run did not finish within 120 s")
if during < 3:
    fail("only %d scrapes while the run was going: the test is too short to watch it" % during)
if QUEUE and not queued_seen:
    fail("no scrape saw a request scheduled and not yet sent")

# ---- the last scrape against the records ---------------------------------------------

records = [json.loads(line) for line in open(OUT + "/records.jsonl")]
summary = json.load(open(OUT + "/summary.json"))["summary"]
if not records:
    fail("no records")

# vLLM V1's bounds, as src/client/prom_write.c has them (vllm/v1/metrics/loggers.py)
TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
        10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
TPOT = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
        20.0, 40.0, 80.0]
REQUEST = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
           120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0]
LAG = [0.00005, 0.0001, 0.0002, 0.0003, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.005,
       0.0075, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0]


def ok(r):
    return r["error"] is None


def measured_ok(r):
    return ok(r) and not r["warmup"]


def ttft_ns(r):
    return float(r["first_content_ns"] - r["sent_ns"]) if r["first_content_ns"] else math.nan


def e2e_ns(r):
    return float(r["end_ns"] - r["sent_ns"])


def tpot_ns(r):
    out = r["output_tokens"] or 0
    if out <= 1 or not r["first_content_ns"]:
        return math.nan
    return (e2e_ns(r) - ttft_ns(r)) / float(out - 1)


def gaps_ns(r):
    c = r["chunk_ns"]
    return [float(c[i] - c[i - 1]) for i in range(1, len(c))]


def check_hist(name, cls, bounds, values):
    """values: seconds in the order observed."""
    total = 0.0
    for v in values:
        total += v
    for le in bounds + [math.inf]:
        want = sum(1 for v in values if v <= le)
        got = value(final, name + "_bucket", **{"class": cls, "le": "+Inf" if le == math.inf else "%g" % le})
        if got != want:
            fail("%s{class=%r,le=%g}: scraped %g, records say %d" % (name, cls, le, got, want))
    if value(final, name + "_count", **{"class": cls}) != len(values):
        fail("%s_count{class=%r}: %g, records say %d" % (name, cls, value(final, name + "_count", **{"class": cls}), len(values)))
    got = value(final, name + "_sum", **{"class": cls})
    if got != total:
        fail("%s_sum{class=%r}: %.17g, records say %.17g" % (name, cls, got, total))


classes = sorted({r["class"] for r in records})
errors_seen = set()
for cls in classes:
    rs = [r for r in records if r["class"] == cls]
    L = {"class": cls}
    for name, want in [
        ("calibench_requests_scheduled_total", len(rs)),  # the run went to its end
        ("calibench_requests_sent_total", len(rs)),
        ("calibench_requests_completed_total", sum(1 for r in rs if ok(r))),
        ("calibench_requests_in_flight", 0),
        ("calibench_request_retries_total", sum(r["retries"] for r in rs)),
        ("calibench_prompt_tokens_total", sum(r["prompt_tokens"] or 0 for r in rs if (r["prompt_tokens"] or 0) > 0)),
        ("calibench_output_tokens_total", sum(r["output_tokens"] or 0 for r in rs if (r["output_tokens"] or 0) > 0)),
    ]:
        if value(final, name, **L) != want:
            fail("%s{class=%r}: scraped %g, records say %d" % (name, cls, value(final, name, **L), want))
    by_error = {}
    for r in rs:
        if not ok(r):
            by_error[r["error"]["class"]] = by_error.get(r["error"]["class"], 0) + 1
    for e, n in by_error.items():
        errors_seen.add(e)
        if value(final, "calibench_requests_failed_total", error=e, **L) != n:
            fail("failed{class=%r,error=%r}: records say %d" % (cls, e, n))
    scraped_errors = {dict(k[1])["error"] for k in final if k[0] == "calibench_requests_failed_total" and dict(k[1])["class"] == cls}
    if scraped_errors != set(by_error):
        fail("error classes of %r: scraped %s, records %s" % (cls, scraped_errors, set(by_error)))
    m = [r for r in rs if measured_ok(r)]
    # the lag is observed at the send: its sum adds in send order, not records.jsonl's
    # completion order (one ulp apart otherwise); sends go out in time, ties by index
    sends = sorted(rs, key=lambda r: (r["sent_ns"], r["index"]))
    check_hist("calibench_send_lag_seconds", cls, LAG, [float(r["sent_ns"] - r["scheduled_ns"]) / 1e9 for r in sends])
    check_hist("calibench_time_to_first_token_seconds", cls, TTFT, [ttft_ns(r) / 1e9 for r in m if r["first_content_ns"]])
    check_hist("calibench_time_per_output_token_seconds", cls, TPOT, [t / 1e9 for t in map(tpot_ns, m) if not math.isnan(t)])
    check_hist("calibench_inter_token_latency_seconds", cls, TPOT, [g / 1e9 for r in m for g in gaps_ns(r)])
    check_hist("calibench_e2e_request_latency_seconds", cls, REQUEST, [e2e_ns(r) / 1e9 for r in m])
scraped_classes = sorted({dict(k[1])["class"] for k in final if k[0] == "calibench_requests_sent_total"})
if scraped_classes != classes:
    fail("classes: scraped %s, records %s" % (scraped_classes, classes))

# SLOs: the scrape's tally against summary.json's (the same records, judged by summary.c)
slos = summary["slos"]
if len(slos) != len(SLO_SPEC.split(",")):
    fail("summary.json has %d SLOs, the test gave %s" % (len(slos), SLO_SPEC))
for s in slos:
    name = "%s<=%gs" % (s["metric"], s["bound_ms"] / 1e3)
    n = value(final, "calibench_slo_requests_total", slo=name)
    met = value(final, "calibench_slo_met_total", slo=name)
    if (n, met) != (s["n"], s["met"]):
        fail("SLO %s: scraped %g met of %g, summary.json %d of %d" % (name, met, n, s["met"], s["n"]))
    att = value(final, "calibench_slo_attainment", slo=name)
    if att != s["met"] / s["n"]:
        fail("SLO %s attainment %.17g, summary.json %d/%d" % (name, att, s["met"], s["n"]))
    if s["met"] == s["n"] or s["met"] == 0:
        print("note: SLO %s met by all or none (%d of %d)" % (name, s["met"], s["n"]))

lags = [r["sent_ns"] - r["scheduled_ns"] for r in records]
print("ok - %d scrapes during the run (at most %d queued), the last one equals %d records of %s "
      "(classes %s, errors %s, lag max %.3f ms)"
      % (during, queued_seen, len(records), OUT, classes, sorted(errors_seen), max(lags) / 1e6))
