/*
 * judge_prompt.c - the judge's messages. The defaults are MT-Bench's judge prompts,
 * from FastChat's fastchat/llm_judge/data/judge_prompts.jsonl (lm-sys/FastChat, commit
 * 0e6e7fdc78bf64aceea1508694ce4e6472810b8b): "single-v1" and, with a reference,
 * "single-math-v1" for one answer; "pair-v2" and "pair-math-v1" for two. Their
 * instruction paragraph is cut at the criteria and the scale so a rubric can change
 * those; with the defaults the messages are MT-Bench's, character for character
 * (tests/unit/test_eval_judge.c).
 */
#include <stdio.h>
#include <string.h>

#include "calibench/eval_judge.h"

static const char DEFAULT_CRITERIA[] =
    "the helpfulness, relevance, accuracy, depth, creativity, and level of detail";
static const char DEFAULT_CRITERIA_REF[] = "correctness and helpfulness";

static const char SINGLE_INSTRUCTIONS[] =
    "Please act as an impartial judge and evaluate the quality of the response provided by "
    "an AI assistant to the user question displayed below. Your evaluation should consider "
    "factors such as {criteria} of the response. Begin your evaluation by providing a short "
    "explanation. Be as objective as possible. After providing your explanation, you must "
    "rate the response on a scale of {scale_min} to {scale_max} by strictly following this "
    "format: \"[[rating]]\", for example: \"Rating: [[5]]\".";
static const char SINGLE_REF_INSTRUCTIONS[] =
    "Please act as an impartial judge and evaluate the quality of the response provided by "
    "an AI assistant to the user question displayed below. Your evaluation should consider "
    "{criteria}. You will be given a reference answer and the assistant's answer. Begin your "
    "evaluation by comparing the assistant's answer with the reference answer. Identify and "
    "correct any mistakes. Be as objective as possible. After providing your explanation, "
    "you must rate the response on a scale of {scale_min} to {scale_max} by strictly "
    "following this format: \"[[rating]]\", for example: \"Rating: [[5]]\".";
static const char PAIR_TAIL[] =
    "Avoid any positional biases and ensure that the order in which the responses were "
    "presented does not influence your decision. Do not allow the length of the responses to "
    "influence your evaluation. Do not favor certain names of the assistants. Be as objective "
    "as possible. After providing your explanation, output your final verdict by strictly "
    "following this format: \"[[A]]\" if assistant A is better, \"[[B]]\" if assistant B is "
    "better, and \"[[C]]\" for a tie.";
static const char PAIR_INSTRUCTIONS[] =
    "Please act as an impartial judge and evaluate the quality of the responses provided by "
    "two AI assistants to the user question displayed below. You should choose the assistant "
    "that follows the user's instructions and answers the user's question better. Your "
    "evaluation should consider factors such as {criteria} of their responses. Begin your "
    "evaluation by comparing the two responses and provide a short explanation. ";
static const char PAIR_REF_INSTRUCTIONS[] =
    "Please act as an impartial judge and evaluate the quality of the responses provided by "
    "two AI assistants to the user question displayed below. Your evaluation should consider "
    "{criteria}. You will be given a reference answer, assistant A's answer, and assistant "
    "B's answer. Your job is to evaluate which assistant's answer is better. Begin your "
    "evaluation by comparing both assistants' answers with the reference answer. Identify "
    "and correct any mistakes. ";

static const char SINGLE_TEMPLATE[] =
    "[Instruction]\n{instructions}\n\n[Question]\n{question}\n\n"
    "[The Start of Assistant's Answer]\n{answer}\n[The End of Assistant's Answer]";
static const char SINGLE_REF_TEMPLATE[] =
    "[Instruction]\n{instructions}\n\n[Question]\n{question}\n\n"
    "[The Start of Reference Answer]\n{reference}\n[The End of Reference Answer]\n\n"
    "[The Start of Assistant's Answer]\n{answer}\n[The End of Assistant's Answer]";
static const char PAIR_TEMPLATE[] =
    "[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]";
static const char PAIR_REF_TEMPLATE[] =
    "[User Question]\n{question}\n\n"
    "[The Start of Reference Answer]\n{reference}\n[The End of Reference Answer]\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]";

