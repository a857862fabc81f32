// calibench's image requests against the official openai SDK (npm "openai", pinned):
// the image_url parts of a body calibench sent are checked against the SDK's own
// ChatCompletionContentPartImage definition (read from its .d.ts), then sent through
// the SDK to `sim serve` (qwen2-vl-7b: accepted, vision tokens in usage) and to a
// text-only model (the SDK's BadRequestError). Usage:
//   node sim_openai_images.mjs BODY_FILE VLM_URL TEXT_URL SDK_DIR TOKENS_PER_IMAGE
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { check } from "./harness.mjs";
import OpenAI from "openai";

const [bodyFile, vlmUrl, textUrl, sdkDir, perImage] = process.argv.slice(2);
const body = JSON.parse(readFileSync(bodyFile, "utf8"));

// The interface as the SDK declares it: its fields, their types, which are optional.
function sdkImagePart() {
  const dts = readFileSync(`${sdkDir}/resources/chat/completions/completions.d.ts`, "utf8");
  const outer = dts.match(/export interface ChatCompletionContentPartImage \{([\s\S]*?)\n\}/);
  const inner = dts.match(/namespace ChatCompletionContentPartImage \{\s*interface ImageURL \{([\s\S]*?)\n    \}/);
  assert.ok(outer && inner, "ChatCompletionContentPartImage not found in the SDK's types");
  const fields = (src) => Object.fromEntries(
    [...src.replace(/\/\*\*[\s\S]*?\*\//g, "").matchAll(/^\s*(\w+)(\??):\s*([^;]+);/gm)]
      .map((m) => [m[1], { optional: m[2] === "?", type: m[3].trim() }]));
  return { outer: fields(outer[1]), inner: fields(inner[1]) };
}

function conforms(value, fields) {
  for (const [k, f] of Object.entries(fields))
    if (!f.optional) assert.ok(k in value, `missing required field '${k}'`);
  for (const [k, v] of Object.entries(value)) {
    assert.ok(k in fields, `field '${k}' is not in the SDK's type`);
    const t = fields[k].type;
    if (t === "string") assert.equal(typeof v, "string", `${k} must be a string`);
    else if (/^'[^']*'( \| '[^']*')*$/.test(t))
      assert.ok(t.split(" | ").map((s) => s.slice(1, -1)).includes(v), `${k}: ${v} not in ${t}`);
  }
}

const parts = body.messages[0].content.filter((p) => p.type === "image_url");
const nImages = parts.length;

await check("calibench's image parts match the SDK's ChatCompletionContentPartImage", async () => {
  const sdk = sdkImagePart();
  assert.equal(sdk.outer.type.type, "'image_url'");
  assert.equal(sdk.outer.image_url.type, "ChatCompletionContentPartImage.ImageURL");
  assert.ok(nImages >= 1);
  for (const p of parts) {
    conforms({ type: p.type }, { type: sdk.outer.type });
    conforms(p.image_url, sdk.inner);
    assert.match(p.image_url.url, /^data:image\/(png|jpeg);base64,[A-Za-z0-9+/]+=*$/);
  }
});

await check("the SDK sends them to sim serve's VLM: usage counts the vision tokens", async () => {
  const client = new OpenAI({ baseURL: `${vlmUrl}/v1`, apiKey: "unused", maxRetries: 0 });
  const withImages = await client.chat.completions.create({
    model: "qwen2-vl-7b", messages: body.messages, max_tokens: 1 });
  const textOnly = await client.chat.completions.create({
    model: "qwen2-vl-7b",
    messages: [{ role: "user", content: [body.messages[0].content[0]] }], max_tokens: 1 });
  // The text is tokenized in two pieces around the images: the split may cost one.
  const extra = withImages.usage.prompt_tokens - textOnly.usage.prompt_tokens;
  const want = nImages * Number(perImage);
  assert.ok(extra === want || extra === want + 1, `vision tokens: ${extra}, want ${want}`);
});

await check("a text-only model refuses them: the SDK's BadRequestError", async () => {
  const client = new OpenAI({ baseURL: `${textUrl}/v1`, apiKey: "unused", maxRetries: 0 });
  await assert.rejects(
    client.chat.completions.create({ model: "llama-3.1-8b", messages: body.messages, max_tokens: 1 }),
    (e) => e instanceof OpenAI.BadRequestError && /does not accept images/.test(e.message));
});