typedef struct field {
  const char *name;
  const char *value; /* NULL: the placeholder stays as written */
} field;

/* Copy tmpl to out with each {name} of fields replaced, in one pass: a value's own
 * braces are never read as placeholders. */
static void fill(const char *tmpl, const field *fields, size_t n, cb_buf *out) {
  for (const char *p = tmpl; *p;) {
    if (*p == '{') {
      size_t i = 0;
      for (; i < n; i++) {
        size_t len = strlen(fields[i].name);
        if (fields[i].value && !strncmp(p + 1, fields[i].name, len) && p[1 + len] == '}') break;
      }
      if (i < n) {
        cb_buf_append_str(out, fields[i].value);
        p += strlen(fields[i].name) + 2;
        continue;
      }
    }
    const char *next = strchr(p + 1, '{');
    size_t len = next ? (size_t)(next - p) : strlen(p);
    cb_buf_append(out, p, len);
    p += len;
  }
}

/* The instruction paragraph with the criteria and scale put in. */
static void instructions(const cb_judge_rubric *r, int pair, cb_buf *out) {
  int ref = r->show_reference;
  char lo[32], hi[32];
  snprintf(lo, sizeof lo, "%.0f", r->scale_min);
  snprintf(hi, sizeof hi, "%.0f", r->scale_max);
  const field f[] = {{"criteria", r->criteria ? r->criteria : ref ? DEFAULT_CRITERIA_REF : DEFAULT_CRITERIA},
                     {"scale_min", lo},
                     {"scale_max", hi}};
  if (r->instructions) {
    fill(r->instructions, f, 3, out);
  } else if (pair) {
    fill(ref ? PAIR_REF_INSTRUCTIONS : PAIR_INSTRUCTIONS, f, 3, out);
    cb_buf_append_str(out, PAIR_TAIL);
  } else {
    fill(ref ? SINGLE_REF_INSTRUCTIONS : SINGLE_INSTRUCTIONS, f, 3, out);
  }
}

void cb_judge_system(const cb_judge_rubric *r, int pair, cb_buf *out) {
  if (r->system) cb_buf_append_str(out, r->system);
  else if (pair) instructions(r, 1, out);
  else cb_buf_append_str(out, "You are a helpful assistant.");
}

static void prompt(const cb_judge_rubric *r, int pair, const char *tmpl, field *f, size_t n,
                   cb_buf *out) {
  cb_buf ins;
  cb_buf_init(&ins, 0);
  instructions(r, pair, &ins);
  cb_buf_append_char(&ins, '\0');
  char lo[32], hi[32];
  snprintf(lo, sizeof lo, "%.0f", r->scale_min);
  snprintf(hi, sizeof hi, "%.0f", r->scale_max);
  f[n++] = (field){"instructions", ins.data};
  f[n++] = (field){"criteria", r->criteria ? r->criteria : r->show_reference ? DEFAULT_CRITERIA_REF : DEFAULT_CRITERIA};
  f[n++] = (field){"scale_min", lo};
  f[n++] = (field){"scale_max", hi};
  fill(tmpl, f, n, out);
  cb_buf_free(&ins);
}

void cb_judge_prompt_single(const cb_judge_rubric *r, const char *question, const char *answer,
                            const char *reference, cb_buf *out) {
  const char *ref = r->show_reference ? (reference ? reference : "") : NULL;
  field f[8] = {{"question", question}, {"answer", answer}, {"reference", ref}};
  const char *tmpl = r->single_template ? r->single_template
                     : r->show_reference ? SINGLE_REF_TEMPLATE
                                         : SINGLE_TEMPLATE;
  prompt(r, 0, tmpl, f, 3, out);
}

void cb_judge_prompt_pair(const cb_judge_rubric *r, const char *question, const char *answer_a,
                          const char *answer_b, const char *reference, cb_buf *out) {
  const char *ref = r->show_reference ? (reference ? reference : "") : NULL;
  field f[8] = {{"question", question}, {"answer_a", answer_a}, {"answer_b", answer_b},
                {"reference", ref}};
  const char *tmpl = r->pair_template ? r->pair_template
                     : r->show_reference ? PAIR_REF_TEMPLATE
                                         : PAIR_TEMPLATE;
  prompt(r, 1, tmpl, f, 4, out);
}
